"""Votes weighted by role (memory.votes) through the engine, and the ranking they move.

Numbers with the default VeracityConfig: an SME memory scores V = 0.4*1.0 + 0.3*0.5 + 0.3*1 = 0.85,
a user's 0.4*0.6 + 0.15 + 0.3 = 0.69, the model's 0.4*0.3 + 0.15 + 0.3 = 0.57 (no high-veracity
neighbour: C = 0.5); the medium-risk gate is 0.5*1.2 = 0.6; kappa = 0.7.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory import review
from memory.audit import EventKind
from memory.engine import MemoryEngine
from memory.maintenance import maintain
from memory.models import MemoryType, Source, Status, VoterRole
from memory.scoring import Candidate, feedback_factor, preset_weights, rank
from memory.votes import VoteEffect, effect
from tests.conftest import NOW

RES, UQ, LR = MemoryType.RESIDUAL, MemoryType.USER_QUESTION, MemoryType.LLM_RESPONSE


def test_effect_is_a_dispute_only_for_untrusted_incorrect_votes_on_shared_sme_memory(engine: MemoryEngine) -> None:
    sme = engine.add("tropicamide drops are 0.5 to 1 percent", RES, "dr-ana", source=Source.SME, now=NOW).record
    mine = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    for role in (VoterRole.USER, VoterRole.ANONYMOUS):
        assert effect(sme, False, role) is VoteEffect.DISPUTE
        assert effect(sme, True, role) is VoteEffect.COUNTED
        assert effect(mine, False, role) is VoteEffect.COUNTED
    for role in (VoterRole.SME, VoterRole.REVIEWER):
        assert effect(sme, False, role) is VoteEffect.COUNTED


def test_user_votes_against_sme_memory_send_it_to_review_never_to_pruning(engine: MemoryEngine) -> None:
    rec = engine.add("tropicamide drops are 0.5 to 1 percent", RES, "dr-ana", source=Source.SME, now=NOW).record
    first = engine.feedback(rec.id, correct=False, now=NOW, actor="user:bob", role=VoterRole.USER)
    # a dispute moves no score: counters, FS, trust, confidence and veracity as they were
    assert (first.validated_incorrect, first.feedback_score, first.trust) == (0, 0.0, pytest.approx(0.25))
    assert first.confidence == pytest.approx(0.8) and first.veracity == pytest.approx(0.85)
    assert first.status is Status.ACTIVE
    second = engine.feedback(rec.id, correct=False, now=NOW, actor="anon", role=VoterRole.ANONYMOUS)
    assert second.status is Status.PENDING_REVIEW  # review_after_disputes = 2
    last = engine.history(rec.id)[-1]
    assert last.kind is EventKind.FEEDBACK and last.detail["effect"] == "dispute" and last.detail["disputes"] == 2
    assert last.detail["reason"] == "2 'incorrect' votes from users on a shared SME memory"
    assert maintain(engine, NOW + timedelta(days=1)).decisions == []  # pending: nothing to prune
    # the reviewer keeps it: the disputes are settled, the next one starts a new count
    review.approve(engine, rec.id, "dr-lee", now=NOW)
    again = engine.feedback(rec.id, correct=False, now=NOW, role=VoterRole.USER)
    assert again.status is Status.ACTIVE and engine.history(rec.id)[-1].detail["disputes"] == 1


def test_an_sme_or_reviewer_incorrect_vote_counts_fully_and_is_a_fact_check(engine: MemoryEngine) -> None:
    rec = engine.add("tropicamide drops are 5 percent", RES, "dr-ana", source=Source.SME, now=NOW).record
    after = engine.feedback(rec.id, correct=False, now=NOW, actor="dr-lee", role=VoterRole.REVIEWER)
    assert after.validated_incorrect == 1 and after.feedback_score == -1.0
    # confidence 0.8 - 0.2; V' = 0.7 * 0.85 + 0.3 * 0 = 0.595, under the 0.6 gate
    assert after.confidence == pytest.approx(0.6) and after.veracity == pytest.approx(0.595)
    detail = engine.history(rec.id)[-1].detail
    assert detail["role"] == "reviewer" and detail["effect"] == "counted" and detail["F"] == 0.0


def test_a_correct_vote_refreshes_veracity_and_promotes_a_probationary_memory(engine: MemoryEngine) -> None:
    rec = engine.add("alice asked for the pediatric dose", LR, "alice", source=Source.MODEL, now=NOW).record
    assert rec.veracity == pytest.approx(0.57) and rec.status is Status.PROBATIONARY  # 0.57 < 0.6
    later = NOW + timedelta(days=10)
    after = engine.feedback(rec.id, correct=True, now=later, actor="user:alice")
    # V(now) = 0.57 - 0.3 * (1 - exp(-0.05)) = 0.57 - 0.3 * 0.048771 = 0.555369
    # V' = 0.7 * 0.555369 + 0.3 * 1 = 0.688758 >= 0.6: active, scored at `later`
    assert after.veracity == pytest.approx(0.7 * (0.57 - 0.3 * 0.0487706) + 0.3, abs=1e-6)
    assert after.veracity_at == later and after.status is Status.ACTIVE
    detail = engine.history(rec.id)[-1].detail
    assert detail["F"] == 1.0 and detail["status"] == "active" and detail["role"] == "user"


def test_user_votes_on_a_personal_memory_count(engine: MemoryEngine) -> None:
    rec = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    after = engine.feedback(rec.id, correct=False, now=NOW, actor="user:alice")
    assert after.validated_incorrect == 1 and after.veracity == pytest.approx(0.69)  # a user is no fact-check


def test_feedback_factor_arithmetic() -> None:
    assert feedback_factor(0, 0) == 1.0
    assert feedback_factor(2, 1) == 1.0  # net positive: the presets rank it as the paper does
    assert feedback_factor(0, 1) == pytest.approx(0.8)  # 1 / (1 + 0.25)
    assert feedback_factor(0, 3) == pytest.approx(1 / 1.75)  # 0.5714
    assert feedback_factor(1, 4, penalty=0.0) == 1.0
    with pytest.raises(ValueError):
        feedback_factor(0, 1, penalty=-0.1)


def test_three_incorrect_votes_outweigh_a_similarity_lead_under_the_default_preset() -> None:
    weights = preset_weights("default")  # recall 0.10, recency 0.15, similarity 0.70, feedback 0.05
    better = Candidate(id="a", recall_count=0, age_days=0.0, similarity=0.8, feedback=-1.0, incorrect=3)
    rival = Candidate(id="b", recall_count=0, age_days=0.0, similarity=0.6, feedback=0.0)
    ranked = {s.id: s for s in rank([better, rival], weights)}
    # rival: 0.15 * 1 + 0.7 * 0.6 + 0.05 * 0.5 = 0.595
    assert ranked["b"].score == pytest.approx(0.595)
    # better, FS alone: 0.15 + 0.7 * 0.8 + 0.05 * 0 = 0.71 > 0.595; with the factor 0.71 / 1.75 = 0.4057
    assert ranked["a"].breakdown.feedback_factor == pytest.approx(1 / 1.75)
    assert ranked["a"].score == pytest.approx(0.71 / 1.75)
    assert [s.id for s in rank([better, rival], weights)] == ["b", "a"]
    no_penalty = rank([better, rival], weights, incorrect_penalty=0.0)
    assert [s.id for s in no_penalty] == ["a", "b"]  # the paper's FS alone cannot do it


def test_three_incorrect_votes_put_a_memory_below_its_competitor_in_search(engine: MemoryEngine) -> None:
    query = "dose units for eye drops"
    better = engine.add("doses for eye drops in micrograms units", UQ, "alice", now=NOW).record
    rival = engine.add("use percent units for eye drop doses", UQ, "alice", now=NOW).record
    hits = engine.search(query, "alice", now=NOW, types=[UQ], k=2, preset="default").all_hits()
    assert [h.record.id for h in hits] == [better.id, rival.id]
    s_better, s_rival = hits[0].similarity, hits[1].similarity  # hashing embedder: 0.5547 and 0.4623
    for _ in range(3):
        engine.feedback(better.id, correct=False, now=NOW, actor="user:alice", role=VoterRole.USER)
    hits = engine.search(query, "alice", now=NOW, types=[UQ], k=2, preset="default").all_hits()
    assert [h.record.id for h in hits] == [rival.id, better.id]
    # both fresh, never recalled: recency 1, recall 0
    # rival: 0.15 + 0.7 * 0.4623 + 0.05 * 0.5 = 0.4986
    # better: (0.15 + 0.7 * 0.5547 + 0.05 * 0) / (1 + 0.25 * 3) = 0.5383 / 1.75 = 0.3076
    assert hits[0].score == pytest.approx(0.15 + 0.7 * s_rival + 0.025)
    assert hits[1].score == pytest.approx((0.15 + 0.7 * s_better) / 1.75)
    assert hits[1].to_public()["feedback_factor"] == pytest.approx(0.5714, abs=1e-4)

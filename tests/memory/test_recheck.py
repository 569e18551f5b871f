"""Veracity decay and re-check (memory.recheck): due lists, evidence, decisions, audited application.

Numbers with the default VeracityConfig (no high-veracity neighbour, so C = 0.5): a user's memory
scores V0 = 0.4*0.6 + 0.3*0.5 + 0.3*1 = 0.69, an SME's 0.4*1.0 + 0.15 + 0.3 = 0.85. At read time
V(t) = V0 - 0.3 * (1 - exp(-0.005 t)); the medium-risk threshold is 0.5 * 1.2 = 0.6. So a user's
memory is due after ln(1/0.7) / 0.005 = 71.3 days, an SME's after ln(6) / 0.005 = 358.4 days.
A re-check gives V' = 0.7 * V(t) + 0.3 * F.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memory import recheck, review
from memory.audit import Event, EventKind
from memory.config import KnowledgeConfig
from memory.engine import MemoryEngine
from memory.maintenance import maintain
from memory.models import Classification, MemoryRecord, MemoryType, Source, Status, VoterRole
from memory.recheck import Evidence, RecheckAction, apply_fact_check, decide, due
from memory.veracity import VeracityConfig
from tests.conftest import NOW

RES, UQ = MemoryType.RESIDUAL, MemoryType.USER_QUESTION
CFG = VeracityConfig()
DAY72 = NOW + timedelta(days=72)
V72 = 0.69 - 0.3 * (1 - math.exp(-0.36))  # 0.69 - 0.3 * 0.302324 = 0.599303


def _event(kind: EventKind, detail: dict[str, object], seq: int = 1) -> Event:
    return Event(seq=seq, memory_id="m", kind=kind, at=NOW, rev=seq, actor="t", detail=detail, committed=True)


def _record(**fields: object) -> MemoryRecord:
    base: dict[str, object] = {
        "id": "m",
        "text": "alice wants doses in micrograms",
        "type": UQ,
        "user_id": "alice",
        "veracity": 0.69,
        "veracity_at": NOW,
        "created_at": NOW,
        "updated_at": NOW,
    }
    return MemoryRecord.model_validate({**base, **fields})


def test_due_after_the_computed_number_of_days(engine: MemoryEngine) -> None:
    user = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    sme = engine.add("tropicamide drops are 0.5 to 1 percent", RES, "dr-ana", source=Source.SME, now=NOW).record
    assert (user.veracity, sme.veracity) == (pytest.approx(0.69), pytest.approx(0.85))
    assert due(engine, NOW + timedelta(days=71)) == []
    assert [r.id for r in due(engine, DAY72)] == [user.id]
    assert [r.id for r in due(engine, NOW + timedelta(days=358))] == [user.id]
    assert {r.id for r in due(engine, NOW + timedelta(days=359))} == {user.id, sme.id}


def test_evidence_from_record_and_history() -> None:
    assert recheck.evidence(_record(), []) == []
    history = [
        _event(EventKind.FEEDBACK, {"correct": False, "role": "user"}, 1),
        _event(EventKind.MERGE, {"source": "model"}, 2),  # the model repeating itself confirms nothing
    ]
    assert recheck.evidence(_record(), history) == []
    history += [_event(EventKind.FEEDBACK, {"correct": True}, 3), _event(EventKind.MERGE, {"source": "user"}, 4)]
    record = _record(source=Source.SME, classification=Classification.GOOD)
    assert recheck.evidence(record, history) == [
        Evidence.SME_SOURCE,
        Evidence.REVIEWER_APPROVAL,
        Evidence.CORRECT_VOTE,
        Evidence.RESTATEMENT,
    ]


def test_decide_is_pure_and_covers_every_path() -> None:
    assert decide(_record(), [], NOW + timedelta(days=71), CFG) is None  # not due
    assert decide(_record(status=Status.PENDING_REVIEW), [], DAY72, CFG) is None  # not searchable
    neutral = decide(_record(), [], DAY72, CFG)
    assert neutral is not None and neutral.action is RecheckAction.NEUTRAL and neutral.fact_check == 0.5
    assert neutral.veracity == pytest.approx(V72) and neutral.reason == "no trusted evidence"
    voted = [_event(EventKind.FEEDBACK, {"correct": True})]
    refresh = decide(_record(validated_correct=1), voted, DAY72, CFG)
    assert refresh is not None and refresh.action is RecheckAction.REFRESH and refresh.fact_check == 1.0
    assert refresh.evidence == [Evidence.CORRECT_VOTE] and refresh.reason == "confirmed by correct_vote"
    shared = _record(type=RES, user_id="dr-ana", source=Source.SME, validated_incorrect=1)
    review = decide(shared, [], NOW + timedelta(days=359), CFG)
    assert review is not None and review.action is RecheckAction.REVIEW and review.fact_check is None
    assert review.reason == "contested: 1 'incorrect' vs 0 'correct' votes: a reviewer must confirm it"
    rechecked = [_event(EventKind.RECHECK, {"action": "neutral"}, 1), _event(EventKind.INJECT, {}, 2)]
    waiting = decide(_record(), rechecked, DAY72, CFG)
    assert waiting is not None and waiting.action is RecheckAction.WAITING
    news = [*rechecked, _event(EventKind.FEEDBACK, {"correct": False}, 3)]
    again = decide(_record(validated_incorrect=1), news, DAY72, CFG)
    assert again is not None and again.action is RecheckAction.NEUTRAL


def test_a_correct_vote_refreshes_a_due_memory(engine: MemoryEngine) -> None:
    rec = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    after = engine.feedback(rec.id, correct=True, now=DAY72, actor="user:alice", role=VoterRole.USER)
    # V' = 0.7 * 0.599303 + 0.3 = 0.719512, scored at day 72
    assert after.veracity == pytest.approx(0.7 * V72 + 0.3) and after.veracity_at == DAY72
    assert due(engine, DAY72) == []


def test_a_restatement_refreshes_a_due_memory(engine: MemoryEngine) -> None:
    rec = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    apply_fact_check(engine, rec.id, 0.5, now=DAY72)  # V = 0.7 * 0.599303 + 0.15 = 0.569512, at day 72
    merged = engine.add("alice wants doses in micrograms", UQ, "alice", now=DAY72)
    assert merged.action == "merged" and merged.record.id == rec.id
    # the restatement's own V: 0.4*0.6 + 0.3*0.5 + 0.3 = 0.69 (0.569512 is not high-veracity, C = 0.5);
    # the confirmation: 0.7 * 0.569512 + 0.3 = 0.698658; the merged memory keeps the better one
    stored = engine.get(rec.id)
    assert stored.veracity == pytest.approx(0.7 * (0.7 * V72 + 0.15) + 0.3) and stored.veracity_at == DAY72
    assert due(engine, DAY72) == []
    assert recheck.evidence(stored, engine.history(rec.id)) == [Evidence.RESTATEMENT]


def test_a_restatement_is_scored_at_its_own_time(engine: MemoryEngine) -> None:
    rec = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    engine.add("alice wants doses in micrograms", UQ, "alice", now=DAY72)
    # stored 0.69 > 0.6 puts the memory in H, so the restatement scores 0.24 + 0.3 * 1.0 + 0.3 = 0.84
    # (above the confirmation's 0.719512); it is kept as scored at day 72, not decayed from day 0
    assert engine.get(rec.id).veracity == pytest.approx(0.84) and engine.get(rec.id).veracity_at == DAY72


def test_a_model_restatement_is_no_evidence_for_the_recheck(engine: MemoryEngine) -> None:
    rec = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    engine.add("alice wants doses in micrograms", UQ, "alice", source=Source.MODEL, now=DAY72)
    # no F = 1 confirmation; max(V(day 72) = 0.599303, the model's own 0.4*0.3 + 0.3*1.0 + 0.3 = 0.72)
    stored = engine.get(rec.id)
    assert stored.veracity == pytest.approx(0.72)
    assert recheck.evidence(stored, engine.history(rec.id)) == []


def test_maintain_refreshes_sme_memory_and_neutral_checks_personal_memory_once(engine: MemoryEngine) -> None:
    sme = engine.add("tropicamide drops are 0.5 to 1 percent", RES, "dr-ana", source=Source.SME, now=NOW).record
    mine = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    later = NOW + timedelta(days=359)
    report = maintain(engine, later)
    actions = {r.memory_id: r.action for r in report.rechecks}
    assert actions == {sme.id: RecheckAction.REFRESH, mine.id: RecheckAction.NEUTRAL}
    v_sme = 0.85 - 0.3 * (1 - math.exp(-0.005 * 359))  # 0.599872
    v_mine = 0.69 - 0.3 * (1 - math.exp(-0.005 * 359))  # 0.439872
    assert engine.get(sme.id).veracity == pytest.approx(0.7 * v_sme + 0.3)  # 0.719910
    assert engine.get(mine.id).veracity == pytest.approx(0.7 * v_mine + 0.15)  # 0.457910
    event = engine.history(sme.id)[-1]
    assert event.kind is EventKind.RECHECK and event.actor == "recheck"
    assert event.detail["action"] == "refresh" and event.detail["evidence"] == ["sme_source"]
    assert event.detail["F"] == 1.0 and event.detail["veracity_after"] == pytest.approx(0.7 * v_sme + 0.3)
    # still under 0.6, but nothing new since the neutral re-check: reported as waiting, nothing written
    events = engine.audit.count()
    again = maintain(engine, later + timedelta(days=1))
    assert [(r.memory_id, r.action) for r in again.rechecks] == [(mine.id, RecheckAction.WAITING)]
    assert engine.audit.count() == events
    # the owner confirms it: refreshed at once (0.7 * V + 0.3 >= 0.6), no longer due
    engine.feedback(mine.id, correct=True, now=later + timedelta(days=1), actor="user:alice")
    assert due(engine, later + timedelta(days=1)) == []


def _shared_user_memory(engine: MemoryEngine, at: datetime) -> MemoryRecord:
    """An active shared memory from a user with no evidence (written before the SME-only gate existed)."""
    record = MemoryRecord(
        text="atropine drops dilate for two weeks",
        type=RES,
        user_id="bob",
        source=Source.USER,
        veracity=0.69,
        veracity_at=at,
        created_at=at,
        updated_at=at,
    )
    engine.apply([(record, EventKind.CREATE, {"record": record.to_public()})], at, "legacy", reembed=[record])
    return record


def test_shared_memory_without_evidence_goes_to_review_with_the_reason(engine: MemoryEngine) -> None:
    rec = _shared_user_memory(engine, NOW)
    report = maintain(engine, DAY72)
    assert [(r.memory_id, r.action) for r in report.rechecks] == [(rec.id, RecheckAction.REVIEW)]
    stored = engine.get(rec.id)
    assert stored.status is Status.PENDING_REVIEW and stored.veracity == pytest.approx(0.69)
    event = engine.history(rec.id)[-1]
    assert event.kind is EventKind.RECHECK and event.detail["status"] == "pending_review"
    assert event.detail["reason"] == "no trusted evidence: a reviewer must confirm it"
    assert rec.id in {r.id for r in engine.list(statuses=[Status.PENDING_REVIEW])}  # in the review queue


def test_apply_fact_check_external_confirmation(engine: MemoryEngine) -> None:
    rec = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    after = apply_fact_check(engine, rec.id, 1.0, now=DAY72)
    assert after.veracity == pytest.approx(0.7 * V72 + 0.3)  # 0.719512
    event = engine.history(rec.id)[-1]
    assert event.kind is EventKind.RECHECK and event.detail["veracity_before"] == pytest.approx(V72)
    with pytest.raises(ValueError):
        apply_fact_check(engine, rec.id, 0.7, now=DAY72)


GUIDE = "# Tropicamide\n\nTropicamide eye drops are used at 0.5% or 1%; the pupil dilates within 20 to 30 minutes.\n"


def _with_guide(engine: MemoryEngine, tmp_path: Path, at: datetime) -> None:
    guide = tmp_path / "guide.md"
    guide.write_text(GUIDE, encoding="utf-8")
    engine.knowledge.config = KnowledgeConfig(inject_min_similarity=0.05)
    engine.knowledge.add([guide], now=at)


def test_a_passage_is_evidence_that_refreshes_a_due_memory(engine: MemoryEngine, tmp_path: Path) -> None:
    rec = engine.add("tropicamide eye drops are used at 0.5% or 1%", UQ, "alice", now=NOW).record
    _with_guide(engine, tmp_path, DAY72)  # added after the memory: the write could not use it
    (decision,) = recheck.plan(engine, DAY72)
    assert (decision.memory_id, decision.action, decision.evidence) == (
        rec.id,
        RecheckAction.REFRESH,
        [Evidence.KNOWLEDGE],
    )
    assert decision.reason == "confirmed by knowledge"


def test_a_passage_that_contradicts_sends_a_memory_to_review_before_it_is_due(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    wrong = engine.add("tropicamide eye drops are used at 50%", RES, "dr-ana", source=Source.SME, now=NOW).record
    assert wrong.status is Status.ACTIVE  # the guide was not there yet
    _with_guide(engine, tmp_path, NOW + timedelta(days=1))
    report = maintain(engine, NOW + timedelta(days=1))  # far from due (an SME fact decays for a year)
    (decision,) = report.rechecks
    assert decision.action is RecheckAction.REVIEW and decision.reason.startswith("knowledge contradicts (guide.md")
    assert "0.5% or 1%" in decision.reason
    assert engine.get(wrong.id).status is Status.PENDING_REVIEW
    # a reviewer who approves it anyway has the last word: the next maintenance leaves it alone
    review.approve(engine, wrong.id, "dr-bo", now=NOW + timedelta(days=2))
    assert maintain(engine, NOW + timedelta(days=3)).rechecks == []

"""The engine on a real embedded Chroma store: writes, search, isolation, feedback, supersession."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.audit import EventKind
from memory.conflicts import Verdict
from memory.engine import MemoryEngine, UnknownMemoryError
from memory.models import MemoryType, Source, Status, VoterRole
from memory.store import SPACE, distance_to_similarity
from tests.conftest import NOW

RES, UQ, LR = MemoryType.RESIDUAL, MemoryType.USER_QUESTION, MemoryType.LLM_RESPONSE


class ScriptedJudge:
    """Deterministic judge: answers from a table keyed by (new, old) text."""

    def __init__(self, table: dict[tuple[str, str], Verdict]) -> None:
        self.table = table
        self.calls: list[tuple[str, str]] = []

    def judge(self, new_text: str, old_text: str, similarity: float) -> Verdict:
        self.calls.append((new_text, old_text))
        return self.table.get((new_text, old_text), Verdict.INDEPENDENT)


def test_collections_are_cosine_and_distance_converts_once(engine: MemoryEngine) -> None:
    engine.add("tropicamide eye drops are 0.5 to 1 percent", RES, "sme1", source=Source.SME, now=NOW)
    engine.add("I prefer answers in decimals", UQ, "alice", now=NOW)
    for partition in engine.store.partitions():
        assert engine.store.space(partition) == SPACE == "cosine"
    assert distance_to_similarity(0.25) == pytest.approx(0.75)
    assert distance_to_similarity(-2.384e-7) == 1.0 and distance_to_similarity(2.0000001) == -1.0  # float32 noise


def test_add_writes_creation_event_and_can_be_read_back(engine: MemoryEngine) -> None:
    result = engine.add("Alice is allergic to penicillin", UQ, "alice", metadata={"department": "cardiology"}, now=NOW)
    assert result.action == "created"
    record = engine.get(result.record.id)
    assert record.text == "Alice is allergic to penicillin"
    assert record.metadata == {"department": "cardiology"}
    assert record.trust == pytest.approx(0.25)  # TS_init = w_v / w_s = 1 / 4
    kinds = [e.kind for e in engine.history(record.id)]
    assert kinds == [EventKind.CREATE]


def test_residual_is_shared_but_personal_memories_are_isolated(engine: MemoryEngine) -> None:
    engine.add("tropicamide concentration is 0.5 to 1 percent", RES, "alice", source=Source.SME, now=NOW)
    engine.add("alice takes tropicamide drops every morning", UQ, "alice", now=NOW)
    result = engine.search("tropicamide concentration", "bob", now=NOW, k=5)
    texts = [h.record.text for h in result.all_hits()]
    assert "tropicamide concentration is 0.5 to 1 percent" in texts
    assert all("alice takes" not in t for t in texts)
    assert all(r.user_id != "alice" or r.shared for r in engine.list("bob"))
    with pytest.raises(UnknownMemoryError):
        engine.get(engine.list("alice", types=[UQ])[0].id, user_id="bob")


def test_search_does_not_count_recalls_but_injection_does(engine: MemoryEngine) -> None:
    rec = engine.add("tropicamide is a short acting mydriatic", RES, "sme", source=Source.SME, now=NOW).record
    hits = engine.search("tropicamide mydriatic", "bob", now=NOW).top()
    assert [h.record.id for h in hits] == [rec.id]
    assert engine.get(rec.id).recall_count == 0
    engine.mark_injected([rec.id, rec.id], now=NOW)  # duplicates in one prompt count once
    assert engine.get(rec.id).recall_count == 1
    assert [e.kind for e in engine.history(rec.id)] == [EventKind.CREATE, EventKind.INJECT]


def test_feedback_updates_score_counters_trust(engine: MemoryEngine) -> None:
    rec = engine.add("tropicamide is used for fundus examination", RES, "sme", source=Source.SME, now=NOW).record
    engine.mark_injected([rec.id], now=NOW)
    after = engine.feedback(rec.id, correct=True, now=NOW)
    # TS = 0.8 * 0.25 + 0.2 * (1 + 1) / (1 + 4) = 0.2 + 0.08 = 0.28
    assert after.trust == pytest.approx(0.28)
    assert after.feedback_score == 1.0 and after.validated_correct == 1
    # an SME's "incorrect" counts fully (a user's, on shared SME memory, is only a dispute: test_votes.py)
    worse = engine.feedback(rec.id, correct=False, now=NOW, role=VoterRole.SME)
    # C_total = max(recalls 1, validations 2) = 2; TS = 0.8 * 0.28 + 0.2 * (1 + 1) / (2 + 4) = 0.2907
    assert worse.trust == pytest.approx(0.224 + 0.2 * 2 / 6)
    # PS = 2 / (2 + 0.5 * 1) = 0.8
    assert worse.persistence == pytest.approx(0.8)
    assert worse.feedback_score == 0.0


def test_contradiction_supersedes_and_keeps_old_for_audit(settings) -> None:  # type: ignore[no-untyped-def]
    from memory.embedder import HashingEmbedder

    old_text, new_text = "Alice lives in Paris", "Alice lives in London now"
    judge = ScriptedJudge({(new_text, old_text): Verdict.CONTRADICTS})
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), judge=judge)
    try:
        old = engine.add(old_text, UQ, "alice", now=NOW).record
        result = engine.add(new_text, UQ, "alice", now=NOW + timedelta(days=1))
        assert result.action == "superseded" and result.superseded == [old.id]
        stale = engine.get(old.id)
        assert stale.status is Status.SUPERSEDED and stale.superseded_by == result.record.id
        assert stale.confidence == 0.0 and result.record.version == old.version + 1
        texts = [h.record.text for h in engine.search("Alice lives in", "alice", now=NOW, k=5).all_hits()]
        assert texts == [new_text]
        assert [e.kind for e in engine.history(old.id)] == [EventKind.CREATE, EventKind.SUPERSEDE]
    finally:
        engine.close()


def test_same_verdict_merges_and_unrelated_writes_are_not_judged(settings) -> None:  # type: ignore[no-untyped-def]
    from memory.embedder import HashingEmbedder

    a, b = "the patient prefers metric units", "the patient prefers metric units please"
    judge = ScriptedJudge({(b, a): Verdict.SAME})
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), judge=judge)
    try:
        first = engine.add(a, UQ, "p1", now=NOW).record
        merged = engine.add(b, UQ, "p1", now=NOW)
        assert merged.action == "merged" and merged.record.id == first.id
        assert len(engine.list("p1")) == 1
        judge.calls.clear()
        engine.add("quarterly revenue rose in Ohio", UQ, "p1", now=NOW)
        assert judge.calls == []  # nothing similar enough: no judge call
    finally:
        engine.close()


def test_unsure_keeps_both_with_newer_more_confident(settings) -> None:  # type: ignore[no-untyped-def]
    from memory.embedder import HashingEmbedder

    a, b = "dose of drug x is 5 mg", "dose of drug x is 5 mg for adults"
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), judge=ScriptedJudge({(b, a): Verdict.UNSURE}))
    try:
        old = engine.add(a, UQ, "u", now=NOW, confidence=0.8).record
        new = engine.add(b, UQ, "u", now=NOW, confidence=0.8).record
        assert len(engine.list("u")) == 2
        assert new.confidence > old.confidence
    finally:
        engine.close()


def test_unknown_ids_raise(engine: MemoryEngine) -> None:
    with pytest.raises(UnknownMemoryError, match="no memory with id 'nope'"):
        engine.feedback("nope", correct=True)
    with pytest.raises(UnknownMemoryError):
        engine.history("nope")


def test_forget_user_erases_personal_but_keeps_domain(engine: MemoryEngine) -> None:
    engine.add("alice likes short answers", UQ, "alice", now=NOW)
    engine.add("alice asked about dosing twice", LR, "alice", now=NOW)
    shared = engine.add("domain fact about tropicamide", RES, "alice", source=Source.SME, now=NOW).record
    assert engine.forget_user("alice", now=NOW) == 2
    remaining = engine.list("alice")
    assert [r.id for r in remaining] == [shared.id]
    assert engine.audit.memory_ids(EventKind.FORGET) and len(engine.audit.memory_ids(EventKind.FORGET)) == 2


def test_low_veracity_residual_waits_for_review(engine: MemoryEngine) -> None:
    rec = engine.add(
        "model guessed the capital of Australia is Sydney", RES, "bot", source=Source.MODEL, now=NOW
    ).record
    assert rec.status is Status.PENDING_REVIEW
    assert engine.search("capital of Australia", "anyone", now=NOW, k=5).all_hits() == []


def test_agent_and_metadata_filters_narrow_personal_search(engine: MemoryEngine) -> None:
    for i in range(70):  # more than a page, so the exact filtered query must serve the rare matches
        engine.add(f"alice note {i} about dosing schedules", UQ, "alice", agent="triage", now=NOW)
    rare = engine.add(
        "alice note about dosing schedules in cardiology",
        UQ,
        "alice",
        agent="cardio",
        metadata={"department": "cardiology"},
        now=NOW,
    ).record
    hits = engine.search("dosing schedules", "alice", now=NOW, types=[UQ], agent="cardio", k=5).all_hits()
    assert [h.record.id for h in hits] == [rare.id]
    hits = engine.search(
        "dosing schedules", "alice", now=NOW, types=[UQ], k=5, filters={"department": "cardiology"}
    ).all_hits()
    assert [h.record.id for h in hits] == [rare.id]
    assert len(engine.search("dosing schedules", "alice", now=NOW, types=[UQ], k=5).all_hits()) == 5


def test_status_changes_leave_the_search_key_in_step(engine: MemoryEngine) -> None:
    from memory.audit import EventKind as Kind

    rec = engine.add("bob takes warfarin daily", UQ, "bob", now=NOW).record
    assert engine.search("warfarin", "bob", now=NOW).top()
    engine.set_status(rec.id, Status.ARCHIVED, Kind.STATUS, {}, now=NOW)
    assert engine.search("warfarin", "bob", now=NOW).all_hits() == []
    engine.set_status(rec.id, Status.ACTIVE, Kind.STATUS, {}, now=NOW)
    assert [h.record.id for h in engine.search("warfarin", "bob", now=NOW).top()] == [rec.id]


def test_pending_domain_memory_supersedes_only_once_approved(settings) -> None:  # type: ignore[no-untyped-def]
    from memory import review
    from memory.embedder import HashingEmbedder
    from tests.conftest import HASHING_CONFIG

    old_text, new_text = "the adult dose of drug q is 5 mg daily", "the adult dose of drug q is 50 mg daily"
    judge = ScriptedJudge({(new_text, old_text): Verdict.CONTRADICTS})
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG, judge=judge)
    try:
        trusted = engine.add(old_text, RES, "dr-a", source=Source.SME, now=NOW).record
        pending = engine.add(new_text, RES, "mallory", source=Source.MODEL, now=NOW)
        assert pending.record.status is Status.PENDING_REVIEW and pending.superseded == []
        assert engine.get(trusted.id).status is Status.ACTIVE  # an unreviewed claim changes nothing shared
        assert [h.record.id for h in engine.search("adult dose of drug q", "bob", now=NOW).top()] == [trusted.id]
        review.approve(engine, pending.record.id, "dr-b", now=NOW)
        assert engine.get(trusted.id).status is Status.SUPERSEDED
        assert engine.get(trusted.id).superseded_by == pending.record.id
    finally:
        engine.close()


def test_matches_compares_fields_as_their_json_values() -> None:
    from memory.models import MemoryRecord
    from memory.search import matches

    record = MemoryRecord(
        text="t", type=MemoryType.LLM_RESPONSE, user_id="u", agent="triage", created_at=NOW, updated_at=NOW
    )
    record.metadata = {"department": "eye"}
    assert matches(record, {"type": "llm_response", "agent": "triage", "department": "eye"}, "u")
    assert matches(record, {"version": "1", "confidence": "0.8", "superseded_by": "None"}, None)
    assert matches(record, {"created_at": NOW.isoformat().replace("+00:00", "Z")}, None)
    assert not matches(record, {"type": "residual"}, None)
    assert not matches(record, {"department": "ear"}, None)
    assert not matches(record, {"agent": "triage"}, "someone-else")
    record.status = Status.SUPERSEDED
    assert not matches(record, {}, None)

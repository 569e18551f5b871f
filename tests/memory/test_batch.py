"""Batched writes behave like single ``add`` calls: conflicts, merges, audit events, one apply."""

from __future__ import annotations

from memory.audit import EventKind
from memory.batch import NewMemory, add_many
from memory.conflicts import Verdict
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.models import MemoryType, Source, Status
from tests.conftest import HASHING_CONFIG, NOW

UQ = MemoryType.USER_QUESTION


class ScriptedJudge:
    def __init__(self, table: dict[tuple[str, str], Verdict]) -> None:
        self.table = table

    def judge(self, new_text: str, old_text: str, similarity: float) -> Verdict:
        return self.table.get((new_text, old_text), Verdict.SAME if new_text == old_text else Verdict.INDEPENDENT)


def test_batch_writes_partitions_and_audits(engine: MemoryEngine) -> None:
    items = [
        NewMemory(text=f"user {u} fact number {i} about dosing", type=UQ, user_id=f"u{u}")
        for u in range(3)
        for i in range(4)
    ]
    items.append(
        NewMemory(
            text="tropicamide drops are 0.5 to 1 percent", type=MemoryType.RESIDUAL, user_id="sme", source=Source.SME
        )
    )
    results = add_many(engine, items, now=NOW)
    assert [r.action for r in results] == ["created"] * 13
    assert {r.user_id for r in engine.list("u1") if not r.shared} == {"u1"}
    assert len(engine.list("u1")) == 5  # four own + the shared residual
    for result in results:
        assert [e.kind for e in engine.history(result.record.id)] == [EventKind.CREATE]
    assert engine.search("tropicamide percent", "u2", now=NOW).top()[0].record.type is MemoryType.RESIDUAL


def test_batch_conflicts_inside_the_batch_and_with_the_store(settings) -> None:  # type: ignore[no-untyped-def]
    old, new, dup = "Lea lives in Lyon", "Lea lives in Porto now", "Lea lives in Porto now"
    judge = ScriptedJudge({(new, old): Verdict.CONTRADICTS})
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG, judge=judge)
    try:
        stored = engine.add(old, UQ, "lea", now=NOW).record
        results = add_many(
            engine, [NewMemory(text=new, type=UQ, user_id="lea"), NewMemory(text=dup, type=UQ, user_id="lea")], now=NOW
        )
        assert [r.action for r in results] == ["superseded", "merged"]
        assert results[1].record.id == results[0].record.id  # the duplicate merged into the new memory
        assert engine.get(stored.id).status is Status.SUPERSEDED
        assert [e.kind for e in engine.history(results[0].record.id)] == [EventKind.CREATE, EventKind.MERGE]
        assert [e.kind for e in engine.history(stored.id)] == [EventKind.CREATE, EventKind.SUPERSEDE]
        assert [r.text for r in engine.list("lea", statuses=[Status.ACTIVE])] == [new]
    finally:
        engine.close()


def test_contradiction_between_two_new_memories_in_one_batch(settings) -> None:  # type: ignore[no-untyped-def]
    first, second = "Max prefers doses in milligrams", "Max prefers doses in micrograms"
    judge = ScriptedJudge({(second, first): Verdict.CONTRADICTS})
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG, judge=judge)
    try:
        a, b = add_many(
            engine,
            [NewMemory(text=first, type=UQ, user_id="max"), NewMemory(text=second, type=UQ, user_id="max")],
            now=NOW,
        )
        assert b.action == "superseded" and b.superseded == [a.record.id]
        assert engine.get(a.record.id).status is Status.SUPERSEDED
        assert [e.kind for e in engine.history(a.record.id)] == [EventKind.CREATE, EventKind.SUPERSEDE]
        assert engine.audit.pending() == []
    finally:
        engine.close()

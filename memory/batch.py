"""Batched writes: many memories at once with the same checks as ``MemoryEngine.add``.

One embedding call for the batch, one neighbour query per partition and type (Chroma answers all
of the batch's vectors in one call), duplicates and conflicts inside the batch checked against
each other, and one ``apply`` for the lot: one audit transaction and one upsert per partition.
Chroma's fixed cost per call, not the arithmetic, is what limits single writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from memory import conflicts, trust, veracity
from memory.audit import EventKind
from memory.conflicts import Judge, Verdict
from memory.engine import AddResult, MemoryEngine, WriteAction, utcnow
from memory.knowledge_check import KnowledgeVerdict, Stance, assess
from memory.models import (
    SEARCHABLE,
    SHARED_USER,
    Category,
    MemoryRecord,
    MemoryType,
    Provenance,
    Source,
    check_user_id,
    one_line,
)
from memory.record_layout import partition_for, search_key
from memory.search import OVERFETCH, matches

Change = tuple[MemoryRecord, EventKind, dict[str, Any]]


class NewMemory(BaseModel):
    """One memory to write in a batch (the arguments of ``MemoryEngine.add``)."""

    model_config = ConfigDict(extra="forbid")

    text: str
    type: MemoryType
    user_id: str
    agent: str = "chatbot"
    category: Category = Category.FACT
    source: Source = Source.USER
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    metadata: dict[str, str] = Field(default_factory=dict)
    provenance: Provenance = Provenance()
    review: bool = False
    fact_check: float | None = Field(default=None, ge=0.0, le=1.0)  # F from a fact check, folded into V
    verdicts: dict[str, Verdict] = Field(default_factory=dict)  # decisions already reached, by memory id
    note: dict[str, str] = Field(default_factory=dict)  # kept in the creation/merge event (who said it, gate)
    knowledge: KnowledgeVerdict | None = None  # the knowledge base's stance, when the caller assessed it

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        return one_line(value)  # the text embedded is the text stored (MemoryRecord makes it one line)

    @field_validator("user_id")
    @classmethod
    def _user_id(cls, value: str) -> str:
        return check_user_id(value)


def _neighbours(
    engine: MemoryEngine, items: Sequence[NewMemory], vectors: list[list[float]], n: int = 20
) -> list[list[tuple[MemoryRecord, float]]]:
    """Stored neighbours of every item, one Chroma call per (partition, type)."""
    groups: dict[tuple[str, MemoryType], list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault((partition_for(item.type, item.user_id), item.type), []).append(i)
    out: list[list[tuple[MemoryRecord, float]]] = [[] for _ in items]
    for (partition, memory_type), indexes in groups.items():
        shared = partition == SHARED_USER
        where = None if shared else {"skey": search_key(partition, memory_type)}
        pages = engine.store.query_many(partition, [vectors[i] for i in indexes], n * OVERFETCH if shared else n, where)
        for i, page in zip(indexes, pages, strict=True):
            owner = None if shared else items[i].user_id
            out[i] = [(r, s) for r, s in page if matches(r, {"type": memory_type.value}, owner)][:n]
    return out


def knowledge_verdicts(
    engine: MemoryEngine, items: Sequence[NewMemory], vectors: Sequence[Sequence[float]]
) -> list[KnowledgeVerdict]:
    """The knowledge base's stance on each item (one passage query for the items not yet assessed)."""
    todo = [i for i, item in enumerate(items) if item.knowledge is None]
    found = engine.knowledge.relevant_vectors([vectors[i] for i in todo]) if todo else []
    assessed = {i: assess(items[i].text, hits) for i, hits in zip(todo, found, strict=True)}
    return [item.knowledge or assessed[i] for i, item in enumerate(items)]


class _Batch:
    """The changes of one batch; a record changed twice keeps one object and gets two events."""

    def __init__(self) -> None:
        self.changes: list[Change] = []
        self.current: dict[str, MemoryRecord] = {}
        self.created: list[MemoryRecord] = []
        self.vectors: dict[str, list[float]] = {}

    def record(self, memory_id: str, stored: dict[str, MemoryRecord]) -> MemoryRecord:
        return self.current.get(memory_id) or stored[memory_id]

    def change(self, after: MemoryRecord, kind: EventKind, detail: dict[str, Any]) -> None:
        if after.id in self.current and self.current[after.id] is not after:
            for position, (rec, k, d) in enumerate(self.changes):  # earlier events now point at the new state
                if rec.id == after.id:
                    self.changes[position] = (after, k, d)
            self.created = [after if r.id == after.id else r for r in self.created]
        self.current[after.id] = after
        self.changes.append((after, kind, detail))

    def siblings(self, record: MemoryRecord, vector: list[float]) -> list[tuple[MemoryRecord, float]]:
        partition = partition_for(record.type, record.user_id)
        return [
            (r, float(np.dot(self.vectors[r.id], vector)))
            for r in self.created
            if partition_for(r.type, r.user_id) == partition and r.type is record.type and r.status in SEARCHABLE
        ]


def add_many(
    engine: MemoryEngine,
    items: Sequence[NewMemory],
    now: datetime | None = None,
    actor: str = "engine",
    judge: Judge | None = None,
) -> list[AddResult]:
    """Write a batch; returns one result per item, in order (merged items point at what absorbed them).

    This is the one write path: ``MemoryEngine.add``, the agents' committer, ``mark memory add`` and
    import all come here. Per item: flag neighbours, take the verdicts already reached by memory id
    and ask ``judge`` (default: the engine's) about the rest, weigh the knowledge base's stance (a
    supporting passage counts as a trusted neighbour in the consistency C; a contradicting one sends
    the memory to a reviewer), score veracity (with the fact check), apply the engine's status policy,
    then merge, supersede or create; one ``apply`` commits the lot. The texts are embedded first; the
    rest runs under the engine's write lock, so another writer's memories are seen and counted (two
    processes adding the same text get one memory, merged, not two).
    """
    now = now or utcnow()
    vectors = engine.embedder.embed([item.text for item in items])
    with engine.writing():
        return _write(engine, items, vectors, now, actor, judge)


def _write(
    engine: MemoryEngine,
    items: Sequence[NewMemory],
    vectors: list[list[float]],
    now: datetime,
    actor: str,
    judge: Judge | None,
) -> list[AddResult]:
    """:func:`add_many` once the texts are embedded (the caller holds the write lock)."""
    cfg = engine.config
    batch = _Batch()
    results: list[AddResult] = []
    stances = knowledge_verdicts(engine, items, vectors)
    rows = zip(items, vectors, _neighbours(engine, items, vectors), stances, strict=True)
    for item, vector, neighbours, stance in rows:
        record = MemoryRecord(
            text=item.text,
            type=item.type,
            user_id=item.user_id,
            agent=item.agent,
            category=item.category,
            source=item.source,
            confidence=item.confidence,
            created_at=now,
            updated_at=now,
            metadata=item.metadata,
            provenance=item.provenance,
            trust=trust.trust_init(cfg.trust),
            veracity_at=now,
        )
        pool = [(batch.current.get(r.id, r), s) for r, s in neighbours] + batch.siblings(record, vector)
        pool = [(r, s) for r, s in pool if r.status in SEARCHABLE]
        flagged = conflicts.flag_candidates(pool, cfg.conflicts, record.text)
        judgements = conflicts.judge_candidates(judge or engine.judge, record.text, flagged, item.verdicts)
        stored = {r.id: r for r, _ in flagged}
        contradicted = {j.existing_id for j in judgements if j.verdict is Verdict.CONTRADICTS}
        pairs = [(r.veracity, s) for r, s in pool if r.id not in contradicted]
        if stance.stance is Stance.SUPPORTS:  # a reviewed document is a neighbour of the highest veracity
            pairs.append((1.0, stance.similarity))
        record.veracity = veracity.initial_score(record.source.value, pairs, cfg.veracity)
        if item.fact_check is not None:
            record.veracity = veracity.recheck(record.veracity, item.fact_check, cfg.veracity)
        overrides = any(batch.record(i, stored).veracity > cfg.veracity.critical for i in contradicted)
        untrusted_override = record.shared and record.source is not Source.SME and overrides
        disputed = stance.stance is Stance.CONTRADICTS
        record.status = engine.initial_status(record, item.review or untrusted_override or disputed)
        note = {**item.note, "knowledge": stance.describe()} if stance.stance is not Stance.SILENT else item.note
        same = [j for j in judgements if j.verdict is Verdict.SAME]
        if same:
            merged = conflicts.merge_into(batch.record(same[0].existing_id, stored), record)
            detail = {
                "merged_text": record.text,
                "said_by": record.user_id,  # forgetting this user tombstones the event (memory.forgetting)
                "provenance": record.provenance.model_dump(),
                "source": record.source.value,
                **note,
            }
            batch.change(merged, EventKind.MERGE, detail)
            results.append(AddResult(action=WriteAction.MERGED, record=merged, judgements=judgements))
            continue
        record, olds, deferred = conflicts.resolve(
            record, judgements, partial(batch.record, stored=stored), cfg.conflicts.unsure_boost
        )
        for old_after in olds:
            batch.change(old_after, EventKind.SUPERSEDE, {"superseded_by": record.id})
        superseded = [old.id for old in olds]
        created = {
            "record": record.to_public(),
            "supersedes": superseded,
            "supersedes_on_approval": deferred,
            **note,
        }
        batch.change(record, EventKind.CREATE, created)
        batch.created.append(record)
        batch.vectors[record.id] = vector
        action = WriteAction.SUPERSEDED if superseded else WriteAction.CREATED
        results.append(AddResult(action=action, record=record, superseded=superseded, judgements=judgements))
    engine.apply(batch.changes, now, actor, reembed=batch.created)
    return results

"""The human review queue (spec H2): pending memories are approved, edited or rejected, audited."""

from __future__ import annotations

from datetime import datetime

from mark.errors import InputError
from memory import conflicts
from memory.audit import EventKind
from memory.engine import MemoryEngine, UnknownMemoryError, utcnow
from memory.models import SEARCHABLE, Classification, MemoryRecord, Status


class ReviewError(InputError):
    """The memory is not waiting for review."""


def pending(engine: MemoryEngine) -> list[MemoryRecord]:
    """Every memory waiting for a reviewer, oldest first."""
    return engine.list(statuses=[Status.PENDING_REVIEW])


def _pending_record(engine: MemoryEngine, memory_id: str) -> MemoryRecord:
    record = engine.get(memory_id)
    if record.status is not Status.PENDING_REVIEW:
        raise ReviewError(f"memory {memory_id} is {record.status.value}, not pending review")
    return record


def _deferred_supersessions(engine: MemoryEngine, record: MemoryRecord, now: datetime | None) -> None:
    """Apply the supersessions a pending memory was judged to cause, now that it is approved."""
    created = next((e for e in engine.history(record.id) if e.kind is EventKind.CREATE), None)
    for old_id in created.detail.get("supersedes_on_approval", []) if created else []:
        try:
            old = engine.get(old_id)
        except UnknownMemoryError:
            continue
        if old.status in SEARCHABLE:
            old_after, _ = conflicts.supersede(old, record)
            engine.apply([(old_after, EventKind.SUPERSEDE, {"superseded_by": record.id})], now or utcnow(), "review")


def approve(engine: MemoryEngine, memory_id: str, reviewer: str, now: datetime | None = None) -> MemoryRecord:
    """Make a pending memory active and label it good (and apply the supersessions it was waiting for)."""
    _deferred_supersessions(engine, _pending_record(engine, memory_id), now)
    return engine.set_status(
        memory_id,
        Status.ACTIVE,
        EventKind.REVIEW,
        {"decision": "approve"},
        now=now,
        actor=f"reviewer:{reviewer}",
        classification=Classification.GOOD,
    )


def edit(engine: MemoryEngine, memory_id: str, text: str, reviewer: str, now: datetime | None = None) -> MemoryRecord:
    """Replace a pending memory's text and make it active (a new version)."""
    if not text.strip():
        raise ReviewError("the edited text is empty")
    pending_record = _pending_record(engine, memory_id)
    before = pending_record.text
    _deferred_supersessions(engine, pending_record, now)
    return engine.set_status(
        memory_id,
        Status.ACTIVE,
        EventKind.EDIT,
        {"decision": "edit", "before": before},
        now=now,
        actor=f"reviewer:{reviewer}",
        text=text,
        classification=Classification.GOOD,
    )


def reject(
    engine: MemoryEngine, memory_id: str, reviewer: str, reason: str, now: datetime | None = None
) -> MemoryRecord:
    """Reject a pending memory: it is archived, labelled bad, and never injected."""
    if not reason.strip():
        raise ReviewError("a rejection needs a reason")
    _pending_record(engine, memory_id)
    return engine.set_status(
        memory_id,
        Status.ARCHIVED,
        EventKind.REVIEW,
        {"decision": "reject", "reason": reason},
        now=now,
        actor=f"reviewer:{reviewer}",
        classification=Classification.BAD,
    )


__all__ = ["ReviewError", "UnknownMemoryError", "approve", "edit", "pending", "reject"]

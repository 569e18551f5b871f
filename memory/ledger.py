"""Every memory with who said it and the truth gate's verdict, and every refused candidate (for audits)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from memory.audit import Event, EventKind
from memory.engine import MemoryEngine


class LedgerRow(BaseModel):
    """One stored memory as a reader auditing the store needs it."""

    model_config = ConfigDict(extra="forbid")

    id: str
    type: str
    status: str
    text: str
    said_by: str
    source: str
    gate: str
    veracity: float
    conversation: str | None = None


class Refusal(BaseModel):
    """A candidate the truth gate refused (never stored)."""

    model_config = ConfigDict(extra="forbid")

    type: str
    text: str
    reason: str
    conversation: str | None = None


def _created(events: list[Event]) -> dict[str, object]:
    first = next((e for e in events if e.kind in {EventKind.CREATE, EventKind.IMPORT}), None)
    return dict(first.detail) if first else {}


def memories(engine: MemoryEngine) -> list[LedgerRow]:
    """Every memory in the store, oldest first, with its creation event's provenance and gate verdict."""
    rows = []
    for record in engine.list():
        detail = _created(engine.audit.history(record.id))
        rows.append(
            LedgerRow(
                id=record.id,
                type=record.type.value,
                status=record.status.value,
                text=record.text,
                said_by=str(detail.get("said_by") or record.user_id),
                source=record.source.value,
                gate=str(detail.get("gate") or "not checked (written directly, not from a conversation)"),
                veracity=round(record.veracity, 3),
                conversation=record.provenance.conversation_id,
            )
        )
    return rows


def refusals(engine: MemoryEngine) -> list[Refusal]:
    """Every candidate the truth gate refused, in the order it was refused."""
    events = [e for memory_id in engine.audit.memory_ids(EventKind.REJECT) for e in engine.audit.history(memory_id)]
    return [
        Refusal(
            type=str(e.detail.get("type", "")),
            text=str(e.detail.get("text", "")),
            reason=str(e.detail.get("reason", "")),
            conversation=e.detail.get("conversation_id"),
        )
        for e in sorted(events, key=lambda e: e.seq)
    ]

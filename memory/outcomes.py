"""What the engine's writes and reads hand back: the kind of a write, its result, and an unknown id."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from mark.errors import NotFoundError
from memory import conflicts
from memory.models import MemoryRecord


class UnknownMemoryError(NotFoundError):
    """No memory has that id (or the caller may not see it)."""

    def __str__(self) -> str:
        """One readable line."""
        return f"no memory with id {self.args[0]!r}"


class WriteAction(StrEnum):
    """What one write did to the store."""

    CREATED = "created"  # a new memory
    MERGED = "merged"  # the same fact as an existing memory: merged into it
    SUPERSEDED = "superseded"  # a new memory that replaced the older ones it contradicts


class AddResult(BaseModel):
    """What a write did: created, merged into an existing memory, or superseded older ones."""

    model_config = ConfigDict(extra="forbid")

    action: WriteAction
    record: MemoryRecord
    superseded: list[str] = []
    judgements: list[conflicts.Judgement] = []


def utcnow() -> datetime:
    """The engine's clock (timezone-aware UTC)."""
    return datetime.now(UTC)

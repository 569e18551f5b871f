"""A user's conversation history as episodic events (MemoryART's episodic memory, features A1, A2).

A raw turn is an *event*, not a fact: events are kept whole, with who said them, in which session and
turn, and when (the history's own dates, never the clock of the machine that ingested them). Facts are
extracted from events and judged separately, by the memory-building team. Events are never scored
for veracity and never decay: an event's age alone never hides it from a search.

An event's id is a hash of its owner, session, position and text, so ingesting the same
history twice adds nothing (idempotent by content and position). A consolidation summary is an event
too (``kind="summary"``), which names the events it summarises (``sources``); the summarised events
are archived, not deleted, so their text stays available for audit.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memory.models import check_user_id, one_line


class Speaker(StrEnum):
    """Who said a turn."""

    USER = "user"
    ASSISTANT = "assistant"
    SME = "sme"
    SYSTEM = "system"
    OTHER = "other"

    @classmethod
    def parse(cls, role: str) -> Speaker:
        """A role name as a speaker ("human" is the user, "bot"/"ai" the assistant); unknown roles are OTHER."""
        value = role.strip().lower()
        aliases = {"human": "user", "bot": "assistant", "ai": "assistant", "expert": "sme"}
        value = aliases.get(value, value)
        return cls(value) if value in cls._value2member_map_ else cls.OTHER


class EventStatus(StrEnum):
    """Whether an event is searched."""

    ACTIVE = "active"
    ARCHIVED = "archived"  # consolidated into a summary or evicted by a cap: kept for audit, not searched


class EventKind(StrEnum):
    """A turn as said, or a summary of an episode's turns."""

    TURN = "turn"
    SUMMARY = "summary"


class HistoryEvent(BaseModel):
    """One turn of a user's conversation history (or a consolidation summary)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str
    user_id: str
    source: str  # the file or chat it came from
    session_id: str
    turn: int = Field(ge=0)  # position in its session, from 0
    speaker: Speaker
    text: str
    at: datetime | None = None  # when it was said, from the history; None: undated (accepted and flagged)
    position: float  # sort key: the timestamp when dated, else the order of ingestion
    kind: EventKind = EventKind.TURN
    sources: list[str] = Field(default_factory=list)  # for a summary: the events it summarises
    episode_id: str | None = None  # the fusion-ART episode it resonated with
    status: EventStatus = EventStatus.ACTIVE
    ingested_at: datetime
    last_access: datetime  # the last time a search returned it (LRU eviction reads this)
    accesses: int = Field(default=0, ge=0)

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        value = one_line(value)
        if not value:
            raise ValueError("an event has no text")
        return value

    @field_validator("user_id")
    @classmethod
    def _user(cls, value: str) -> str:
        return check_user_id(value)

    @property
    def dated(self) -> bool:
        """Whether the history said when this turn happened."""
        return self.at is not None


def event_id(user_id: str, session_id: str, turn: int, text: str) -> str:
    """The id of a turn: a hash of owner, session, position and text (re-ingesting adds nothing).

    The file a turn came from is not part of it: the same history exported twice is the same history.
    """
    key = "\x1f".join([user_id, session_id, str(turn), one_line(text)])
    return "ev-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]

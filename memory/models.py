"""The memory record (spec M1, S1, S8) and the closed vocabularies around it."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mark.errors import InputError


class MemoryType(str, Enum):
    """MARK's three refined-memory types. Only ``residual`` is domain-wide (shared)."""

    RESIDUAL = "residual"
    USER_QUESTION = "user_question"
    LLM_RESPONSE = "llm_response"


class Category(str, Enum):
    """What kind of fact a memory holds (seed 001)."""

    FACT = "fact"
    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    BIOGRAPHICAL = "biographical"
    EPISODIC = "episodic"
    PROCEDURAL = "procedural"


class Classification(str, Enum):
    """A human reviewer's label (MARK: good / bad)."""

    UNREVIEWED = "unreviewed"
    GOOD = "good"
    BAD = "bad"


class Source(str, Enum):
    """Who a memory came from; drives source credibility in veracity scoring."""

    SME = "sme"
    USER = "user"
    MODEL = "model"


class Status(str, Enum):
    """Lifecycle state (seed 001 S8). Only ACTIVE and PROBATIONARY memories are searchable."""

    ACTIVE = "active"
    PROBATIONARY = "probationary"
    PENDING_REVIEW = "pending_review"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"
    PRUNED = "pruned"
    FORGOTTEN = "forgotten"


class VoterRole(str, Enum):
    """Who gives feedback on a memory; weights what the vote may do (see ``memory.votes``)."""

    SME = "sme"
    REVIEWER = "reviewer"
    USER = "user"
    ANONYMOUS = "anonymous"


SEARCHABLE = frozenset({Status.ACTIVE, Status.PROBATIONARY})
SHARED_USER = "__domain__"


def one_line(text: str) -> str:
    """``text`` with every newline and whitespace run collapsed to one space (stripped)."""
    return " ".join(text.split())


def check_user_id(value: str) -> str:
    """``value`` when it may own memories; blank ids and the shared partition's id are refused."""
    if not value.strip():
        raise InputError("user id is empty")
    if value.strip() == SHARED_USER:
        raise InputError(f"user id {SHARED_USER!r} is reserved for the shared domain partition")
    return value


class Provenance(BaseModel):
    """Where a memory was learnt (frozen: record copies share it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conversation_id: str | None = None
    turn: int | None = None
    origin: str = "manual"
    # the question or situation the memory was learnt from (the applicability check compares it
    # with the question being answered); None for memories written directly
    situation: str | None = None


class MemoryRecord(BaseModel):
    """One refined memory with its scores, counters and lifecycle fields."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    text: str
    type: MemoryType
    user_id: str
    agent: str = "chatbot"
    category: Category = Category.FACT
    source: Source = Source.USER
    classification: Classification = Classification.UNREVIEWED
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    veracity: float = Field(default=0.5, ge=0.0, le=1.0)
    veracity_at: datetime | None = None
    trust: float = Field(default=0.25, ge=0.0, le=1.0)
    persistence: float = Field(default=1.0, ge=0.0, le=1.0)
    recall_count: int = Field(default=0, ge=0)
    validated_correct: int = Field(default=0, ge=0)
    validated_incorrect: int = Field(default=0, ge=0)
    feedback_score: float = Field(default=0.0, ge=-1.0, le=1.0)
    status: Status = Status.ACTIVE
    version: int = Field(default=1, ge=1)
    revision: int = Field(default=0, ge=0)
    superseded_by: str | None = None
    created_at: datetime
    updated_at: datetime
    provenance: Provenance = Provenance()
    metadata: dict[str, str] = Field(default_factory=dict)

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        # one line: a stored memory cannot carry forged lines ("System: ...") into a prompt
        value = one_line(value)
        if not value:
            raise ValueError("memory text is empty")
        return value

    @field_validator("user_id")
    @classmethod
    def _user_id(cls, value: str) -> str:
        return check_user_id(value)

    @field_validator("metadata")
    @classmethod
    def _metadata_keys(cls, value: dict[str, str]) -> dict[str, str]:
        for key in value:
            if not key or key.startswith("_") or key in cls.model_fields:
                raise ValueError(f"metadata key {key!r} is empty, private or reserved")
        return value

    @property
    def shared(self) -> bool:
        """Residual memories are domain knowledge, visible to every user."""
        return self.type is MemoryType.RESIDUAL

    def to_public(self) -> dict[str, Any]:
        """A JSON-ready dict (enums as values, datetimes as ISO strings)."""
        return self.model_dump(mode="json")

"""Request and response bodies of the REST API (validated by FastAPI: a malformed body is a 422)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.building import ReviewPolicy
from memory.models import Category, MemoryType


class NewMemoryBody(BaseModel):
    """A memory to add for the caller."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=2000)
    type: MemoryType = MemoryType.USER_QUESTION
    category: Category | None = None


class EditBody(BaseModel):
    """A memory's new text."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=2000)


class FeedbackBody(BaseModel):
    """A vote on a memory."""

    model_config = ConfigDict(extra="forbid")

    correct: bool


class DecisionBody(BaseModel):
    """A reviewer's decision on a pending memory."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["approve", "edit", "reject"]
    text: str | None = Field(default=None, max_length=2000)
    reason: str = Field(default="", max_length=500)


class TurnBody(BaseModel):
    """One message of a transcript."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "sme", "system"]
    content: str = Field(max_length=20_000)


class BuildBody(BaseModel):
    """A finished conversation to build into the caller's memory."""

    model_config = ConfigDict(extra="forbid")

    turns: list[TurnBody] = Field(min_length=1, max_length=200)
    review: ReviewPolicy = ReviewPolicy.AUTO


class ProfileBody(BaseModel):
    """A profile value."""

    model_config = ConfigDict(extra="forbid")

    value: str = Field(min_length=1, max_length=200)


class ChatMessage(BaseModel):
    """An OpenAI chat message (text content only)."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "user", "assistant", "developer", "tool"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        """The message's text (the text parts of a multi-part content)."""
        if isinstance(self.content, list):
            return " ".join(str(p.get("text", "")) for p in self.content if isinstance(p, dict))
        return self.content or ""


class ChatRequest(BaseModel):
    """The OpenAI ``/v1/chat/completions`` request mark understands (other fields are accepted and ignored)."""

    model_config = ConfigDict(extra="allow")

    model: str = "mark"
    messages: list[ChatMessage] = Field(min_length=1, max_length=200)
    max_tokens: int | None = Field(default=None, ge=1, le=8192)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=8192)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    stream: bool = False

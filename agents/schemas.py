"""Typed outputs of every structured agent reply (validated before anything is used)."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from memory.conflicts import Verdict


class ExtractedCategory(str, Enum):
    """Categories an extractor may assign (a subset of the store's categories)."""

    FACT = "fact"
    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    PROCEDURAL = "procedural"


class ExtractedMemory(BaseModel):
    """One refined memory proposed by an extractor."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=8, max_length=400)
    category: ExtractedCategory = ExtractedCategory.FACT

    @field_validator("text")
    @classmethod
    def _strip(cls, value: str) -> str:
        value = " ".join(value.split())
        if len(value) < 8:
            raise ValueError("memory text too short")
        return value


class Extraction(BaseModel):
    """An extractor's reply: 1 to 6 memories."""

    model_config = ConfigDict(extra="ignore")

    memories: list[ExtractedMemory] = Field(min_length=1, max_length=6)


class JudgeReply(BaseModel):
    """The conflict resolver's verdict on one flagged pair."""

    model_config = ConfigDict(extra="ignore")

    verdict: Literal["same", "contradicts", "independent"]

    def to_verdict(self) -> Verdict:
        """As the engine's vocabulary."""
        return Verdict(self.verdict)


class FactCheckReply(BaseModel):
    """The veracity checker's result F in {0, 0.5, 1} with a short reason."""

    model_config = ConfigDict(extra="ignore")

    n: int = Field(default=1, ge=1)
    score: float = Field(json_schema_extra={"enum": [0, 0.5, 1]})
    reason: str = Field(default="", max_length=400)

    @field_validator("score")
    @classmethod
    def _allowed(cls, value: float) -> float:
        if value not in (0.0, 0.5, 1.0):
            raise ValueError("score must be 0, 0.5 or 1")
        return value


class KeyPoints(BaseModel):
    """Key points of a reference answer (for KPCS)."""

    model_config = ConfigDict(extra="ignore")

    points: list[str] = Field(min_length=1, max_length=8)


def fact_check_batch(count: int) -> type[BaseModel]:
    """A reply model holding exactly ``count`` fact checks (one call checks a whole build)."""
    return create_model(
        f"FactChecks{count}",
        __config__=ConfigDict(extra="ignore"),
        checks=(list[FactCheckReply], Field(min_length=count, max_length=count)),
    )

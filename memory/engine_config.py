"""Every tunable rule of the engine in one config, and the defaults suited to an embedder."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from memory.conflicts import ConflictConfig
from memory.models import Category
from memory.scoring import ScoringConfig, situation_check_for, type_floors_for
from memory.trust import TrustConfig
from memory.veracity import VeracityConfig

if TYPE_CHECKING:  # a type only: importing the embedder loads numpy
    from memory.embedder import Embedder


class EngineConfig(BaseModel):
    """Every tunable rule of the engine."""

    model_config = ConfigDict(extra="forbid")

    scoring: ScoringConfig = ScoringConfig()
    trust: TrustConfig = TrustConfig()
    veracity: VeracityConfig = VeracityConfig()
    conflicts: ConflictConfig = ConflictConfig()
    thumbs_up: float = 0.1
    thumbs_down: float = 0.2
    # days a searchable memory of a category lives (seed 001 S6: episodic 90 days, constraints never);
    # a category not named here never expires
    ttl_days: dict[Category, float] = Field(default_factory=lambda: {Category.EPISODIC: 90.0})
    # superseded memories stay readable for audit, then are archived after this many days (None: never)
    superseded_archive_days: float | None = Field(default=180.0, ge=0.0)
    min_confidence: float = 0.05
    # "incorrect" votes from users / anonymous voters on a shared SME memory that send it to review
    review_after_disputes: int = Field(default=2, ge=1)


def default_config(embedder: Embedder) -> EngineConfig:
    """The engine defaults, with the relevance floors and situation check chosen for ``embedder``."""
    floor, bypass = situation_check_for(embedder.name)
    scoring = ScoringConfig(type_floors=type_floors_for(embedder.name), situation_floor=floor, situation_bypass=bypass)
    return EngineConfig(scoring=scoring)

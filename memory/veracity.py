"""VeriMem veracity: initial score (V1), fact-check update (V2) and risk-adjusted thresholds (V3).

From VeriMem section 2::

    V   = alpha * S + beta * C + gamma * T          (alpha + beta + gamma = 1)
    C   = mean similarity to the high-veracity set H = {m : V(m) > tau_crit}
    T   = exp(-lambda * age_days)
    V'  = kappa * V + (1 - kappa) * F                F in {0 contradict, 0.5 neutral, 1 confirm}
    fact-check when idf(query) > theta * V
    tau = tau_base * (1 + delta_high | 1 + delta_medium | 1 - delta_low)   by task risk

S is the credibility of the memory's source. The paper leaves C undefined when H is empty; a
neutral value is used then. All functions are pure: age is an argument, nothing reads the clock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mark.errors import InputError

if TYPE_CHECKING:
    from memory.models import MemoryRecord

WEIGHT_SUM_TOLERANCE = 1e-6


class Risk(StrEnum):
    """Task criticality T_c, which sets how much veracity a memory needs to be used as is."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class FactCheck(float, Enum):
    """The outcome F of an external fact-check."""

    CONTRADICT = 0.0
    NEUTRAL = 0.5
    CONFIRM = 1.0


class VeracityConfig(BaseModel):
    """VeriMem parameters; the weights are the paper's reference implementation (0.4, 0.3, 0.3).

    ``credibility`` maps a source name to S in [0, 1]; by default an SME (1.0) outranks a user
    (0.6), who outranks the model itself (0.3). The deltas must satisfy the paper's strict order
    ``0 < delta_low < delta_medium < delta_high < 1``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    alpha: float = Field(default=0.4, ge=0.0, le=1.0, description="weight of source credibility S")
    beta: float = Field(default=0.3, ge=0.0, le=1.0, description="weight of consistency C")
    gamma: float = Field(default=0.3, ge=0.0, le=1.0, description="weight of temporal decay T")
    decay_per_day: float = Field(default=0.005, ge=0.0, description="lambda in T = exp(-lambda*age)")
    credibility: dict[str, float] = Field(
        default_factory=lambda: {"sme": 1.0, "user": 0.6, "model": 0.3},
        description="source credibility S per source name",
    )
    critical: float = Field(default=0.6, ge=0.0, le=1.0, description="tau_crit: V above it puts a memory in H")
    kappa: float = Field(default=0.7, gt=0.0, lt=1.0, description="weight kept by the old V")
    tau_base: float = Field(default=0.5, ge=0.0, le=1.0, description="base retrieval threshold")
    delta_high: float = Field(default=0.4, gt=0.0, lt=1.0)
    delta_medium: float = Field(default=0.2, gt=0.0, lt=1.0)
    delta_low: float = Field(default=0.1, gt=0.0, lt=1.0)
    neutral_consistency: float = Field(
        default=0.5, ge=0.0, le=1.0, description="C used when no high-veracity memory exists"
    )
    idf_sensitivity: float = Field(default=1.0, gt=0.0, description="theta: fact-check when idf > theta * V")

    @field_validator("credibility")
    @classmethod
    def _credibility_range(cls, value: dict[str, float]) -> dict[str, float]:
        if not value:
            raise ValueError("credibility needs at least one source")
        for source, cred in value.items():
            if not math.isfinite(cred) or not 0.0 <= cred <= 1.0:
                raise ValueError(f"credibility of {source!r} must be within [0, 1], got {cred}")
        return value

    @model_validator(mode="after")
    def _weights_and_deltas(self) -> Self:
        total = self.alpha + self.beta + self.gamma
        if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
            raise ValueError(
                f"alpha + beta + gamma must sum to 1, got sum={total:.6f} "
                f"(alpha={self.alpha}, beta={self.beta}, gamma={self.gamma})"
            )
        if not self.delta_low < self.delta_medium < self.delta_high:
            raise ValueError(
                "deltas must satisfy 0 < delta_low < delta_medium < delta_high < 1, got "
                f"low={self.delta_low}, medium={self.delta_medium}, high={self.delta_high}"
            )
        return self


def _config(cfg: VeracityConfig | None) -> VeracityConfig:
    return VeracityConfig() if cfg is None else cfg


def _check_unit(name: str, value: float) -> None:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be within [0, 1], got {value}")


def _clamp01(value: float) -> float:
    return min(1.0, max(0.0, value))


def temporal_decay(age_days: float, cfg: VeracityConfig | None = None) -> float:
    """Return T = ``exp(-decay_per_day * age_days)``; 1 for a brand-new memory."""
    c = _config(cfg)
    if not math.isfinite(age_days) or age_days < 0.0:
        raise ValueError(f"age_days must be a finite number >= 0, got {age_days}")
    return math.exp(-c.decay_per_day * age_days)


def is_high_veracity(v: float, cfg: VeracityConfig | None = None) -> bool:
    """Return whether a memory belongs to H, the set consistency is measured against (V > tau_crit)."""
    _check_unit("veracity", v)
    return v > _config(cfg).critical


def consistency(similarities: Sequence[float], cfg: VeracityConfig | None = None) -> float:
    """Return C: the mean cosine similarity to the high-veracity memories, each clamped to [0, 1].

    With no high-veracity memory to compare against, returns ``neutral_consistency``.
    """
    c = _config(cfg)
    if not similarities:
        return c.neutral_consistency
    for sim in similarities:
        if not math.isfinite(sim):
            raise ValueError(f"similarities must be finite, got {sim}")
    return sum(_clamp01(s) for s in similarities) / len(similarities)


def initial_score(source: str, neighbours: Sequence[tuple[float, float]], cfg: VeracityConfig) -> float:
    """Return a new memory's V: source credibility plus consistency with its high-veracity neighbours.

    ``neighbours`` are ``(veracity, similarity)`` pairs; only those above ``cfg.critical`` count
    (the set H). Age is zero. Pure.
    """
    high = [similarity for v, similarity in neighbours if v > cfg.critical]
    return score(source, consistency(high, cfg), 0.0, cfg)


def score(source: str, consistency: float, age_days: float, cfg: VeracityConfig | None = None) -> float:
    """Return the initial veracity ``V = alpha * S(source) + beta * C + gamma * T(age)``.

    An unknown source raises ``ValueError`` listing the known ones.
    """
    c = _config(cfg)
    credibility = c.credibility.get(source)
    if credibility is None:
        known = ", ".join(sorted(c.credibility))
        raise ValueError(f"unknown source {source!r}; known sources: {known}")
    _check_unit("consistency", consistency)
    v = c.alpha * credibility + c.beta * consistency + c.gamma * temporal_decay(age_days, c)
    return _clamp01(v)


def decayed(v: float, days_since_scored: float, cfg: VeracityConfig | None = None) -> float:
    """Return V ``days_since_scored`` after it was scored: its temporal term decays, ``V - gamma * (1 - T)``.

    V was scored with T = 1 (a fresh memory, or a re-check that just confirmed it), so only the
    ``gamma * T`` share of it ages. Clipped to [0, 1].
    """
    c = _config(cfg)
    return _clamp01(v - c.gamma * (1.0 - temporal_decay(days_since_scored, c)))


def current(record: MemoryRecord, now: datetime, cfg: VeracityConfig | None = None) -> float:
    """Return a memory's veracity at ``now``: its stored V decayed since ``veracity_at`` (else its creation)."""
    scored_at = record.veracity_at or record.created_at
    return decayed(record.veracity, max(0.0, (now - scored_at).total_seconds() / 86400.0), cfg)


def recheck(v: float, fact_check: float, cfg: VeracityConfig | None = None) -> float:
    """Return the updated veracity ``V' = kappa * V + (1 - kappa) * F`` after a fact-check.

    ``fact_check`` must be 0 (contradict), 0.5 (neutral) or 1 (confirm); see ``FactCheck``.
    """
    c = _config(cfg)
    _check_unit("veracity", v)
    allowed = {f.value for f in FactCheck}
    if fact_check not in allowed:
        raise ValueError(f"fact_check must be one of {sorted(allowed)}, got {fact_check}")
    return _clamp01(c.kappa * v + (1.0 - c.kappa) * float(fact_check))


def parse_risk(risk: Risk | str) -> Risk:
    """The risk named by ``risk``; an unknown name raises ``InputError`` listing the valid ones."""
    try:
        return Risk(risk)
    except ValueError:
        valid = ", ".join(r.value for r in Risk)
        raise InputError(f"unknown risk {risk!r}; valid risks: {valid}") from None


def threshold(risk: Risk | str, cfg: VeracityConfig | None = None) -> float:
    """Return the veracity a memory needs for a task of this risk, clipped to [0, 1].

    ``tau_base * (1 + delta_high)`` for high risk, ``* (1 + delta_medium)`` for medium,
    ``* (1 - delta_low)`` for low. An unknown risk raises ``InputError`` listing valid ones.
    """
    c = _config(cfg)
    level = parse_risk(risk)
    factor = {
        Risk.HIGH: 1.0 + c.delta_high,
        Risk.MEDIUM: 1.0 + c.delta_medium,
        Risk.LOW: 1.0 - c.delta_low,
    }[level]
    return _clamp01(c.tau_base * factor)


def needs_recheck(v: float, risk: Risk | str, cfg: VeracityConfig | None = None) -> bool:
    """Return whether a memory is below the risk threshold and must be re-validated before use."""
    _check_unit("veracity", v)
    return v < threshold(risk, cfg)


def should_fact_check(idf: float, v: float, cfg: VeracityConfig | None = None) -> bool:
    """Return whether to schedule a fact-check: the query's IDF exceeds ``theta * V``."""
    _check_unit("veracity", v)
    if not math.isfinite(idf) or idf < 0.0:
        raise ValueError(f"idf must be a finite number >= 0, got {idf}")
    return idf > _config(cfg).idf_sensitivity * v

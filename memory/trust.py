"""MARK Trust Score (TS) and Persistence Score (PS), and the retention policy built on them.

From MARK Appendix 1::

    TS_init = w_v / w_s
    TS_t    = alpha * TS_{t-1} + (1 - alpha) * (C_correct + w_v) / (C_total + w_s)
    PS      = C_total / (C_total + lambda * C_incorrect)
    retain  if TS >= TS_init, else if PS > alpha_ps * (1 - TS), else drop

``C_total`` is the memory's recall count, ``C_correct`` / ``C_incorrect`` how often it was validated
as correct / incorrect. With ``C_correct <= C_total`` and ``w_v <= w_s`` the smoothed ratio is at
most 1, so TS stays in [0, 1]; PS lies in (0, 1]. The functions here return numbers and decisions;
the store applies them.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TrustConfig(BaseModel):
    """Parameters of TS, PS and the PS threshold; defaults are the paper's Table 7 values.

    ``lam`` (the PS penalty lambda): the paper states ``0.5 < lambda < 1`` but uses 0.5 itself in
    Table 7, so ``0 < lam <= 1`` is accepted and 0.5 is the default.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    alpha: float = Field(default=0.8, gt=0.0, lt=1.0, description="trust retention factor")
    w_v: float = Field(default=1.0, gt=0.0, description="Laplace smoothing weight (numerator)")
    w_s: float = Field(default=4.0, gt=0.0, description="Laplace smoothing weight (denominator)")
    lam: float = Field(default=0.5, gt=0.0, le=1.0, description="PS penalty for incorrectness")
    ps_alpha: float = Field(default=0.85, gt=0.0, lt=1.0, description="PS threshold factor")

    @model_validator(mode="after")
    def _smoothing_order(self) -> Self:
        if self.w_v > self.w_s:
            raise ValueError(f"w_v must be <= w_s so trust stays within [0, 1], got w_v={self.w_v}, w_s={self.w_s}")
        return self


class RetentionReason(StrEnum):
    """Why a memory was kept or dropped."""

    TRUSTED = "trusted"
    PERSISTENT = "persistent"
    UNTRUSTED = "untrusted"


class RetentionDecision(BaseModel):
    """The retention verdict for one memory with the numbers it was based on."""

    model_config = ConfigDict(extra="forbid")

    retain: bool
    reason: RetentionReason
    trust: float
    persistence: float
    threshold: float = Field(description="the PS threshold alpha_ps * (1 - TS)")


def _config(cfg: TrustConfig | None) -> TrustConfig:
    return TrustConfig() if cfg is None else cfg


def _check_unit(name: str, value: float) -> None:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be within [0, 1], got {value}")


def _check_counts(total: int, part: int, part_name: str) -> None:
    if total < 0 or part < 0:
        raise ValueError(f"counts must be >= 0, got total={total}, {part_name}={part}")
    if part > total:
        raise ValueError(f"{part_name} ({part}) cannot exceed total ({total})")


def trust_init(cfg: TrustConfig | None = None) -> float:
    """Return the initial trust of a new memory, ``w_v / w_s`` (0.25 with the defaults)."""
    c = _config(cfg)
    return c.w_v / c.w_s


def next_trust(previous: float, correct: int, total: int, cfg: TrustConfig | None = None) -> float:
    """Return ``alpha * previous + (1 - alpha) * (correct + w_v) / (total + w_s)``.

    ``correct`` and ``total`` are the memory's cumulative counts after the latest recall.
    Raises ``ValueError`` for a previous trust outside [0, 1], negative counts or correct > total.
    """
    c = _config(cfg)
    _check_unit("previous trust", previous)
    _check_counts(total, correct, "correct")
    smoothed = (correct + c.w_v) / (total + c.w_s)
    return min(1.0, c.alpha * previous + (1.0 - c.alpha) * smoothed)


def persistence(total: int, incorrect: int, cfg: TrustConfig | None = None) -> float:
    """Return ``total / (total + lam * incorrect)``; 1.0 for a memory never recalled.

    Raises ``ValueError`` for negative counts or incorrect > total.
    """
    c = _config(cfg)
    _check_counts(total, incorrect, "incorrect")
    if total == 0:
        return 1.0
    return total / (total + c.lam * incorrect)


def persistence_threshold(trust: float, cfg: TrustConfig | None = None) -> float:
    """Return the PS a low-trust memory must exceed to be kept: ``ps_alpha * (1 - trust)``."""
    c = _config(cfg)
    _check_unit("trust", trust)
    return c.ps_alpha * (1.0 - trust)


def decide_retention(trust: float, persistence: float, cfg: TrustConfig | None = None) -> RetentionDecision:
    """Apply the retention policy: keep if trusted, else keep if persistent enough, else drop.

    ``trust >= trust_init`` keeps the memory (TRUSTED); otherwise ``persistence >
    persistence_threshold(trust)`` keeps it (PERSISTENT); otherwise it is dropped (UNTRUSTED).
    """
    c = _config(cfg)
    _check_unit("trust", trust)
    _check_unit("persistence", persistence)
    threshold = persistence_threshold(trust, c)
    if trust >= trust_init(c):
        reason = RetentionReason.TRUSTED
    elif persistence > threshold:
        reason = RetentionReason.PERSISTENT
    else:
        reason = RetentionReason.UNTRUSTED
    return RetentionDecision(
        retain=reason is not RetentionReason.UNTRUSTED,
        reason=reason,
        trust=trust,
        persistence=persistence,
        threshold=threshold,
    )

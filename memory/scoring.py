"""MARK Memory Relevance Score (MRS): rank retrieved memories by recall, recency, similarity, feedback.

The paper (MARK, section 1.2) defines::

    MRS = a*RC + b/(Rec + eps) + c*SS + d*FS,   a + b + c + d = 1

with RC the recall count, Rec the memory's age in days, SS the cosine similarity to the query and
FS the feedback score, and says the scores are "normalized (0-1 range)" before the best memory is
picked. It does not say how; this module fixes one normalisation so every component lies in [0, 1]
and the total is a convex combination, hence also in [0, 1]:

* ``RC_norm = rc / max(rc over the candidate set)``; 0 for everyone when that max is 0.
* recency: ``r = 1 / (age_days + eps)`` and ``R_norm = r / max(r over the set)``, so the freshest
  candidate gets exactly 1 (computed as ``(min_age + eps) / (age_days + eps)``).
* ``SS_norm = clamp(similarity, 0, 1)``: a negative cosine is no better than an orthogonal one.
* ``FS_norm = (feedback + 1) / 2``: a fixed map of [-1, 1] onto [0, 1], not relative to the set,
  so raising one memory's feedback can never lower its rank.

``MRS = a*RC_norm + b*R_norm + c*SS_norm + d*FS_norm``. RC and recency are set-relative (the top-N
search results for one query), which keeps the weights comparable whatever the absolute counts.

Feedback penalty (ours, not the paper's): under the default preset FS weighs d = 0.05, so three
"incorrect" votes cost a memory at most 0.05 * 1/2 = 0.025, less than a 0.04 similarity gap: users
who say a memory is wrong could not move it. The score is therefore multiplied by::

    feedback_factor = 1 / (1 + incorrect_penalty * max(0, incorrect - correct))

which is exactly 1 for every memory without net negative votes (the presets rank those as the paper
does) and, with the default ``incorrect_penalty`` 0.25, 0.8 / 0.667 / 0.571 after one / two / three
net "incorrect" votes. Three votes put a fresh memory (recency 1, no recalls) with similarity s_a
under a fresh competitor without votes at similarity s_b when ``(0.15 + 0.7 s_a) / 1.75 < 0.175 +
0.7 s_b``, i.e. ``s_a < 0.223 + 1.75 s_b``: with the MiniLM's 0.5 relevance floor for knowledge,
under any competitor that is relevant at all.

The module is pure: age is an argument, nothing here reads the clock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mark.errors import InputError
from memory.models import MemoryType

WEIGHT_SUM_TOLERANCE = 1e-6
DEFAULT_EPSILON = 0.01
DEFAULT_INCORRECT_PENALTY = 0.25


class MRSWeights(BaseModel):
    """The MRS weights (a, b, c, d): each in [0, 1], summing to 1.

    The paper asks for ``0 < a, b, c, d < 1``, yet its own ablations use exact zeros and its test
    setup is ``a = b = d = 0, c = 1``, so the closed interval [0, 1] is accepted.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    recall: float = Field(ge=0.0, le=1.0, description="a: weight of the recall count")
    recency: float = Field(ge=0.0, le=1.0, description="b: weight of 1/(age + eps)")
    similarity: float = Field(ge=0.0, le=1.0, description="c: weight of the cosine similarity")
    feedback: float = Field(ge=0.0, le=1.0, description="d: weight of the feedback score")

    @model_validator(mode="after")
    def _sum_to_one(self) -> Self:
        total = self.recall + self.recency + self.similarity + self.feedback
        if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
            raise ValueError(
                f"MRS weights must sum to 1 (within {WEIGHT_SUM_TOLERANCE}), got sum={total:.6f} "
                f"(recall={self.recall}, recency={self.recency}, "
                f"similarity={self.similarity}, feedback={self.feedback})"
            )
        return self


class Preset(StrEnum):
    """The paper's named weight combinations (a, b, c, d), plus its experimental setup."""

    DEFAULT = "default"
    SIMILARITY_FRESHNESS = "similarity_freshness"
    POPULARITY_SIMILARITY = "popularity_similarity"
    FEEDBACK_FRESHNESS = "feedback_freshness"
    SIMILARITY_FEEDBACK = "similarity_feedback"
    BALANCED = "balanced"
    CORE_BLEND = "core_blend"
    SIMILARITY_ONLY = "similarity_only"


_THIRD = 1.0 / 3.0

# (recall a, recency b, similarity c, feedback d), as printed in MARK section 1.2.
# CORE_BLEND: the paper prints (0.33, 0.33, 0.33, 0.00), which sums to 0.99 and so breaks its own
# a+b+c+d=1 rule; "equal weighting of recall, recency and semantic fit" is exactly 1/3 each.
# SIMILARITY_ONLY: the paper's testing setup, a=0, b=0, c=1, d=0.
_PRESETS: dict[Preset, tuple[float, float, float, float]] = {
    Preset.DEFAULT: (0.10, 0.15, 0.70, 0.05),
    Preset.SIMILARITY_FRESHNESS: (0.05, 0.35, 0.55, 0.05),
    Preset.POPULARITY_SIMILARITY: (0.30, 0.05, 0.60, 0.05),
    Preset.FEEDBACK_FRESHNESS: (0.10, 0.40, 0.10, 0.40),
    Preset.SIMILARITY_FEEDBACK: (0.05, 0.10, 0.55, 0.30),
    Preset.BALANCED: (0.20, 0.20, 0.50, 0.10),
    Preset.CORE_BLEND: (_THIRD, _THIRD, _THIRD, 0.0),
    Preset.SIMILARITY_ONLY: (0.0, 0.0, 1.0, 0.0),
}


def preset_weights(preset: Preset | str) -> MRSWeights:
    """Return the weights of a named preset; an unknown name raises ``InputError`` listing valid ones."""
    try:
        key = Preset(preset)
    except ValueError:
        valid = ", ".join(p.value for p in Preset)
        raise InputError(f"unknown MRS preset {preset!r}; valid presets: {valid}") from None
    recall, recency, similarity, feedback = _PRESETS[key]
    return MRSWeights(recall=recall, recency=recency, similarity=similarity, feedback=feedback)


# Relevance floors for an embedder's cosine scale. With the MiniLM, in the medmcqa-sme run (docs/runs),
# 116 of the 119 residual and llm_response memories injected from a record's own correction scored
# >= 0.5 against its question, and 8 of the 77 injected from other records' corrections did.
# Knowledge (residual, llm_response) must be that relevant; user_question memories keep the default,
# since a preference ("doses in micrograms") applies to questions that share few words with it.
# Other embedders keep the defaults.
_TYPE_FLOORS = {"minilm-l6-v2-int8": {MemoryType.RESIDUAL.value: 0.5, MemoryType.LLM_RESPONSE.value: 0.5}}


def type_floors_for(embedder_name: str) -> dict[str, float]:
    """The per-type relevance floors measured for an embedder (empty: ``min_similarity`` for all)."""
    return dict(_TYPE_FLOORS.get(embedder_name, {}))


# The situation check for an embedder's cosine scale, chosen on the dev split of medmcqa-holdout
# (docs/runs): there, every memory injected into its own record's question or a re-lettered paraphrase
# had a situation similarity >= 0.76, and every memory from another record's correction that passed
# the relevance floors had <= 0.59 and a text similarity <= 0.57. Reported on the test split only.
_SITUATION: dict[str, tuple[float | None, float]] = {"minilm-l6-v2-int8": (0.7, 0.7)}


def situation_check_for(embedder_name: str) -> tuple[float | None, float]:
    """The ``situation_floor`` and ``situation_bypass`` chosen for an embedder (no check otherwise)."""
    return _SITUATION.get(embedder_name, (None, 1.0))


class ScoringConfig(BaseModel):
    """How MSS re-ranks search results: epsilon, how many to fetch, and which weights per type."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    epsilon: float = Field(default=DEFAULT_EPSILON, gt=0.0, description="keeps 1/(age+eps) finite")
    top_n: int = Field(default=20, ge=1, description="similarity search results re-ranked by MRS")
    min_similarity: float = Field(
        default=0.3,
        ge=-1.0,
        le=1.0,
        description="relevance floor: candidates less similar to the query are never ranked or injected",
    )
    type_floors: dict[str, Annotated[float, Field(ge=-1.0, le=1.0)]] = Field(
        default_factory=dict, description="relevance floor overriding min_similarity for one memory type"
    )
    situation_floor: float | None = Field(
        default=None,
        ge=-1.0,
        le=1.0,
        description="a memory learnt from a question is injected only into questions at least this similar "
        "to that question (None: no situation check)",
    )
    situation_bypass: float = Field(
        default=1.0,
        ge=-1.0,
        le=1.0,
        description="a memory at least this similar to the query itself skips the situation check",
    )
    incorrect_penalty: float = Field(
        default=DEFAULT_INCORRECT_PENALTY,
        ge=0.0,
        description="score divided by 1 + this * net 'incorrect' votes (0: feedback only through FS)",
    )
    preset: Preset = Preset.DEFAULT
    per_type: dict[str, MRSWeights] = Field(
        default_factory=dict, description="weights overriding the preset for one memory type"
    )

    @field_validator("per_type", "type_floors")
    @classmethod
    def _known_types(cls, value: dict[str, Any]) -> dict[str, Any]:
        valid = {t.value for t in MemoryType}
        unknown = sorted(set(value) - valid)
        if unknown:
            raise ValueError(f"unknown memory type(s) {unknown}; valid: {', '.join(sorted(valid))}")
        return value

    def floor_for(self, type_name: str) -> float:
        """The relevance floor of a memory type: its ``type_floors`` entry, else ``min_similarity``."""
        return self.type_floors.get(type_name, self.min_similarity)

    def weights_for(self, type_name: str) -> MRSWeights:
        """Return the weights for a memory type: its ``per_type`` override, else the preset's."""
        override = self.per_type.get(type_name)
        return override if override is not None else preset_weights(self.preset)


class Candidate(BaseModel):
    """One search result to re-rank, with the raw MRS inputs."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str
    recall_count: int = Field(ge=0)
    age_days: float = Field(ge=0.0)
    similarity: float = Field(ge=-1.0, le=1.0, description="cosine similarity to the query")
    feedback: float = Field(ge=-1.0, le=1.0, description="feedback score, see feedback_score()")
    correct: int = Field(default=0, ge=0, description="counted 'correct' votes")
    incorrect: int = Field(default=0, ge=0, description="counted 'incorrect' votes")


class Contributions(BaseModel):
    """Each component's share of the total: weight times normalised value."""

    model_config = ConfigDict(extra="forbid")

    recall: float
    recency: float
    similarity: float
    feedback: float


class ScoreBreakdown(BaseModel):
    """The normalised 0-1 component values, their weighted contributions and the total."""

    model_config = ConfigDict(extra="forbid")

    recall: float
    recency: float
    similarity: float
    feedback: float
    contributions: Contributions
    feedback_factor: float = Field(default=1.0, description="the penalty the weighted sum was multiplied by")
    total: float


class ScoredCandidate(BaseModel):
    """A candidate's id with its MRS and how it was made up."""

    model_config = ConfigDict(extra="forbid")

    id: str
    score: float
    breakdown: ScoreBreakdown


def feedback_score(correct: int, incorrect: int) -> float:
    """Return ``(correct - incorrect) / (correct + incorrect)``, 0.0 without any feedback.

    This generalises the paper's FS in {-1, 0, 1}: one "correct" gives 1, one "incorrect" -1.
    """
    if correct < 0 or incorrect < 0:
        raise ValueError(f"feedback counts must be >= 0, got correct={correct}, incorrect={incorrect}")
    total = correct + incorrect
    if total == 0:
        return 0.0
    return (correct - incorrect) / total


def feedback_factor(correct: int, incorrect: int, penalty: float = DEFAULT_INCORRECT_PENALTY) -> float:
    """Return ``1 / (1 + penalty * max(0, incorrect - correct))``: 1 unless the votes are net negative."""
    if correct < 0 or incorrect < 0 or not math.isfinite(penalty) or penalty < 0.0:
        raise ValueError(f"need counts >= 0 and penalty >= 0, got {correct}, {incorrect}, {penalty}")
    return 1.0 / (1.0 + penalty * max(0, incorrect - correct))


def _clamp01(value: float) -> float:
    return min(1.0, max(0.0, value))


def _breakdown(
    candidate: Candidate, weights: MRSWeights, max_recall: int, min_age: float, epsilon: float, penalty: float
) -> ScoreBreakdown:
    recall = candidate.recall_count / max_recall if max_recall > 0 else 0.0
    recency = (min_age + epsilon) / (candidate.age_days + epsilon)
    similarity = _clamp01(candidate.similarity)
    feedback = (candidate.feedback + 1.0) / 2.0
    contributions = Contributions(
        recall=weights.recall * recall,
        recency=weights.recency * recency,
        similarity=weights.similarity * similarity,
        feedback=weights.feedback * feedback,
    )
    total = contributions.recall + contributions.recency
    total += contributions.similarity + contributions.feedback
    factor = feedback_factor(candidate.correct, candidate.incorrect, penalty)
    return ScoreBreakdown(
        recall=recall,
        recency=recency,
        similarity=similarity,
        feedback=feedback,
        contributions=contributions,
        feedback_factor=factor,
        total=_clamp01(total) * factor,
    )


def rank(
    candidates: Sequence[Candidate],
    weights: MRSWeights,
    epsilon: float = DEFAULT_EPSILON,
    incorrect_penalty: float = DEFAULT_INCORRECT_PENALTY,
) -> list[ScoredCandidate]:
    """Score candidates with MRS times their feedback factor and sort them best first.

    Ties are broken by higher raw similarity, then by id (ascending), so the order is total and
    deterministic. The total is clamped to [0, 1] to absorb the 1e-6 slack allowed in the weight sum.
    Empty input gives ``[]``; duplicate ids or a non-positive ``epsilon`` raise ``ValueError``.
    """
    if not math.isfinite(epsilon) or epsilon <= 0.0:
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon}")
    if not candidates:
        return []
    ids = [c.id for c in candidates]
    if len(set(ids)) != len(ids):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"candidate ids must be unique, duplicated: {duplicates}")
    max_recall = max(c.recall_count for c in candidates)
    min_age = min(c.age_days for c in candidates)
    scored = [(c, _breakdown(c, weights, max_recall, min_age, epsilon, incorrect_penalty)) for c in candidates]
    scored.sort(key=lambda pair: (-pair[1].total, -pair[0].similarity, pair[0].id))
    return [ScoredCandidate(id=c.id, score=b.total, breakdown=b) for c, b in scored]

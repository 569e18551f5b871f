"""Tests for memory.scoring: MRS weights, presets, normalisation and ranking (hand-computed)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from memory.models import MemoryType
from memory.scoring import (
    Candidate,
    MRSWeights,
    Preset,
    ScoringConfig,
    feedback_score,
    preset_weights,
    rank,
)

DEFAULT = MRSWeights(recall=0.10, recency=0.15, similarity=0.70, feedback=0.05)


def _cand(name: str, rc: int = 0, age: float = 0.0, sim: float = 0.0, fb: float = 0.0) -> Candidate:
    return Candidate(id=name, recall_count=rc, age_days=age, similarity=sim, feedback=fb)


# Three candidates whose normalised components are round numbers (eps = 0.01):
#   max rc = 4;  freshest age 0.99 -> (0.99 + 0.01) = 1.0 is the recency numerator.
#   A: rc 4 -> 4/4 = 1.0;  age 0.99 -> 1.0/1.0 = 1.0;   sim 0.5 -> 0.5;  fb 0  -> (0+1)/2 = 0.5
#   B: rc 2 -> 2/4 = 0.5;  age 1.99 -> 1.0/2.0 = 0.5;   sim 0.8 -> 0.8;  fb 1  -> (1+1)/2 = 1.0
#   C: rc 0 -> 0/4 = 0.0;  age 3.99 -> 1.0/4.0 = 0.25;  sim -0.2 -> 0.0; fb -1 -> (-1+1)/2 = 0.0
A = _cand("A", rc=4, age=0.99, sim=0.5, fb=0.0)
B = _cand("B", rc=2, age=1.99, sim=0.8, fb=1.0)
C = _cand("C", rc=0, age=3.99, sim=-0.2, fb=-1.0)


def test_rank_default_preset_hand_computed() -> None:
    # default (a, b, c, d) = (0.10, 0.15, 0.70, 0.05)
    # A: 0.10*1.0 + 0.15*1.0  + 0.70*0.5 + 0.05*0.5 = 0.10 + 0.15 + 0.35 + 0.025 = 0.625
    # B: 0.10*0.5 + 0.15*0.5  + 0.70*0.8 + 0.05*1.0 = 0.05 + 0.075 + 0.56 + 0.05 = 0.735
    # C: 0.10*0.0 + 0.15*0.25 + 0.70*0.0 + 0.05*0.0 = 0.0375
    ranked = rank([A, B, C], DEFAULT, epsilon=0.01)
    assert [r.id for r in ranked] == ["B", "A", "C"]
    scores = {r.id: r.score for r in ranked}
    assert scores["A"] == pytest.approx(0.625)
    assert scores["B"] == pytest.approx(0.735)
    assert scores["C"] == pytest.approx(0.0375)


def test_rank_breakdown_components_and_contributions() -> None:
    ranked = {r.id: r.breakdown for r in rank([A, B, C], DEFAULT)}
    b = ranked["B"]
    assert (b.recall, b.recency, b.similarity, b.feedback) == pytest.approx((0.5, 0.5, 0.8, 1.0))
    # contributions = weight * normalised: 0.10*0.5, 0.15*0.5, 0.70*0.8, 0.05*1.0
    contrib = b.contributions
    assert (contrib.recall, contrib.recency, contrib.similarity, contrib.feedback) == pytest.approx(
        (0.05, 0.075, 0.56, 0.05)
    )
    assert b.total == pytest.approx(0.735)
    c = ranked["C"]
    # negative cosine clamps to 0; feedback -1 maps to 0; age 3.99 -> (0.99+0.01)/(3.99+0.01) = 0.25
    assert (c.recall, c.recency, c.similarity, c.feedback) == pytest.approx((0.0, 0.25, 0.0, 0.0))


def test_rank_feedback_freshness_preset_changes_order() -> None:
    # feedback_freshness (0.10, 0.40, 0.10, 0.40)
    # A: 0.10*1.0 + 0.40*1.0 + 0.10*0.5 + 0.40*0.5 = 0.10 + 0.40 + 0.05 + 0.20 = 0.75
    # B: 0.10*0.5 + 0.40*0.5 + 0.10*0.8 + 0.40*1.0 = 0.05 + 0.20 + 0.08 + 0.40 = 0.73
    ranked = rank([A, B, C], preset_weights(Preset.FEEDBACK_FRESHNESS))
    assert [r.id for r in ranked] == ["A", "B", "C"]
    assert ranked[0].score == pytest.approx(0.75)
    assert ranked[1].score == pytest.approx(0.73)


def test_recency_is_relative_to_freshest_and_uses_epsilon() -> None:
    # ages 0 and 1 with eps 0.01: r = 1/0.01 = 100 and 1/1.01; R_norm = 1 and 0.01/1.01 = 0.00990...
    weights = MRSWeights(recall=0.0, recency=1.0, similarity=0.0, feedback=0.0)
    ranked = rank([_cand("old", age=1.0), _cand("new", age=0.0)], weights, epsilon=0.01)
    assert [r.id for r in ranked] == ["new", "old"]
    assert ranked[0].score == pytest.approx(1.0)
    assert ranked[1].score == pytest.approx(0.01 / 1.01)


def test_recall_zero_max_gives_zero_component() -> None:
    weights = MRSWeights(recall=1.0, recency=0.0, similarity=0.0, feedback=0.0)
    ranked = rank([_cand("x"), _cand("y")], weights)
    assert [r.breakdown.recall for r in ranked] == [0.0, 0.0]
    assert [r.score for r in ranked] == [0.0, 0.0]


def test_feedback_map_is_fixed_not_set_relative() -> None:
    # a lone candidate with feedback 0 keeps FS_norm 0.5, it is not rescaled to 1
    ranked = rank([_cand("only", fb=0.0)], preset_weights(Preset.SIMILARITY_ONLY))
    assert ranked[0].breakdown.feedback == 0.5


def test_ties_broken_by_raw_similarity_then_id() -> None:
    only_sim = preset_weights("similarity_only")
    # -0.5 and -0.2 both clamp to 0 -> same score 0; higher raw similarity (-0.2) first
    ranked = rank([_cand("p", sim=-0.5), _cand("q", sim=-0.2)], only_sim)
    assert [r.id for r in ranked] == ["q", "p"]
    assert ranked[0].score == ranked[1].score == 0.0
    # identical inputs: id ascending
    ranked = rank([_cand("b", sim=0.3), _cand("a", sim=0.3)], only_sim)
    assert [r.id for r in ranked] == ["a", "b"]


def test_rank_empty_duplicates_and_epsilon() -> None:
    assert rank([], DEFAULT) == []
    with pytest.raises(ValueError, match="unique"):
        rank([_cand("a"), _cand("a")], DEFAULT)
    with pytest.raises(ValueError, match="epsilon"):
        rank([_cand("a")], DEFAULT, epsilon=0.0)


def test_candidate_validation() -> None:
    with pytest.raises(ValidationError):
        _cand("a", sim=1.5)
    with pytest.raises(ValidationError):
        _cand("a", fb=-1.1)
    with pytest.raises(ValidationError):
        _cand("a", rc=-1)
    with pytest.raises(ValidationError):
        _cand("a", age=-0.1)
    with pytest.raises(ValidationError):
        Candidate.model_validate({"id": "a", "recall_count": 0, "age_days": 0, "similarity": 0, "feedback": 0, "x": 1})


def test_feedback_score() -> None:
    assert feedback_score(0, 0) == 0.0
    assert feedback_score(1, 0) == 1.0  # paper: correct -> 1
    assert feedback_score(0, 1) == -1.0  # paper: incorrect -> -1
    assert feedback_score(3, 1) == pytest.approx(0.5)  # (3 - 1) / (3 + 1) = 2/4
    with pytest.raises(ValueError, match=">= 0"):
        feedback_score(-1, 0)


# --- weights and presets ----------------------------------------------------------------------


def test_weights_must_sum_to_one() -> None:
    with pytest.raises(ValueError, match=r"sum=0\.990000"):
        MRSWeights(recall=0.33, recency=0.33, similarity=0.33, feedback=0.0)
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        MRSWeights(recall=-0.1, recency=0.3, similarity=0.7, feedback=0.1)
    with pytest.raises(ValueError, match="less than or equal to 1"):
        MRSWeights(recall=0.0, recency=0.0, similarity=1.1, feedback=-0.1)
    # exact zeros and c = 1 (the paper's test setup) are accepted
    assert MRSWeights(recall=0.0, recency=0.0, similarity=1.0, feedback=0.0).similarity == 1.0


PRINTED_PRESETS = {
    Preset.DEFAULT: (0.10, 0.15, 0.70, 0.05),
    Preset.SIMILARITY_FRESHNESS: (0.05, 0.35, 0.55, 0.05),
    Preset.POPULARITY_SIMILARITY: (0.30, 0.05, 0.60, 0.05),
    Preset.FEEDBACK_FRESHNESS: (0.10, 0.40, 0.10, 0.40),
    Preset.SIMILARITY_FEEDBACK: (0.05, 0.10, 0.55, 0.30),
    Preset.BALANCED: (0.20, 0.20, 0.50, 0.10),
    Preset.SIMILARITY_ONLY: (0.0, 0.0, 1.0, 0.0),
}


@pytest.mark.parametrize("preset", list(PRINTED_PRESETS), ids=lambda p: p.value)
def test_presets_match_paper(preset: Preset) -> None:
    w = preset_weights(preset)
    assert (w.recall, w.recency, w.similarity, w.feedback) == PRINTED_PRESETS[preset]


def test_core_blend_is_exact_thirds_not_printed_033() -> None:
    # the paper prints (0.33, 0.33, 0.33, 0.00): sum 0.99 violates a+b+c+d = 1
    w = preset_weights(Preset.CORE_BLEND)
    assert (w.recall, w.recency, w.similarity, w.feedback) == (1 / 3, 1 / 3, 1 / 3, 0.0)


def test_preset_lookup_by_name_and_unknown() -> None:
    assert preset_weights("balanced") == preset_weights(Preset.BALANCED)
    with pytest.raises(ValueError, match="core_blend") as err:
        preset_weights("nope")
    assert "nope" in str(err.value)


def test_scoring_config_defaults_and_per_type() -> None:
    cfg = ScoringConfig()
    assert (cfg.epsilon, cfg.top_n, cfg.preset) == (0.01, 20, Preset.DEFAULT)
    assert cfg.weights_for("residual") == DEFAULT
    residual = preset_weights(Preset.POPULARITY_SIMILARITY)
    cfg = ScoringConfig(preset=Preset.BALANCED, per_type={"residual": residual})
    assert cfg.weights_for("residual") == residual
    assert cfg.weights_for(MemoryType.RESIDUAL) == residual
    assert cfg.weights_for("user_question") == preset_weights(Preset.BALANCED)


def test_scoring_config_validation() -> None:
    with pytest.raises(ValidationError):
        ScoringConfig(top_n=0)
    with pytest.raises(ValidationError):
        ScoringConfig(epsilon=0.0)
    with pytest.raises(ValidationError, match="resdual"):
        ScoringConfig(per_type={"resdual": DEFAULT})
    with pytest.raises(ValidationError):
        ScoringConfig.model_validate({"unknown": 1})
    with pytest.raises(ValidationError):
        ScoringConfig.model_validate({"preset": "nope"})


# --- properties -------------------------------------------------------------------------------

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@st.composite
def weights_strategy(draw: st.DrawFn) -> MRSWeights:
    raw = [draw(unit) for _ in range(4)]
    total = sum(raw)
    assume(total > 1e-3)
    a, b, c, d = (x / total for x in raw)
    return MRSWeights(recall=a, recency=b, similarity=c, feedback=d)


candidate_lists = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=1000),
        st.floats(min_value=0.0, max_value=3650.0, allow_nan=False),
        st.floats(min_value=-1.0, max_value=1.0, allow_nan=False),
        st.floats(min_value=-1.0, max_value=1.0, allow_nan=False),
    ),
    min_size=1,
    max_size=12,
).map(
    lambda rows: [
        Candidate(id=f"m{i}", recall_count=rc, age_days=age, similarity=sim, feedback=fb)
        for i, (rc, age, sim, fb) in enumerate(rows)
    ]
)


@settings(deadline=None)
@given(candidate_lists, weights_strategy())
def test_scores_in_unit_interval_and_sorted(cands: list[Candidate], w: MRSWeights) -> None:
    ranked = rank(cands, w)
    assert sorted(r.id for r in ranked) == sorted(c.id for c in cands)
    assert all(0.0 <= r.score <= 1.0 for r in ranked)
    for r in ranked:
        bd = r.breakdown
        assert all(0.0 <= v <= 1.0 for v in (bd.recall, bd.recency, bd.similarity, bd.feedback))
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


@settings(deadline=None)
@given(candidate_lists, weights_strategy(), st.data())
def test_more_feedback_never_lowers_rank(cands: list[Candidate], w: MRSWeights, data: st.DataObject) -> None:
    idx = data.draw(st.integers(min_value=0, max_value=len(cands) - 1))
    target = cands[idx]
    higher = data.draw(st.floats(min_value=target.feedback, max_value=1.0, allow_nan=False))
    before = [r.id for r in rank(cands, w)].index(target.id)
    raised = [*cands[:idx], target.model_copy(update={"feedback": higher}), *cands[idx + 1 :]]
    after = [r.id for r in rank(raised, w)].index(target.id)
    assert after <= before


@given(st.lists(unit, min_size=4, max_size=4))
def test_weights_rejected_unless_sum_is_one(raw: list[float]) -> None:
    assume(abs(sum(raw) - 1.0) > 1e-5)
    with pytest.raises(ValueError, match="sum="):
        MRSWeights(recall=raw[0], recency=raw[1], similarity=raw[2], feedback=raw[3])


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_feedback_score_in_range(correct: int, incorrect: int) -> None:
    assert -1.0 <= feedback_score(correct, incorrect) <= 1.0

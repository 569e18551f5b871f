"""Tests for memory.trust against MARK Appendix 1 and its Table 7, errata included.

Table 7 parameters: alpha 0.8, w_v 1, w_s 4, lambda 0.5, PS-threshold alpha 0.85 (the defaults).
The paper carries each row's PRINTED (rounded) TS into the next row, so row k is recomputed from
row k-1's printed TS (row 1 from TS_init = 1/4 = 0.25) and compared with the printed cell to
within one unit of its last printed digit (the paper sometimes truncates instead of rounding).

Errata found (documented in the tests that pin them, not fudged):
  (a) row 3, PS threshold: printed 0.66, but 0.85 * (1 - 0.21) = 0.6715. The printed value equals
      row 2's threshold, 0.85 * (1 - 0.225) = 0.65875 -> 0.66. With the correct threshold, PS
      3/4.5 = 0.6667 is NOT above it, so the policy drops the memory where the paper prints "Yes".
  (b) row 50, TS: printed 0.18, but no sequence of validations from row 5 reaches it: TS tracks
      (c + 1)/(t + 4) <= 6/54 with lag, and the best case (all 4 remaining corrects first) gives
      0.1212. Row 50 is therefore checked from its printed TS 0.18.
Every other cell agrees with the formulas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from memory.trust import (
    RetentionReason,
    TrustConfig,
    decide_retention,
    next_trust,
    persistence,
    persistence_threshold,
    trust_init,
)

CFG = TrustConfig()  # alpha .8, w_v 1, w_s 4, lam .5, ps_alpha .85 == Table 7


class Row(NamedTuple):
    """One printed Table 7 row; numeric cells kept as printed strings to know their precision."""

    total: int
    correct: int
    incorrect: int
    ts: str
    ts_threshold: str
    ps: str
    ps_threshold: str
    retained: bool


TABLE_7 = [
    Row(1, 0, 1, "0.24", "0.25", "0.67", "0.65", True),
    Row(2, 0, 2, "0.225", "0.25", "0.67", "0.66", True),
    Row(3, 0, 3, "0.21", "0.25", "0.67", "0.66", True),
    Row(4, 1, 3, "0.218", "0.25", "0.72", "0.665", True),
    Row(5, 1, 4, "0.219", "0.25", "0.71", "0.664", True),
    Row(50, 5, 45, "0.18", "0.25", "0.689", "0.697", False),
]
FIRST_FIVE = TABLE_7[:5]
ROW_IDS = [f"total={r.total}" for r in TABLE_7]


def _unit(printed: str) -> float:
    """One unit of the last printed digit, e.g. "0.225" -> 0.001 (plus float slack)."""
    return 10.0 ** -len(printed.split(".")[1]) + 1e-9


def _close(value: float, printed: str) -> bool:
    return abs(value - float(printed)) <= _unit(printed)


def test_defaults_are_table_7_parameters() -> None:
    assert (CFG.alpha, CFG.w_v, CFG.w_s, CFG.lam, CFG.ps_alpha) == (0.8, 1.0, 4.0, 0.5, 0.85)
    assert trust_init(CFG) == 0.25  # w_v / w_s = 1/4


# Row k from row k-1's printed TS:
#   row 1: 0.8*0.25  + 0.2*(0+1)/(1+4) = 0.2    + 0.04     = 0.24     printed 0.24
#   row 2: 0.8*0.24  + 0.2*(0+1)/(2+4) = 0.192  + 0.033333 = 0.225333 printed 0.225
#   row 3: 0.8*0.225 + 0.2*(0+1)/(3+4) = 0.18   + 0.028571 = 0.208571 printed 0.21
#   row 4: 0.8*0.21  + 0.2*(1+1)/(4+4) = 0.168  + 0.05     = 0.218    printed 0.218
#   row 5: 0.8*0.218 + 0.2*(1+1)/(5+4) = 0.1744 + 0.044444 = 0.218844 printed 0.219
@pytest.mark.parametrize("k", range(5), ids=ROW_IDS[:5])
def test_table7_ts_from_previous_printed_ts(k: int) -> None:
    row = FIRST_FIVE[k]
    previous = trust_init(CFG) if k == 0 else float(FIRST_FIVE[k - 1].ts)
    ts = next_trust(previous, row.correct, row.total, CFG)
    assert _close(ts, row.ts), (ts, row.ts)
    assert _close(trust_init(CFG), row.ts_threshold)  # TS threshold column = TS_init = 0.25


def test_table7_row4_needs_printed_carry() -> None:
    # carrying the unrounded row-3 TS (0.208838, see below) gives 0.8*0.208838 + 0.05 = 0.217070,
    # i.e. 0.217, not the printed 0.218: the paper carried the printed 0.21.
    assert next_trust(0.21, 1, 4, CFG) == pytest.approx(0.218)
    assert round(next_trust(0.208838, 1, 4, CFG), 3) == 0.217


def test_table7_full_recursion_unrounded_within_0_002() -> None:
    # unrounded: 0.24, 0.225333, 0.208838, 0.217070, 0.218101
    # printed:   0.24, 0.225,    0.21,     0.218,    0.219     (largest gap 0.00116 at row 3)
    ts = trust_init(CFG)
    for row in FIRST_FIVE:
        ts = next_trust(ts, row.correct, row.total, CFG)
        assert abs(ts - float(row.ts)) <= 0.002, (row.total, ts)
    assert ts == pytest.approx(0.218101, abs=1e-6)


# PS = total / (total + 0.5 * incorrect):
#   1/(1+0.5) = 0.6667 (0.67); 2/(2+1) = 0.6667 (0.67); 3/(3+1.5) = 0.6667 (0.67);
#   4/(4+1.5) = 0.7273 (printed 0.72: truncated); 5/(5+2) = 0.7143 (0.71);
#   50/(50+22.5) = 0.68966 (printed 0.689: truncated)
@pytest.mark.parametrize("row", TABLE_7, ids=ROW_IDS)
def test_table7_persistence(row: Row) -> None:
    ps = persistence(row.total, row.incorrect, CFG)
    assert ps == pytest.approx(row.total / (row.total + 0.5 * row.incorrect))
    assert _close(ps, row.ps), (ps, row.ps)


# PS threshold = 0.85 * (1 - printed TS of the same row):
#   row 1: 0.85*0.76  = 0.646   (0.65)      row 4: 0.85*0.782 = 0.6647  (0.665)
#   row 2: 0.85*0.775 = 0.65875 (0.66)      row 5: 0.85*0.781 = 0.66385 (0.664)
#   row 50: 0.85*0.82 = 0.697   (0.697)     row 3: see the erratum test below
@pytest.mark.parametrize("row", [r for r in TABLE_7 if r.total != 3], ids=[i for i in ROW_IDS if i != "total=3"])
def test_table7_ps_threshold(row: Row) -> None:
    threshold = persistence_threshold(float(row.ts), CFG)
    assert _close(threshold, row.ps_threshold), (threshold, row.ps_threshold)


def test_table7_erratum_row3_ps_threshold_printed_066_is_0_6715() -> None:
    # ERRATUM (a): 0.85 * (1 - 0.21) = 0.85 * 0.79 = 0.6715, printed 0.66 (off by 0.0115 > 0.01).
    threshold = persistence_threshold(0.21, CFG)
    assert threshold == pytest.approx(0.6715)
    assert not _close(threshold, "0.66")
    # the printed value is row 2's threshold carried over: 0.85 * (1 - 0.225) = 0.65875 -> 0.66
    assert round(persistence_threshold(0.225, CFG), 2) == 0.66
    # the unrounded TS (0.208571 from the printed carry) does not rescue it: 0.85*0.791429 = 0.6727
    assert persistence_threshold(0.2085714, CFG) == pytest.approx(0.672714, abs=1e-6)


# Retention: TS < 0.25 in every row, so each row hinges on PS > threshold:
#   row 1: 0.6667 > 0.646; row 2: 0.6667 > 0.65875; row 4: 0.7273 > 0.6647; row 5: 0.7143 > 0.66385
@pytest.mark.parametrize("row", [r for r in FIRST_FIVE if r.total != 3], ids=["1", "2", "4", "5"])
def test_table7_retained_rows(row: Row) -> None:
    decision = decide_retention(float(row.ts), persistence(row.total, row.incorrect, CFG), CFG)
    assert decision.retain is row.retained is True
    assert decision.reason is RetentionReason.PERSISTENT


def test_table7_erratum_row3_paper_says_retained_but_policy_drops() -> None:
    # ERRATUM (a), consequence: PS = 3/4.5 = 0.6667 is not > 0.6715, so the rule drops the memory;
    # the paper prints "Yes" only because of its wrong 0.66 threshold (0.6667 > 0.66).
    decision = decide_retention(0.21, persistence(3, 3, CFG), CFG)
    assert decision.persistence == pytest.approx(2 / 3)
    assert decision.threshold == pytest.approx(0.6715)
    assert decision.retain is False
    assert decision.reason is RetentionReason.UNTRUSTED
    assert TABLE_7[2].retained is True  # what the paper prints
    # also dropped with the printed (rounded) PS 0.67 < 0.6715 and with the unrounded TS
    assert decide_retention(0.21, 0.67, CFG).retain is False
    assert decide_retention(0.2085714, 2 / 3, CFG).retain is False


def _ts_after(start: float, first_correct_steps: set[int]) -> float:
    """Run the recursion from row 5 (total 5, correct 1) to row 50, one recall per step."""
    ts, correct = start, 1
    for total in range(6, 51):
        correct += total in first_correct_steps
        ts = next_trust(ts, correct, total, CFG)
    assert correct == 5
    return ts


def test_table7_erratum_row50_ts_018_unreachable() -> None:
    # ERRATUM (b): from row 5 (TS 0.219, 1 correct of 5) to row 50 (5 correct of 50), the 4 extra
    # corrects can land on any 4 of the 45 steps. Each step's target (c+1)/(t+4) rises with c_t,
    # and "all corrects first" (steps 6..9) maximises c_t at every step, so it bounds TS_50 above;
    # "all last" (steps 47..50) bounds it below. Targets late on are ~6/54 = 0.111.
    best = _ts_after(0.219, {6, 7, 8, 9})
    worst = _ts_after(0.219, {47, 48, 49, 50})
    assert best == pytest.approx(0.12124, abs=1e-5)
    assert worst == pytest.approx(0.07123, abs=1e-5)
    assert worst < best < 0.175 < 0.18
    # even a perfect TS of 1.0 at row 5 only adds 0.8**45 ~ 4e-5: still far below 0.18
    assert _ts_after(1.0, {6, 7, 8, 9}) < 0.122


@settings(deadline=None, max_examples=50)
@given(st.sets(st.integers(min_value=6, max_value=50), min_size=4, max_size=4))
def test_table7_row50_any_order_between_bounds(steps: set[int]) -> None:
    ts = _ts_after(0.219, steps)
    assert _ts_after(0.219, {47, 48, 49, 50}) - 1e-12 <= ts <= _ts_after(0.219, {6, 7, 8, 9}) + 1e-12


def test_table7_row50_from_printed_ts() -> None:
    # PS = 50/72.5 = 0.68966 (printed 0.689); threshold 0.85*(1-0.18) = 0.697; 0.68966 < 0.697 -> No
    row = TABLE_7[5]
    decision = decide_retention(float(row.ts), persistence(row.total, row.incorrect, CFG), CFG)
    assert _close(decision.persistence, row.ps)
    assert decision.threshold == pytest.approx(0.697)
    assert decision.retain is row.retained is False
    assert decision.reason is RetentionReason.UNTRUSTED


# --- policy, validation, properties -----------------------------------------------------------


def test_trusted_memory_is_retained_regardless_of_persistence() -> None:
    decision = decide_retention(0.25, 0.5, CFG)  # TS == TS_init counts as trusted (>=)
    assert (decision.retain, decision.reason) == (True, RetentionReason.TRUSTED)


def test_persistence_of_unrecalled_memory_is_one() -> None:
    assert persistence(0, 0, CFG) == 1.0
    assert persistence(4, 0, CFG) == 1.0


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: next_trust(0.25, 2, 1, CFG), "cannot exceed"),
        (lambda: next_trust(0.25, -1, 1, CFG), ">= 0"),
        (lambda: next_trust(1.5, 0, 1, CFG), "within"),
        (lambda: persistence(1, 2, CFG), "cannot exceed"),
        (lambda: persistence(-1, 0, CFG), ">= 0"),
        (lambda: persistence_threshold(-0.1, CFG), "within"),
        (lambda: decide_retention(0.2, 1.2, CFG), "within"),
    ],
    ids=["correct>total", "negative", "trust>1", "incorrect>total", "neg-total", "trust<0", "ps>1"],
)
def test_invalid_arguments(call: Callable[[], object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_config_validation() -> None:
    assert TrustConfig(lam=1.0).lam == 1.0
    for bad in ({"alpha": 1.0}, {"alpha": 0.0}, {"lam": 0.0}, {"lam": 1.1}, {"ps_alpha": 1.0}):
        with pytest.raises(ValidationError):
            TrustConfig.model_validate(bad)
    with pytest.raises(ValidationError, match="w_v must be <= w_s"):
        TrustConfig(w_v=5.0, w_s=4.0)
    with pytest.raises(ValidationError):
        TrustConfig.model_validate({"beta": 1})


@given(st.integers(min_value=0, max_value=10**6), st.data())
def test_persistence_in_half_open_unit_interval(total: int, data: st.DataObject) -> None:
    incorrect = data.draw(st.integers(min_value=0, max_value=total))
    ps = persistence(total, incorrect, CFG)
    assert 0.0 < ps <= 1.0
    assert ps >= 1 / (1 + CFG.lam) - 1e-12  # incorrect <= total


@given(
    st.floats(min_value=0.0, max_value=1.0),
    st.lists(st.sampled_from(["correct", "incorrect", "unvalidated"]), max_size=60),
    st.floats(min_value=0.01, max_value=0.99),
    st.floats(min_value=0.01, max_value=1.0),
    st.floats(min_value=0.0, max_value=3.0),
)
def test_trust_stays_in_unit_interval(start: float, events: list[str], alpha: float, w_v: float, extra: float) -> None:
    cfg = TrustConfig(alpha=alpha, w_v=w_v, w_s=w_v + extra)
    ts, correct = start, 0
    for total, event in enumerate(events, start=1):
        correct += event == "correct"
        ts = next_trust(ts, correct, total, cfg)
        assert 0.0 <= ts <= 1.0

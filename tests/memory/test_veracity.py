"""Tests for memory.veracity (VeriMem V1-V3), with the arithmetic written out."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from memory.models import Source
from memory.veracity import (
    FactCheck,
    Risk,
    VeracityConfig,
    consistency,
    is_high_veracity,
    needs_recheck,
    recheck,
    score,
    should_fact_check,
    temporal_decay,
    threshold,
)

CFG = VeracityConfig()


def test_defaults() -> None:
    assert (CFG.alpha, CFG.beta, CFG.gamma) == (0.4, 0.3, 0.3)
    assert (CFG.delta_low, CFG.delta_medium, CFG.delta_high) == (0.1, 0.2, 0.4)
    cred = CFG.credibility
    assert cred["sme"] > cred["user"] > cred["model"]  # SME > user > model


def test_temporal_decay() -> None:
    assert temporal_decay(0.0, CFG) == 1.0
    # exp(-0.005 * 100) = exp(-0.5) = 0.606531
    assert temporal_decay(100.0, CFG) == pytest.approx(0.606531, abs=1e-6)
    with pytest.raises(ValueError, match="age_days"):
        temporal_decay(-1.0, CFG)


def test_consistency() -> None:
    assert consistency([], CFG) == 0.5  # no high-veracity memory: neutral
    # (0.9 + 0.5 + clamp(-0.2)=0) / 3 = 1.4 / 3 = 0.466667
    assert consistency([0.9, 0.5, -0.2], CFG) == pytest.approx(1.4 / 3)
    assert consistency([1.0000001], CFG) == 1.0  # rounding above 1 is clamped
    with pytest.raises(ValueError, match="finite"):
        consistency([math.nan], CFG)


def test_is_high_veracity_is_strict() -> None:
    assert not is_high_veracity(0.6, CFG)  # H = {V > tau_crit}, tau_crit = 0.6
    assert is_high_veracity(0.61, CFG)


def test_score_hand_computed() -> None:
    # SME, C 0.8, new: 0.4*1.0 + 0.3*0.8 + 0.3*1.0 = 0.4 + 0.24 + 0.3 = 0.94
    assert score("sme", 0.8, 0.0, CFG) == pytest.approx(0.94)
    # model, C 0.5, 100 days: 0.4*0.3 + 0.3*0.5 + 0.3*0.606531 = 0.12 + 0.15 + 0.181959 = 0.451959
    assert score("model", 0.5, 100.0, CFG) == pytest.approx(0.451959, abs=1e-6)
    # the Source enum from memory.models works as a key: 0.4*0.6 + 0.3*0.5 + 0.3*1 = 0.69
    assert score(Source.USER, 0.5, 0.0, CFG) == pytest.approx(0.69)


def test_score_unknown_source_lists_known() -> None:
    with pytest.raises(ValueError, match="model, sme, user"):
        score("wiki", 0.5, 0.0, CFG)
    with pytest.raises(ValueError, match="consistency"):
        score("sme", 1.5, 0.0, CFG)


def test_recheck() -> None:
    assert recheck(0.5, 1.0, CFG) == pytest.approx(0.65)  # 0.7*0.5 + 0.3*1   = 0.35 + 0.3
    assert recheck(0.9, 0.0, CFG) == pytest.approx(0.63)  # 0.7*0.9 + 0.3*0   = 0.63
    assert recheck(0.4, 0.5, CFG) == pytest.approx(0.43)  # 0.7*0.4 + 0.3*0.5 = 0.28 + 0.15
    assert recheck(0.4, FactCheck.CONFIRM, CFG) == pytest.approx(0.58)  # 0.28 + 0.3
    with pytest.raises(ValueError, match="fact_check"):
        recheck(0.5, 0.7, CFG)
    with pytest.raises(ValueError, match="veracity"):
        recheck(1.2, 1.0, CFG)


def test_threshold_by_risk() -> None:
    assert threshold(Risk.HIGH, CFG) == pytest.approx(0.7)  # 0.5 * (1 + 0.4)
    assert threshold("medium", CFG) == pytest.approx(0.6)  # 0.5 * (1 + 0.2)
    assert threshold(Risk.LOW, CFG) == pytest.approx(0.45)  # 0.5 * (1 - 0.1)
    assert threshold(Risk.HIGH, VeracityConfig(tau_base=0.9)) == 1.0  # 0.9 * 1.4 = 1.26 -> 1
    with pytest.raises(ValueError, match="high, medium, low"):
        threshold("extreme", CFG)


def test_needs_recheck() -> None:
    assert needs_recheck(0.65, Risk.HIGH, CFG)  # 0.65 < 0.7
    assert not needs_recheck(0.65, Risk.MEDIUM, CFG)  # 0.65 >= 0.6
    assert not needs_recheck(0.45, Risk.LOW, CFG)  # equal to threshold: usable
    assert needs_recheck(0.449, "low", CFG)


def test_should_fact_check() -> None:
    assert should_fact_check(0.8, 0.7, CFG)  # 0.8 > 1.0*0.7
    assert not should_fact_check(0.7, 0.7, CFG)  # not strictly greater
    assert not should_fact_check(0.8, 0.7, VeracityConfig(idf_sensitivity=2.0))  # 0.8 < 1.4
    with pytest.raises(ValueError, match="idf"):
        should_fact_check(-1.0, 0.5, CFG)


def test_config_validation() -> None:
    with pytest.raises(ValidationError, match=r"sum=0\.900000"):
        VeracityConfig(alpha=0.3)
    with pytest.raises(ValidationError, match="delta_low < delta_medium"):
        VeracityConfig(delta_low=0.2)  # 0.2 == delta_medium: the order is strict
    with pytest.raises(ValidationError):
        VeracityConfig(delta_high=1.0)
    with pytest.raises(ValidationError, match="'sme'"):
        VeracityConfig(credibility={"sme": 1.5})
    with pytest.raises(ValidationError):
        VeracityConfig(credibility={})
    with pytest.raises(ValidationError):
        VeracityConfig(kappa=1.0)
    with pytest.raises(ValidationError):
        VeracityConfig.model_validate({"theta": 1.0})


# --- properties -------------------------------------------------------------------------------

unit = st.floats(min_value=0.0, max_value=1.0)


@given(
    st.sampled_from(["sme", "user", "model"]),
    unit,
    st.floats(min_value=0.0, max_value=1e6),
)
def test_score_in_unit_interval(source: str, c: float, age: float) -> None:
    assert 0.0 <= score(source, c, age, CFG) <= 1.0


@given(unit, st.sampled_from(list(FactCheck)))
def test_recheck_moves_towards_fact_check(v: float, f: FactCheck) -> None:
    new = recheck(v, f, CFG)
    assert min(v, f.value) - 1e-12 <= new <= max(v, f.value) + 1e-12


@given(st.floats(min_value=0.0, max_value=1e4), st.floats(min_value=0.0, max_value=1e4))
def test_temporal_decay_non_increasing(a: float, b: float) -> None:
    young, old = sorted((a, b))
    assert temporal_decay(old, CFG) <= temporal_decay(young, CFG) <= 1.0


@given(
    st.floats(min_value=0.01, max_value=0.3),
    st.floats(min_value=0.01, max_value=0.3),
    st.floats(min_value=0.01, max_value=0.3),
    unit,
)
def test_threshold_order_high_medium_low(low: float, step1: float, step2: float, base: float) -> None:
    cfg = VeracityConfig(delta_low=low, delta_medium=low + step1, delta_high=low + step1 + step2, tau_base=base)
    assert threshold(Risk.HIGH, cfg) >= threshold(Risk.MEDIUM, cfg) >= threshold(Risk.LOW, cfg)


def test_initial_score_uses_only_high_veracity_neighbours() -> None:
    from memory.veracity import VeracityConfig, initial_score, score

    cfg = VeracityConfig()  # alpha 0.4, beta 0.3, gamma 0.3, tau_crit 0.6, SME credibility 1.0
    neighbours = [(0.9, 0.8), (0.5, 0.99), (0.7, 0.6)]  # the 0.5-veracity one is not in H
    assert initial_score("sme", neighbours, cfg) == pytest.approx(0.4 * 1.0 + 0.3 * 0.7 + 0.3 * 1.0)
    assert initial_score("sme", [], cfg) == score("sme", cfg.neutral_consistency, 0.0, cfg)

"""Veracity decay and re-check through the engine, audited."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.audit import EventKind
from memory.engine import MemoryEngine
from memory.models import MemoryType, Source
from memory.recheck import apply_fact_check, due
from tests.conftest import NOW


def test_decay_makes_memories_due_and_a_confirmation_restores_them(engine: MemoryEngine) -> None:
    rec = engine.add("tropicamide drops are 0.5 to 1 percent", MemoryType.RESIDUAL, "u", source=Source.USER, now=NOW)
    # user source: V = 0.4*0.6 + 0.3*0.5 (no high-veracity neighbours) + 0.3*1 = 0.69 >= tau(medium) = 0.6
    assert rec.record.veracity == pytest.approx(0.69)
    assert due(engine, NOW) == []
    later = NOW + timedelta(days=200)
    # T = exp(-0.005*200) = 0.3679: V = 0.69 - 0.3*(1 - 0.3679) = 0.5004 < 0.6
    assert [r.id for r in due(engine, later)] == [rec.record.id]
    after = apply_fact_check(engine, rec.record.id, 1.0, now=later)
    # V' = 0.7*0.5004 + 0.3*1 = 0.6503
    assert after.veracity == pytest.approx(0.7 * (0.69 - 0.3 * (1 - 0.36788)) + 0.3, abs=1e-4)
    assert due(engine, later) == []
    assert [e.kind for e in engine.history(rec.record.id)][-1] is EventKind.RECHECK
    with pytest.raises(ValueError):
        apply_fact_check(engine, rec.record.id, 0.7, now=later)

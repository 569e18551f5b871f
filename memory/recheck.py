"""Veracity re-checks (VeriMem V2): which memories are due, and applying a fact-check result F."""

from __future__ import annotations

from datetime import datetime

from memory import veracity
from memory.audit import EventKind
from memory.engine import MemoryEngine, utcnow
from memory.models import SEARCHABLE, MemoryRecord
from memory.search import veracity_now
from memory.veracity import Risk


def due(engine: MemoryEngine, now: datetime, risk: Risk = Risk.MEDIUM) -> list[MemoryRecord]:
    """Searchable memories whose current veracity fell under the threshold of ``risk``."""
    tau = veracity.threshold(risk, engine.config.veracity)
    return [r for r in engine.list() if r.status in SEARCHABLE and veracity_now(r, now, engine.config.veracity) < tau]


def apply_fact_check(
    engine: MemoryEngine, memory_id: str, fact_check: float, now: datetime | None = None, actor: str = "veracity"
) -> MemoryRecord:
    """V' = kappa*V + (1-kappa)*F with F in {0, 0.5, 1}, from the veracity at ``now``; audited."""
    now = now or utcnow()
    record = engine.get(memory_id)
    before = veracity_now(record, now, engine.config.veracity)
    record.veracity = veracity.recheck(before, fact_check, engine.config.veracity)
    record.veracity_at = now
    detail = {"F": fact_check, "before": before, "after": record.veracity}
    engine.apply([(record, EventKind.RECHECK, detail)], now, actor)
    return record

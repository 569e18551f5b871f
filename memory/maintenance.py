"""Retention (MARK appendix 1, seed 001 S6): decisions are computed purely, then applied via the log."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from memory import trust
from memory.audit import EventKind
from memory.engine import MemoryEngine, utcnow
from memory.engine_config import EngineConfig
from memory.models import SEARCHABLE, Category, MemoryRecord, Status
from memory.search import age_days


class MaintenanceDecision(BaseModel):
    """What maintenance does to one memory, and why."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    action: Status
    reason: str


def decide(record: MemoryRecord, now: datetime, cfg: EngineConfig) -> MaintenanceDecision | None:
    """The retention decision for one memory at ``now`` (None: keep it as it is). Pure."""
    if record.status not in SEARCHABLE:
        return None
    if record.category is Category.EPISODIC and age_days(record, now) > cfg.episodic_ttl_days:
        return MaintenanceDecision(memory_id=record.id, action=Status.ARCHIVED, reason="episodic TTL expired")
    if record.confidence < cfg.min_confidence:
        return MaintenanceDecision(memory_id=record.id, action=Status.PRUNED, reason="confidence below floor")
    retention = trust.decide_retention(record.trust, record.persistence, cfg.trust)
    if not retention.retain:
        reason = (
            f"trust {retention.trust:.3f} < init and "
            f"persistence {retention.persistence:.3f} <= {retention.threshold:.3f}"
        )
        return MaintenanceDecision(memory_id=record.id, action=Status.PRUNED, reason=reason)
    return None


def plan(engine: MemoryEngine, now: datetime) -> list[MaintenanceDecision]:
    """Decisions for every memory in the store (nothing is changed)."""
    decisions = (decide(r, now, engine.config) for r in engine.list())
    return [d for d in decisions if d is not None]


def maintain(engine: MemoryEngine, now: datetime | None = None, dry_run: bool = False) -> list[MaintenanceDecision]:
    """Apply the retention decisions through the audit log; nothing is hard-deleted."""
    now = now or utcnow()
    decisions = plan(engine, now)
    if not dry_run:
        for d in decisions:
            kind = EventKind.PRUNE if d.action is Status.PRUNED else EventKind.STATUS
            engine.set_status(d.memory_id, d.action, kind, {"reason": d.reason}, now=now, actor="maintenance")
    return decisions

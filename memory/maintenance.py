"""Maintenance (MARK appendix 1, seed 001 S6, VeriMem V2): retention, then re-checks, through the log.

Retention decisions are pure (:func:`decide`): a memory past the TTL of its category is archived (seed 001
S6: episodic 90 days, constraints never), a superseded one after ``superseded_archive_days``; one
under the confidence floor, or dropped by the trust / persistence rule, is pruned, except a shared
SME memory, which goes to a reviewer instead (users' votes must never silently delete domain
knowledge). The memories retention keeps and whose veracity fell under the medium-risk threshold
are then re-checked (``memory.recheck``), and every user's history is brought under its cap
(:mod:`memory.history_retention`). Nothing is hard-deleted; every change is an audited event.

:func:`run_if_due` runs maintenance when the last run is older than an interval (``mark chat`` and
each lifecycle run call it first). The time of the last run is kept in ``maintenance.json`` beside
the audit log, written atomically after the run: a run cut short is simply run again, which is
safe, since every decision is recomputed from the store as it is.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from memory import recheck, trust
from memory.audit import EventKind
from memory.engine import MemoryEngine, utcnow
from memory.engine_config import EngineConfig
from memory.history_retention import CapReport
from memory.models import SEARCHABLE, MemoryRecord, Source, Status
from memory.recheck import RecheckDecision
from memory.search import age_days

log = logging.getLogger(__name__)
ACTOR = "maintenance"
STATE_FILE = "maintenance.json"


class MaintenanceRule(StrEnum):
    """Which retention rule a decision comes from."""

    TTL = "ttl"
    SUPERSEDED = "superseded"
    CONFIDENCE = "confidence"
    RETENTION = "retention"


class MaintenanceDecision(BaseModel):
    """What maintenance does to one memory, and why."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    action: Status
    rule: MaintenanceRule
    reason: str


class MaintenanceReport(BaseModel):
    """One maintenance run: retention decisions, then re-checks of the memories it kept."""

    model_config = ConfigDict(extra="forbid")

    at: datetime
    dry_run: bool
    decisions: list[MaintenanceDecision]
    rechecks: list[RecheckDecision]
    history: list[CapReport] = Field(default_factory=list)  # users' histories brought under their cap

    def counts(self) -> dict[str, int]:
        """How many memories each action touched (``archived``, ``pruned``, ``refresh``, ...)."""
        out: dict[str, int] = {}
        for name in [d.action.value for d in self.decisions] + [r.action.value for r in self.rechecks]:
            out[name] = out.get(name, 0) + 1
        archived = sum(len(c.archived) for c in self.history)
        if archived:
            out["history events archived"] = archived
        return out

    def summary(self) -> str:
        """One line: the counts, or that nothing was due."""
        counts = ", ".join(f"{n} {name}" for name, n in sorted(self.counts().items()))
        return f"maintenance{' (dry run)' if self.dry_run else ''}: {counts or 'nothing to do'}"


def _protected(record: MemoryRecord) -> bool:
    """Shared SME memory is never pruned by maintenance: a reviewer decides."""
    return record.shared and record.source is Source.SME


def _drop(record: MemoryRecord, rule: MaintenanceRule, reason: str) -> MaintenanceDecision:
    if _protected(record):
        reason = f"{reason}; shared SME memory: sent to review instead of pruning"
        return MaintenanceDecision(memory_id=record.id, action=Status.PENDING_REVIEW, rule=rule, reason=reason)
    return MaintenanceDecision(memory_id=record.id, action=Status.PRUNED, rule=rule, reason=reason)


def decide(record: MemoryRecord, now: datetime, cfg: EngineConfig) -> MaintenanceDecision | None:
    """The retention decision for one memory at ``now`` (None: keep it as it is). Pure."""
    if record.status is Status.SUPERSEDED and cfg.superseded_archive_days is not None:
        since = max(0.0, (now - record.updated_at).total_seconds() / 86400.0)
        if since > cfg.superseded_archive_days:
            reason = f"superseded {since:.0f} days ago (archived after {cfg.superseded_archive_days:g})"
            return MaintenanceDecision(
                memory_id=record.id, action=Status.ARCHIVED, rule=MaintenanceRule.SUPERSEDED, reason=reason
            )
        return None
    if record.status not in SEARCHABLE:
        return None
    ttl = cfg.ttl_days.get(record.category)
    if ttl is not None and age_days(record, now) > ttl:
        reason = f"{record.category.value} TTL of {ttl:g} days expired"
        return MaintenanceDecision(memory_id=record.id, action=Status.ARCHIVED, rule=MaintenanceRule.TTL, reason=reason)
    if record.confidence < cfg.min_confidence:
        reason = f"confidence {record.confidence:.3f} below the floor {cfg.min_confidence}"
        return _drop(record, MaintenanceRule.CONFIDENCE, reason)
    retention = trust.decide_retention(record.trust, record.persistence, cfg.trust)
    if not retention.retain:
        reason = (
            f"trust {retention.trust:.3f} < init and "
            f"persistence {retention.persistence:.3f} <= {retention.threshold:.3f}"
        )
        return _drop(record, MaintenanceRule.RETENTION, reason)
    return None


def plan(engine: MemoryEngine, now: datetime) -> list[MaintenanceDecision]:
    """Retention decisions for every memory in the store (nothing is changed)."""
    decisions = (decide(r, now, engine.config) for r in engine.list())
    return [d for d in decisions if d is not None]


def maintain(engine: MemoryEngine, now: datetime | None = None, dry_run: bool = False) -> MaintenanceReport:
    """Apply the retention decisions, then re-check the due memories it kept; all through the audit log."""
    now = now or utcnow()
    records = engine.list()
    decisions = [d for d in (decide(r, now, engine.config) for r in records) if d is not None]
    decided = {d.memory_id for d in decisions}
    rechecks = recheck.plan(engine, now, [r for r in records if r.id not in decided])
    if not dry_run:
        for d in decisions:
            kind = EventKind.PRUNE if d.action is Status.PRUNED else EventKind.STATUS
            detail = {"reason": d.reason, "rule": d.rule.value}
            engine.set_status(d.memory_id, d.action, kind, detail, now=now, actor=ACTOR)
            log.info("maintenance %s: %s (%s)", d.memory_id, d.action.value, d.reason)
        recheck.apply(engine, rechecks, now)
    capped = _cap_histories(engine, now, dry_run)
    report = MaintenanceReport(at=now, dry_run=dry_run, decisions=decisions, rechecks=rechecks, history=capped)
    log.info("%s", report.summary())
    return report


def _cap_histories(engine: MemoryEngine, now: datetime, dry_run: bool) -> list[CapReport]:
    """Bring every user's history under ``HistoryConfig.max_events`` (nothing to do without a cap)."""
    if engine.history_config.max_events is None:
        return []
    from memory.history_retention import apply_cap

    history = engine.episodes
    reports = (apply_cap(history, user, now, dry_run) for user in history.store.users())
    return [r for r in reports if r is not None]


def state_path(engine: MemoryEngine) -> Path:
    """Where the time of the last maintenance run is kept: beside the audit log."""
    return engine.audit.path.with_name(STATE_FILE)


def last_run(path: Path) -> datetime | None:
    """The time of the last maintenance run (None: never, or an unreadable state file)."""
    try:
        return datetime.fromisoformat(json.loads(path.read_text(encoding="utf-8"))["last_run"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("unreadable maintenance state %s (%s): maintenance is due", path, exc)
        return None


def _record_run(path: Path, report: MaintenanceReport) -> None:
    """Write the state file atomically (temporary file, fsync, rename)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = {"last_run": report.at.isoformat(), "counts": report.counts()}
    with tmp.open("w", encoding="utf-8") as handle:
        json.dump(data, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def run_if_due(engine: MemoryEngine, now: datetime, every_hours: float) -> MaintenanceReport | None:
    """Run :func:`maintain` when the last run is ``every_hours`` old or more (0: never); None when not run."""
    if every_hours <= 0:
        return None
    path = state_path(engine)
    last = last_run(path)
    if last is not None and now - last < timedelta(hours=every_hours):
        log.debug("maintenance not due: last run %s, every %s h", last.isoformat(), every_hours)
        return None
    report = maintain(engine, now)
    _record_run(path, report)
    log.debug("maintenance run recorded in %s", path)
    return report

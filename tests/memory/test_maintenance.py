"""Maintenance (memory.maintenance): retention decisions, re-checks, dry runs, the audit trail, the schedule.

Retention numbers (MARK appendix 1, alpha 0.8, w_v 1, w_s 4, lambda 0.5, PS alpha 0.85): three
counted "incorrect" votes on a memory never recalled (C_total = number of votes) give
TS = 0.8*0.25 + 0.2*1/5 = 0.24, then 0.8*0.24 + 0.2*1/6 = 0.225333, then 0.8*0.225333 + 0.2*1/7 =
0.208838 < TS_init 0.25; PS = 3 / (3 + 0.5*3) = 0.666667 <= 0.85 * (1 - 0.208838) = 0.672488: dropped.
After two votes PS 2/3 = 0.666667 > 0.85 * (1 - 0.225333) = 0.658467: kept.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from memory.audit import EventKind
from memory.engine import MemoryEngine
from memory.engine_config import EngineConfig
from memory.maintenance import (
    MaintenanceRule,
    decide,
    last_run,
    maintain,
    plan,
    run_if_due,
    state_path,
)
from memory.models import Category, MemoryRecord, MemoryType, Source, Status, VoterRole
from memory.recheck import RecheckAction
from tests.conftest import NOW

RES, UQ = MemoryType.RESIDUAL, MemoryType.USER_QUESTION
CFG = EngineConfig()


def _record(**fields: object) -> MemoryRecord:
    base: dict[str, object] = {
        "id": "m",
        "text": "alice wants doses in micrograms",
        "type": UQ,
        "user_id": "alice",
        "created_at": NOW,
        "updated_at": NOW,
        "veracity_at": NOW,
    }
    return MemoryRecord.model_validate({**base, **fields})


def test_decide_ttl_confidence_retention_and_keep() -> None:
    episodic = _record(category=Category.EPISODIC, created_at=NOW - timedelta(days=91))
    ttl = decide(episodic, NOW, CFG)
    assert ttl is not None and (ttl.action, ttl.rule) == (Status.ARCHIVED, MaintenanceRule.TTL)
    assert decide(_record(category=Category.EPISODIC, created_at=NOW - timedelta(days=89)), NOW, CFG) is None
    assert decide(_record(category=Category.CONSTRAINT, created_at=NOW - timedelta(days=900)), NOW, CFG) is None
    low = decide(_record(confidence=0.04), NOW, CFG)  # under the 0.05 floor
    assert low is not None and (low.action, low.rule) == (Status.PRUNED, MaintenanceRule.CONFIDENCE)
    dropped = decide(_record(trust=0.208838, persistence=3 / 4.5), NOW, CFG)
    assert dropped is not None and (dropped.action, dropped.rule) == (Status.PRUNED, MaintenanceRule.RETENTION)
    assert dropped.reason == "trust 0.209 < init and persistence 0.667 <= 0.672"
    assert decide(_record(trust=0.225333, persistence=2 / 3), NOW, CFG) is None  # PS 0.6667 > 0.6585
    assert decide(_record(trust=0.1, persistence=0.1, status=Status.SUPERSEDED), NOW, CFG) is None


def test_decide_never_prunes_shared_sme_memory() -> None:
    sme = {"type": RES, "user_id": "dr-ana", "source": Source.SME}
    for fields in ({"confidence": 0.0}, {"trust": 0.208838, "persistence": 3 / 4.5}):
        d = decide(_record(**sme, **fields), NOW, CFG)
        assert d is not None and d.action is Status.PENDING_REVIEW
        assert d.reason.endswith("; shared SME memory: sent to review instead of pruning")
    # a shared memory from anyone else, or an SME's personal memory, is pruned as usual
    for other in ({"type": RES, "user_id": "bob", "source": Source.USER}, {"source": Source.SME}):
        d = decide(_record(**other, confidence=0.0), NOW, CFG)
        assert d is not None and d.action is Status.PRUNED


def _vote(engine: MemoryEngine, memory_id: str, n: int, role: VoterRole = VoterRole.USER) -> MemoryRecord:
    for _ in range(n):
        record = engine.feedback(memory_id, correct=False, now=NOW, actor="t", role=role)
    return record


def test_maintain_prunes_archives_and_reviews_through_the_audit_log(engine: MemoryEngine) -> None:
    voted = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    kept = engine.add("bob wants answers in one line", UQ, "bob", now=NOW).record
    sme = engine.add("tropicamide drops are 0.5 to 1 percent", RES, "dr-ana", source=Source.SME, now=NOW).record
    old = engine.add(
        "alice saw the eye doctor on monday", UQ, "alice", category=Category.EPISODIC, now=NOW - timedelta(days=100)
    ).record
    assert _vote(engine, voted.id, 3).trust == pytest.approx(0.208838, abs=1e-6)
    _vote(engine, kept.id, 2)
    _vote(engine, sme.id, 3, VoterRole.SME)  # counted in full: the same TS and PS as `voted`
    report = maintain(engine, NOW)
    actions = {d.memory_id: (d.action, d.rule) for d in report.decisions}
    assert actions == {
        voted.id: (Status.PRUNED, MaintenanceRule.RETENTION),
        sme.id: (Status.PENDING_REVIEW, MaintenanceRule.RETENTION),
        old.id: (Status.ARCHIVED, MaintenanceRule.TTL),
    }
    # the episodic memory is also under the veracity threshold at NOW (day 100: 0.69 - 0.3*(1 - e^-0.5)
    # = 0.5720), but it is archived, not re-checked; the SME one (V 0.85*0.7^3 = 0.2916) goes to review
    assert report.rechecks == []
    assert engine.get(voted.id).status is Status.PRUNED and engine.get(kept.id).status is Status.ACTIVE
    assert engine.get(sme.id).status is Status.PENDING_REVIEW and engine.get(old.id).status is Status.ARCHIVED
    kinds = {m: engine.history(m)[-1] for m in (voted.id, sme.id, old.id)}
    assert kinds[voted.id].kind is EventKind.PRUNE and kinds[sme.id].kind is EventKind.STATUS
    assert kinds[old.id].kind is EventKind.STATUS
    for event in kinds.values():
        assert event.actor == "maintenance" and event.detail["rule"] in {"retention", "ttl"}
    assert kinds[sme.id].detail["status"] == "pending_review"
    assert engine.search("doses in micrograms", "alice", now=NOW).all_hits() == []
    assert maintain(engine, NOW).decisions == []  # nothing left to decide


def test_dry_run_reports_everything_and_changes_nothing(engine: MemoryEngine) -> None:
    voted = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    due = engine.add("bob wants answers in one line", UQ, "bob", now=NOW).record
    _vote(engine, voted.id, 3)
    before = [r.model_dump() for r in engine.list()]
    events = engine.audit.count()
    later = NOW + timedelta(days=72)
    report = maintain(engine, later, dry_run=True)
    assert report.dry_run and [d.memory_id for d in report.decisions] == [voted.id]
    assert [(r.memory_id, r.action) for r in report.rechecks] == [(due.id, RecheckAction.NEUTRAL)]
    assert report.summary() == "maintenance (dry run): 1 neutral, 1 pruned"
    assert [r.model_dump() for r in engine.list()] == before and engine.audit.count() == events
    applied = maintain(engine, later)
    assert applied.model_dump(exclude={"dry_run"}) == report.model_dump(exclude={"dry_run"})
    assert engine.audit.count() == events + 2


def test_run_if_due_keeps_its_schedule_in_a_state_file(engine: MemoryEngine) -> None:
    path = state_path(engine)
    assert path.parent == engine.audit.path.parent and last_run(path) is None
    assert run_if_due(engine, NOW, every_hours=0) is None and not path.exists()  # 0: never
    first = run_if_due(engine, NOW, every_hours=24)
    assert first is not None and first.summary() == "maintenance: nothing to do"
    assert last_run(path) == NOW and json.loads(path.read_text())["counts"] == {}
    assert run_if_due(engine, NOW + timedelta(hours=23), every_hours=24) is None
    assert last_run(path) == NOW
    engine.add("bob wants answers in one line", UQ, "bob", now=NOW)
    second = run_if_due(engine, NOW + timedelta(days=72), every_hours=24)
    assert second is not None and second.counts() == {"neutral": 1}
    assert last_run(path) == NOW + timedelta(days=72)
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_an_unreadable_state_file_means_maintenance_is_due(engine: MemoryEngine) -> None:
    path = state_path(engine)
    path.write_text("{not json", encoding="utf-8")
    assert last_run(path) is None
    assert run_if_due(engine, NOW, every_hours=24) is not None and last_run(path) == NOW


def test_plan_lists_retention_decisions_only(engine: MemoryEngine) -> None:
    voted = engine.add("alice wants doses in micrograms", UQ, "alice", now=NOW).record
    _vote(engine, voted.id, 3)
    assert [d.memory_id for d in plan(engine, NOW)] == [voted.id]
    assert engine.get(voted.id).status is Status.ACTIVE


def test_ttl_by_category_and_superseded_memories_archived_after_their_age() -> None:
    cfg = EngineConfig(ttl_days={Category.EPISODIC: 90.0, Category.PREFERENCE: 30.0}, superseded_archive_days=180.0)
    liked = decide(_record(category=Category.PREFERENCE, created_at=NOW - timedelta(days=31)), NOW, cfg)
    assert liked is not None and liked.reason == "preference TTL of 30 days expired"
    assert decide(_record(category=Category.FACT, created_at=NOW - timedelta(days=3000)), NOW, cfg) is None
    old = _record(status=Status.SUPERSEDED, updated_at=NOW - timedelta(days=181))
    archived = decide(old, NOW, cfg)
    assert archived is not None and (archived.action, archived.rule) == (Status.ARCHIVED, MaintenanceRule.SUPERSEDED)
    assert archived.reason == "superseded 181 days ago (archived after 180)"
    assert decide(_record(status=Status.SUPERSEDED, updated_at=NOW - timedelta(days=179)), NOW, cfg) is None
    assert decide(old, NOW, EngineConfig(superseded_archive_days=None)) is None

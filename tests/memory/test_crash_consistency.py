"""Write order: a crash at any step leaves store and log consistent after recovery on next open."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memory.audit import AuditLog, EventKind
from memory.config import Settings
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.models import MemoryRecord, MemoryType
from memory.store import ChromaStore
from tests.conftest import NOW


class Crash(RuntimeError):
    """Stands for the process dying at a given step."""


class CrashingStore(ChromaStore):
    """A real store that dies before writing (a crash between log append and store write)."""

    armed = False

    def put(self, records: Sequence[MemoryRecord], embeddings: Sequence[Sequence[float]] | None = None) -> None:
        if self.armed:
            raise Crash("died before the store write")
        super().put(records, embeddings)


class CrashingLog(AuditLog):
    """A real log that dies before marking events committed (crash after the store write)."""

    armed = False

    def commit(self, seqs: list[int]) -> None:
        if self.armed:
            raise Crash("died before commit")
        super().commit(seqs)


def _open(settings: Settings) -> tuple[MemoryEngine, CrashingStore, CrashingLog]:
    embedder = HashingEmbedder()
    store = CrashingStore(settings, embedder)
    log = CrashingLog(settings.audit_path)
    return MemoryEngine(store, log, embedder), store, log


def _invariants(engine: MemoryEngine) -> None:
    created = engine.audit.memory_ids(EventKind.CREATE) | engine.audit.memory_ids(EventKind.IMPORT)
    stored = {r.id for r in engine.list()}
    assert stored <= created, "a memory without its creation event"
    forgotten = engine.audit.memory_ids(EventKind.FORGET)
    assert created - forgotten <= stored, "an event pointing at nothing"
    assert engine.audit.pending() == []


def test_crash_before_store_write_rolls_back(settings: Settings) -> None:
    engine, store, _ = _open(settings)
    engine.add("kept memory", MemoryType.USER_QUESTION, "u", now=NOW)
    store.armed = True
    with pytest.raises(Crash):
        engine.add("lost memory", MemoryType.USER_QUESTION, "u", now=NOW)
    assert len(engine.audit.pending()) == 1
    engine.close()
    reopened = MemoryEngine.open(settings, embedder=HashingEmbedder())
    try:
        assert reopened.recovered == {"committed": 0, "discarded": 1}
        assert [r.text for r in reopened.list()] == ["kept memory"]
        _invariants(reopened)
    finally:
        reopened.close()


def test_crash_after_store_write_rolls_forward(settings: Settings) -> None:
    engine, _, log = _open(settings)
    log.armed = True
    with pytest.raises(Crash):
        engine.add("written but not committed", MemoryType.USER_QUESTION, "u", now=NOW)
    engine.close()
    reopened = MemoryEngine.open(settings, embedder=HashingEmbedder())
    try:
        assert reopened.recovered == {"committed": 1, "discarded": 0}
        (record,) = reopened.list()
        assert [e.kind for e in reopened.history(record.id)] == [EventKind.CREATE]
        _invariants(reopened)
    finally:
        reopened.close()


def test_crash_during_feedback_keeps_previous_state(settings: Settings) -> None:
    engine, store, _ = _open(settings)
    rec = engine.add("a fact", MemoryType.RESIDUAL, "sme", now=NOW).record
    store.armed = True  # feedback only rewrites metadata; arm the metadata path too
    original = store.update_metadata

    def crash(records: Sequence[MemoryRecord]) -> None:
        raise Crash("died before metadata write")

    store.update_metadata = crash  # type: ignore[method-assign]
    with pytest.raises(Crash):
        engine.feedback(rec.id, correct=True, now=NOW)
    store.update_metadata = original  # type: ignore[method-assign]
    engine.close()
    reopened = MemoryEngine.open(settings, embedder=HashingEmbedder())
    try:
        assert reopened.recovered["discarded"] == 1
        assert reopened.get(rec.id).validated_correct == 0
        assert [e.kind for e in reopened.history(rec.id)] == [EventKind.CREATE]
        _invariants(reopened)
    finally:
        reopened.close()


def test_second_process_gets_clear_store_in_use_error(settings: Settings) -> None:
    import os
    import subprocess
    import sys

    engine = MemoryEngine.open(settings, embedder=HashingEmbedder())
    try:
        code = (
            "from memory.config import load_settings; from memory.store import ChromaStore, StoreInUseError;"
            "from memory.embedder import HashingEmbedder\n"
            f"s = load_settings(env={{'MARK_HOME': {str(settings.home)!r}}})\n"
            "try:\n    ChromaStore(s, HashingEmbedder())\nexcept StoreInUseError as e:\n    print('IN USE:', e)\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
        assert "IN USE:" in proc.stdout and "MARK_CHROMA_URL" in proc.stdout, proc.stderr
        # the holder is named in words, not as the lock file's raw record
        assert f"(pid {os.getpid()}, since 20" in proc.stdout and '{"pid"' not in proc.stdout, proc.stdout
    finally:
        engine.close()


def test_recovery_leaves_in_flight_events_of_live_processes_alone(settings: Settings) -> None:
    import os
    import sqlite3

    engine = MemoryEngine.open(settings, embedder=HashingEmbedder())
    engine.close()
    db = sqlite3.connect(str(settings.audit_path), isolation_level=None)
    row = ("m-live", "create", NOW.isoformat(), 1, "other", "{}", 0)
    db.execute(
        "INSERT INTO events(memory_id, kind, at, rev, actor, detail, committed, pid) VALUES (?,?,?,?,?,?,?,?)",
        (*row, os.getppid()),
    )  # the test runner's parent: alive, not us
    db.execute(
        "INSERT INTO events(memory_id, kind, at, rev, actor, detail, committed, pid) VALUES (?,?,?,?,?,?,?,?)",
        ("m-dead", "create", NOW.isoformat(), 1, "gone", "{}", 0, 2**22 + 7),
    )  # no such process
    db.close()
    reopened = MemoryEngine.open(settings, embedder=HashingEmbedder())
    try:
        assert reopened.recovered == {"committed": 0, "discarded": 1}
        left = sqlite3.connect(str(settings.audit_path)).execute("SELECT memory_id FROM events WHERE committed = 0")
        assert [r[0] for r in left] == ["m-live"]
    finally:
        reopened.close()

"""The write lock of both audit backends, and appends, across two processes at once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from memory.audit import AuditLog
from tests.memory.pg_cluster import raw

ROOT = Path(__file__).resolve().parents[2]
KEY = Fernet.generate_key().decode()


# -- several processes at once ---------------------------------------------------------------------------

_OPEN = """
import sys, time
from pathlib import Path
backend, where, ready, name = sys.argv[1:5]
if backend == "sqlite":
    from memory.audit import AuditLog
    log = AuditLog(Path(where))
else:
    from memory.audit_pg import PostgresAuditLog
    log = PostgresAuditLog(where, Path(ready) / "audit.sqlite3")
(Path(ready) / name).touch()
while len(list(Path(ready).iterdir())) < 2:  # both open before either starts
    time.sleep(0.005)
"""

_APPEND = """
from datetime import UTC, datetime
from memory.audit import EventKind
for i in range(0, 200, 2):
    one = log.append(f"{name}-{i}", EventKind.CREATE, datetime.now(UTC), 1, name, {"i": i})
    two = log.append_many([(f"{name}-{i + 1}", EventKind.CREATE, datetime.now(UTC), 1, name, {"i": i + 1})])
    log.commit([one, *two])
log.close()
"""

_COUNT = """
counter = Path(sys.argv[5])
for _ in range(50):
    with log.write_lock():
        with log.write_lock():  # nested: the same hold
            value = int(counter.read_text())
        time.sleep(0.002)  # without the lock the other process reads the same value meanwhile
        counter.write_text(str(value + 1))
log.close()
"""


def _two_processes(code: str, backend: str, where: str, folder: Path, *extra: str) -> None:
    ready = folder / "ready"
    ready.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, backend, where, str(ready), name, *extra],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("p1", "p2")
    ]
    errors = [proc.communicate(timeout=180)[1] for proc in procs]  # both pipes drained before any assert
    for proc, err in zip(procs, errors, strict=True):
        assert proc.returncode == 0, err


def test_two_processes_append_at_once_without_loss(pg_url: str, tmp_path: Path) -> None:
    _two_processes(_OPEN + _APPEND, "postgresql", pg_url, tmp_path)
    rows = raw(pg_url, "SELECT seq, memory_id, actor FROM mark_audit_events WHERE committed")
    assert len(rows) == 400 and len({seq for seq, _, _ in rows}) == 400
    for name in ("p1", "p2"):
        assert sorted(str(m) for _, m, actor in rows if actor == name) == sorted(f"{name}-{i}" for i in range(200))
    assert raw(pg_url, "SELECT count(*) FROM mark_audit_events WHERE NOT committed") == [(0,)]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_write_lock_serialises_two_processes(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    where = str(tmp_path / "audit.sqlite3") if backend == "sqlite" else request.getfixturevalue("pg_url")
    counter = tmp_path / "counter"
    counter.write_text("0")
    _two_processes(_OPEN + _COUNT, backend, where, tmp_path, str(counter))
    assert counter.read_text() == "100"  # 2 x 50 read-modify-writes, none lost


def test_the_sqlite_write_lock_is_one_file_beside_the_log(tmp_path: Path) -> None:
    import fcntl

    log = AuditLog(tmp_path / "audit.sqlite3")
    try:
        with log.write_lock(), log.write_lock():
            probe = os.open(log.lock_path, os.O_RDWR)
            try:  # another open file description (another process) cannot have it now
                with pytest.raises(BlockingIOError):
                    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            finally:
                os.close(probe)
        assert log.lock_path.name == "audit.sqlite3.lock" and (log.lock_path.stat().st_mode & 0o077) == 0
    finally:
        log.close()

"""Opening the store's SQLite files: two processes creating one at once both get it, other errors go up."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memory.store_health import when_unlocked

ROOT = Path(__file__).resolve().parents[2]


def test_setup_is_tried_again_while_the_new_log_is_locked_and_other_errors_go_up() -> None:
    calls: list[int] = []

    def locked_twice() -> None:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")

    when_unlocked(locked_twice)
    assert len(calls) == 3

    def read_only() -> None:
        calls.append(1)
        raise sqlite3.OperationalError("attempt to write a readonly database")

    calls.clear()
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        when_unlocked(read_only)
    assert len(calls) == 1  # not a lock: no second try

    def always_locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(sqlite3.OperationalError, match="locked"):
        when_unlocked(always_locked, seconds=0.2)


def test_six_processes_open_one_new_log_at_once(tmp_path: Path) -> None:
    code = "import sys\nfrom pathlib import Path\nfrom memory.audit import AuditLog\n"
    code += "AuditLog(Path(sys.argv[1])).close()"
    where = str(tmp_path / "audit.sqlite3")
    procs = [
        subprocess.Popen([sys.executable, "-c", code, where], cwd=ROOT, stderr=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 6, errors

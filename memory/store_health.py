"""The store's errors, and how a damaged database file is told apart from a bug.

mark keeps its data in two SQLite files under ``MARK_HOME``: Chroma's index (``chroma/chroma.sqlite3``)
and the audit log (``audit.sqlite3``). A full disk, a copy cut short or a crash can leave either
corrupt or truncated. SQLite itself decides (:func:`sqlite_problem` runs ``PRAGMA quick_check``
read-only), so a failure is reported as a damaged file only when the file is damaged; any other
failure keeps its traceback. The message of a :class:`DamagedStoreError` says how to recover: restore
the last ``mark memory export`` into a fresh folder, or move the damaged one away and start empty.

This module imports neither Chroma nor the engine, so the audit log and ``mark doctor`` can use it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from mark.errors import UnavailableError

# SQLite's primary result codes for a damaged file (https://sqlite.org/rescode.html)
_CORRUPT = 11
_NOT_A_DATABASE = 26


class StoreError(UnavailableError):
    """The store cannot be opened or used; the message says how to fix it."""


class StoreInUseError(StoreError):
    """Another process holds the embedded store."""


class DamagedStoreError(StoreError):
    """A database file of the store is corrupt or truncated; the message says how to recover."""


def is_damage(exc: sqlite3.Error) -> bool:
    """Whether an ``sqlite3`` error says the file is corrupt or not a database at all."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in {_CORRUPT, _NOT_A_DATABASE}


def sqlite_problem(path: Path) -> str | None:
    """What SQLite finds wrong with the database file at ``path``; None when it is sound or absent.

    Opens the file read-only and runs ``PRAGMA quick_check`` (it reads every page once: fine for a
    health check or after a failure, too slow to run on every open).
    """
    if path.is_dir():
        return "it is a directory, not a database file"
    if not path.exists():
        return None
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    problems = [str(row[0]) for row in rows if row[0] != "ok"]
    return problems[0] if problems else None


def restore_advice(home: Path) -> str:
    """How to get a working store back when a database file under ``home`` is damaged."""
    return f"move {home} away, then restore your last export with `mark memory import --restore FILE` (or start empty)"


def damaged(what: str, path: Path, problem: str, home: Path) -> DamagedStoreError:
    """The one-line error for a damaged database file: which file, what SQLite says, what to do."""
    return DamagedStoreError(f"the {what} {path} is damaged ({problem}): {restore_advice(home)}")


def when_unlocked(setup: Callable[[], None], seconds: float = 30.0) -> None:
    """Run an idempotent SQLite ``setup`` (WAL mode, the schema), again while it finds the file locked.

    Two processes opening a new database at once: switching it to WAL can answer "database is locked"
    at once, without waiting on the connection's busy timeout. After ``seconds`` the error goes up.
    """
    deadline = time.monotonic() + seconds
    while True:
        try:
            setup()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)

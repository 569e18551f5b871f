"""Append-only audit log of every memory change, in SQLite beside the store.

Write protocol (see ``memory.engine``): an event is appended *uncommitted* before the store is
touched, and marked committed after. On open, :meth:`AuditLog.pending` lists the uncommitted
events so recovery can roll each forward (the store has the change) or back (it does not).

A log file that cannot be opened (a directory, no permission) or that SQLite finds damaged ends in
a :class:`~memory.store_health.StoreError` naming the file and what to do, never in a raw ``sqlite3``
error.

Append-only, with one sanctioned rewrite: forgetting (:meth:`AuditLog.forget`). The events of a
forgotten memory, user history or profile entry keep their ids, kind, time, revision and actor, but
their detail (which may quote the text) becomes the tombstone ``{"forgotten": true}``; a trigger refuses
any other change to an event. Deleted content does not linger: the log runs with ``secure_delete`` and
truncates its WAL file after a forget. With an encryption key (:mod:`memory.crypto`) every detail but a
tombstone is sealed.

Two backends share one interface, :class:`AuditBackend`: this SQLite log (``audit.sqlite3`` in
``MARK_HOME``, shared by the processes of one machine) and :class:`memory.audit_pg.PostgresAuditLog`
(``MARK_DATABASE_URL``, shared by several machines). :func:`open_audit_log` picks one from the settings.
Each has a cross-process write lock (:meth:`AuditBackend.write_lock`) that the engine holds around a
read-modify-write of the store: an exclusive ``flock`` on ``audit.sqlite3.lock`` here, a PostgreSQL
advisory lock there.
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from memory.audit_events import (
    FORGOTTEN,
    TOMBSTONE,
    AuditBackend,
    Event,
    EventKind,
    EventRow,
    WriteLock,
    read_event,
    seal_detail,
)
from memory.crypto import TextCipher
from memory.store_health import StoreError, damaged, is_damage, when_unlocked

__all__ = [
    "FORGOTTEN",
    "TOMBSTONE",
    "AuditBackend",
    "AuditLog",
    "Event",
    "EventKind",
    "EventRow",
    "WriteLock",
    "open_audit_log",
    "read_event",
    "seal_detail",
]

if TYPE_CHECKING:
    from memory.config import Settings

log = logging.getLogger(__name__)
_P = ParamSpec("_P")
_R = TypeVar("_R")
_CHUNK = 500


def open_audit_log(settings: Settings, cipher: TextCipher | None = None) -> AuditBackend:
    """The configured audit log: PostgreSQL when ``MARK_DATABASE_URL`` is set, else SQLite in ``MARK_HOME``."""
    url = settings.store.database_url
    if url is None:
        return AuditLog(settings.audit_path, cipher)
    from memory.audit_pg import PostgresAuditLog  # psycopg loads only when a database URL is set

    return PostgresAuditLog(url.get_secret_value(), settings.audit_path, cipher)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    at TEXT NOT NULL,
    rev INTEGER NOT NULL,
    actor TEXT NOT NULL,
    detail TEXT NOT NULL,
    committed INTEGER NOT NULL DEFAULT 0,
    pid INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS events_memory ON events(memory_id, seq);
CREATE INDEX IF NOT EXISTS events_pending ON events(committed) WHERE committed = 0;
DROP TRIGGER IF EXISTS events_no_update;
CREATE TRIGGER IF NOT EXISTS events_append_only BEFORE UPDATE OF memory_id, kind, at, rev, actor ON events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_forget_only BEFORE UPDATE OF detail ON events
WHEN NEW.detail IS NOT '{"forgotten": true}'
BEGIN SELECT RAISE(ABORT, 'audit events are append-only: a detail may only become the forgotten tombstone'); END;
"""


def _checked(method: Callable[Concatenate[AuditLog, _P], _R]) -> Callable[Concatenate[AuditLog, _P], _R]:
    """Turn SQLite's "corrupt" and "not a database" errors into a :class:`DamagedStoreError`."""

    @functools.wraps(method)
    def checked(self: AuditLog, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise damaged("audit log", self.path, str(exc), self.path.parent) from exc
            raise

    return checked


class AuditLog:
    """The event log in SQLite. Events are never edited; the committed flag flips once; forgetting tombstones them."""

    def __init__(self, path: Path, cipher: TextCipher | None = None) -> None:
        """Open (creating if needed) the log at ``path``; ``cipher`` seals event details (default: plain text)."""
        self.path = path
        self.cipher = cipher or TextCipher()
        self.lock_path = path.with_name(path.name + ".lock")
        self._lock_fd: int | None = None
        self._write_lock = WriteLock(self._flock, self._funlock)
        if path.is_dir():
            raise StoreError(f"the audit log {path} is a directory: move it away, or set MARK_HOME to another folder")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), timeout=30.0, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.OperationalError) as exc:
            raise _cannot_open(path, exc.strerror if isinstance(exc, OSError) else str(exc)) from exc
        try:
            when_unlocked(self._setup)
        except sqlite3.OperationalError as exc:  # read-only file or folder, locked for too long
            self._db.close()
            raise _cannot_open(path, str(exc)) from exc
        except BaseException:
            self._db.close()
            raise

    @_checked
    def _setup(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA secure_delete=ON")  # a forgotten detail does not linger in free space
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        """Close the database (and the lock file, which releases the write lock)."""
        self._db.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def write_lock(self) -> AbstractContextManager[None]:
        """Hold the write lock for a ``with`` block: an exclusive ``flock`` on ``audit.sqlite3.lock``.

        Excludes every other process of this machine that holds it (and other threads of this one); a
        thread may nest it. The kernel drops the lock when its holder dies.
        """
        return self._write_lock.held()

    def _flock(self) -> None:
        if self._lock_fd is None:
            try:
                self._lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                raise _cannot_open(self.lock_path, exc.strerror) from exc
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)

    def _funlock(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    @_checked
    def append(
        self, memory_id: str, kind: EventKind, at: datetime, rev: int, actor: str, detail: dict[str, Any]
    ) -> int:
        """Append an uncommitted event and return its sequence number."""
        cursor = self._db.execute(
            "INSERT INTO events(memory_id, kind, at, rev, actor, detail, pid) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (memory_id, kind.value, at.isoformat(), rev, actor, seal_detail(self.cipher, detail), os.getpid()),
        )
        return int(cursor.lastrowid or 0)

    @_checked
    def append_many(self, rows: list[EventRow]) -> list[int]:
        """Append several uncommitted events in one transaction; returns their sequence numbers."""
        seqs: list[int] = []
        self._db.execute("BEGIN")
        try:
            for memory_id, kind, at, rev, actor, detail in rows:
                seqs.append(self.append(memory_id, kind, at, rev, actor, detail))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return seqs

    @_checked
    def commit(self, seqs: list[int]) -> None:
        """Mark events as committed (their change reached the store)."""
        if seqs:
            self._db.executemany("UPDATE events SET committed = 1 WHERE seq = ?", [(s,) for s in seqs])

    @_checked
    def discard(self, seqs: list[int]) -> None:
        """Remove uncommitted events whose change never reached the store (recovery only)."""
        if seqs:
            self._db.executemany("DELETE FROM events WHERE seq = ? AND committed = 0", [(s,) for s in seqs])

    @_checked
    def pending(self) -> list[Event]:
        """Uncommitted events left by this process or by processes that are gone, oldest first.

        Events of another live process (several processes share the log in server mode) are its
        in-flight writes, not crash leftovers, so they are not returned.
        """
        rows = self._db.execute("SELECT seq, pid FROM events WHERE committed = 0 ORDER BY seq").fetchall()
        mine = [seq for seq, pid in rows if pid == os.getpid() or not _alive(pid)]
        if len(mine) < len(rows):
            log.debug("%d uncommitted audit event(s) belong to live processes: left to them", len(rows) - len(mine))
        if not mine:
            return []
        log.info("%d uncommitted audit event(s) left by an interrupted write: to recover", len(mine))
        marks = ",".join("?" * len(mine))
        return list(self._select(f"WHERE seq IN ({marks}) ORDER BY seq", tuple(mine)))

    @_checked
    def history(self, memory_id: str) -> list[Event]:
        """All committed events of one memory, oldest first."""
        return list(self._select("WHERE memory_id = ? AND committed = 1 ORDER BY seq", (memory_id,)))

    @_checked
    def memory_ids(self, kind: EventKind) -> set[str]:
        """Ids of memories that have a committed event of ``kind``."""
        rows = self._db.execute("SELECT DISTINCT memory_id FROM events WHERE kind = ? AND committed = 1", (kind.value,))
        return {row[0] for row in rows}

    @_checked
    def forget(self, memory_ids: list[str]) -> int:
        """Tombstone every event of these ids but their FORGET events (the one sanctioned rewrite); returns how many.

        Ids, kinds, times, revisions and actors stay, so a history still shows what happened and when.
        The WAL file is truncated afterwards, so no old page image keeps a detail.
        """
        changed = 0
        for start in range(0, len(memory_ids), _CHUNK):
            part = memory_ids[start : start + _CHUNK]
            cursor = self._db.execute(
                f"UPDATE events SET detail = ? WHERE memory_id IN ({','.join('?' * len(part))})"
                " AND kind != ? AND detail != ?",
                [TOMBSTONE, *part, EventKind.FORGET.value, TOMBSTONE],
            )
            changed += cursor.rowcount
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return changed

    @_checked
    def forget_merged_by(self, user_id: str) -> int:
        """Tombstone the MERGE events whose merged text ``user_id`` said; returns how many."""
        merges = self._select("WHERE kind = ? AND detail != ? ORDER BY seq", (EventKind.MERGE.value, TOMBSTONE))
        seqs = [e.seq for e in merges if e.detail.get("said_by") == user_id]
        for start in range(0, len(seqs), _CHUNK):
            part = seqs[start : start + _CHUNK]
            self._db.execute(
                f"UPDATE events SET detail = ? WHERE seq IN ({','.join('?' * len(part))})", [TOMBSTONE, *part]
            )
        if seqs:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return len(seqs)

    @_checked
    def rejected(self, user_id: str) -> list[str]:
        """Ids of the candidates refused for ``user_id`` (REJECT events name their user in the detail)."""
        events = self._select("WHERE kind = ? AND detail != ? ORDER BY seq", (EventKind.REJECT.value, TOMBSTONE))
        return [e.memory_id for e in events if e.detail.get("user_id") == user_id]

    @_checked
    def count(self) -> int:
        """Number of committed events."""
        return int(self._db.execute("SELECT COUNT(*) FROM events WHERE committed = 1").fetchone()[0])

    def _select(self, clause: str, args: tuple[Any, ...] = ()) -> Iterator[Event]:
        query = f"SELECT seq, memory_id, kind, at, rev, actor, detail, committed FROM events {clause}"
        for row in self._db.execute(query, args):
            yield read_event(row, self.cipher, f"the audit log {self.path}")


def _cannot_open(path: Path, reason: str | None) -> StoreError:
    return StoreError(
        f"cannot open the audit log {path} ({reason}): make it and its folder writable, "
        "or set MARK_HOME to another folder"
    )


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

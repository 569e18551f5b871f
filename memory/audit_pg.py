"""The audit log in PostgreSQL (``MARK_DATABASE_URL``): one log for mark's workers on several machines.

The same events, write protocol and guarantees as the SQLite log (:class:`memory.audit.AuditLog`):
events are appended uncommitted and committed after the store write; :meth:`PostgresAuditLog.pending`
lists the uncommitted events of this process and of writers that are gone; forgetting tombstones
details and keeps ids, kinds, times, revisions and actors; a trigger refuses any other rewrite (and
deleting or truncating committed events); details are sealed when the cipher has a key.

Several processes on several machines write at once. Sequence numbers come from an identity column,
and every change is one statement (autocommit) or one transaction, so nothing reads and then writes.
An event names the database session that appended it (``pg_backend_pid()``) besides its host and
process: recovery on any machine treats the uncommitted events of a session the server no longer lists
as a crashed writer's leftovers, and leaves those of a live session to it. Connect directly or through
a session pooler; a transaction pooler changes sessions under a connection, which breaks that and the
advisory write lock (:meth:`PostgresAuditLog.write_lock`).

A forget runs ``VACUUM`` on the table, so the old row versions are pruned and their space reused; what
the server keeps elsewhere (its write-ahead log, replicas, backups) is the database operator's to manage.

Only this module imports psycopg; :func:`memory.audit.open_audit_log` imports it only when a database
URL is set.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import TupleRow

from memory.audit import TOMBSTONE, Event, EventKind, EventRow, WriteLock, read_event, seal_detail
from memory.crypto import TextCipher
from memory.store_health import StoreError

log = logging.getLogger(__name__)
_P = ParamSpec("_P")
_R = TypeVar("_R")
TABLE = "mark_audit_events"
WRITE_LOCK_KEY = int.from_bytes(b"marklock", "big")  # the advisory lock every writer of this database shares
_SETUP_KEY = int.from_bytes(b"markschm", "big")  # held while one process creates the table
_COLUMNS = "seq, memory_id, kind, at, rev, actor, detail, committed"
_INSERT = (
    f"INSERT INTO {TABLE} (memory_id, kind, at, rev, actor, detail, host, pid) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
)
_CHECK = (
    "check that the server is running and reachable, and the host, port, database, user and password"
    " in MARK_DATABASE_URL"
)

# ``at`` is ISO 8601 text as written, like the SQLite log, so a time reads back exactly as it was given
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    at TEXT NOT NULL,
    rev INTEGER NOT NULL,
    actor TEXT NOT NULL,
    detail TEXT NOT NULL,
    committed BOOLEAN NOT NULL DEFAULT FALSE,
    host TEXT NOT NULL DEFAULT '',
    pid INTEGER NOT NULL DEFAULT 0,
    backend INTEGER NOT NULL DEFAULT pg_backend_pid()
);
CREATE INDEX IF NOT EXISTS {TABLE}_memory ON {TABLE} (memory_id, seq);
CREATE INDEX IF NOT EXISTS {TABLE}_pending ON {TABLE} (seq) WHERE NOT committed;
CREATE INDEX IF NOT EXISTS {TABLE}_kind ON {TABLE} (kind, memory_id) WHERE committed;
CREATE OR REPLACE FUNCTION {TABLE}_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        RAISE EXCEPTION 'audit events are append-only' USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN
        IF OLD.committed THEN
            RAISE EXCEPTION 'audit events are append-only: a committed event stays'
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN OLD;
    END IF;
    IF (NEW.seq, NEW.memory_id, NEW.kind, NEW.at, NEW.rev, NEW.actor)
            IS DISTINCT FROM (OLD.seq, OLD.memory_id, OLD.kind, OLD.at, OLD.rev, OLD.actor)
            OR (OLD.committed AND NOT NEW.committed) THEN
        RAISE EXCEPTION 'audit events are append-only' USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.detail IS DISTINCT FROM OLD.detail AND NEW.detail IS DISTINCT FROM '{TOMBSTONE}' THEN
        RAISE EXCEPTION 'audit events are append-only: a detail may only become the forgotten tombstone'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END
$fn$;
DO $do$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '{TABLE}'::regclass AND tgname = '{TABLE}_rows') THEN
        CREATE TRIGGER {TABLE}_rows BEFORE UPDATE OR DELETE ON {TABLE}
            FOR EACH ROW EXECUTE FUNCTION {TABLE}_append_only();
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '{TABLE}'::regclass AND tgname = '{TABLE}_truncate') THEN
        CREATE TRIGGER {TABLE}_truncate BEFORE TRUNCATE ON {TABLE}
            FOR EACH STATEMENT EXECUTE FUNCTION {TABLE}_append_only();
    END IF;
END
$do$;
"""


def redact(url: str) -> str:
    """``url`` with its password (in the user part or a ``password=`` parameter) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:  # a malformed URL (connecting says so): show none of it
        return "(a malformed URL)"
    netloc = parts.netloc
    if "@" in netloc:
        user_info, _, hosts = netloc.rpartition("@")
        user, colon, _ = user_info.partition(":")
        netloc = f"{user}{':***' if colon else ''}@{hosts}"
    params = [("password=***" if p.split("=", 1)[0] == "password" else p) for p in parts.query.split("&")]
    return urlunsplit(parts._replace(netloc=netloc, query="&".join(params) if parts.query else ""))


def _guarded(
    method: Callable[Concatenate[PostgresAuditLog, _P], _R],
) -> Callable[Concatenate[PostgresAuditLog, _P], _R]:
    """One statement or transaction at a time per log; a lost server is a :class:`StoreError`, not psycopg's."""

    @functools.wraps(method)
    def guarded(self: PostgresAuditLog, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._mutex:
            try:
                return method(self, *args, **kwargs)
            except psycopg.OperationalError as exc:
                what = "lost its connection to" if self._conn.broken else "failed on"
                raise StoreError(f"the audit log {what} {self.location} ({self._reason(exc)}): {_CHECK}") from exc

    return guarded


class PostgresAuditLog:
    """The event log in a PostgreSQL table; the same methods and semantics as :class:`memory.audit.AuditLog`."""

    def __init__(self, url: str, path: Path, cipher: TextCipher | None = None) -> None:
        """Connect to ``url`` and create the table if needed; ``path`` is where a SQLite log would be.

        Nothing is written at ``path``: its folder keeps the files mark holds beside the log.
        ``cipher`` seals event details (default: plain text).
        """
        self.path = path
        self.cipher = cipher or TextCipher()
        self.location = redact(url)
        self._url = url
        self._host = socket.gethostname()
        self._mutex = threading.RLock()
        self._lock_conn: psycopg.Connection[TupleRow] | None = None
        self._write_lock = WriteLock(self._lock, self._unlock)
        self._conn = self._connect()
        try:
            if not self._ready():  # a user that may only read and write the table opens one its owner set up
                with self._conn.transaction():
                    self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SETUP_KEY,))
                    self._conn.execute(_SCHEMA)
        except psycopg.Error as exc:
            self._conn.close()
            raise StoreError(
                f"cannot set up the audit log in {self.location} ({self._reason(exc)}): give its user the right to"
                " create tables in that database, or have its owner open it once"
            ) from exc

    def _ready(self) -> bool:
        """Whether the table and its two triggers exist."""
        triggers = [f"{TABLE}_rows", f"{TABLE}_truncate"]
        query = "SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname = ANY(%s)"
        row = self._conn.execute(query, (TABLE, triggers)).fetchone()
        return row is not None and row[0] == len(triggers)

    def _connect(self) -> psycopg.Connection[TupleRow]:
        options: dict[str, Any] = {"autocommit": True}
        try:
            given = conninfo_to_dict(self._url)
        except psycopg.ProgrammingError as exc:
            raise StoreError(
                f"MARK_DATABASE_URL is not a valid PostgreSQL URL: {self.location};"  # libpq's reason quotes it whole
                " write it as postgresql://user:password@host:port/database"
            ) from exc
        options |= {k: v for k, v in (("connect_timeout", 10), ("application_name", "mark")) if k not in given}
        try:
            return psycopg.connect(self._url, **options)
        except psycopg.OperationalError as exc:
            raise StoreError(
                f"cannot connect to the audit database {self.location} ({self._reason(exc)}): {_CHECK}"
            ) from exc

    def _reason(self, exc: BaseException) -> str:
        """The error's message on one line, with the URL's password out of it (libpq does not echo it)."""
        text = " ".join(str(exc).split())
        try:
            password = urlsplit(self._url).password
        except ValueError:
            return text
        return text.replace(password, "***") if password and len(password) >= 4 else text

    def _db(self) -> psycopg.Connection[TupleRow]:
        """The connection, opened again after the server dropped it (its writes in flight stay this process's)."""
        if self._conn.broken:
            log.warning("reconnecting to the audit database %s", self.location)
            self._conn.close()
            self._conn = self._connect()
            self._conn.execute(
                f"UPDATE {TABLE} SET backend = pg_backend_pid() WHERE NOT committed AND host = %s AND pid = %s",
                (self._host, os.getpid()),
            )
        return self._conn

    def close(self) -> None:
        """Close the connections (which releases the write lock, if held)."""
        self._conn.close()
        if self._lock_conn is not None:
            self._lock_conn.close()
            self._lock_conn = None

    def write_lock(self) -> AbstractContextManager[None]:
        """Hold the write lock for a ``with`` block: ``pg_advisory_lock`` on :data:`WRITE_LOCK_KEY`.

        Held on a connection of its own, so it excludes every process on every machine that holds it in
        this database (and other threads of this one); a thread may nest it. The server drops it when its
        holder's connection ends.
        """
        return self._write_lock.held()

    def _lock(self) -> None:
        try:
            if self._lock_conn is not None and self._lock_conn.broken:
                self._lock_conn.close()
            if self._lock_conn is None or self._lock_conn.closed:
                self._lock_conn = self._connect()
            self._lock_conn.execute("SELECT pg_advisory_lock(%s)", (WRITE_LOCK_KEY,))
        except psycopg.OperationalError as exc:
            raise StoreError(
                f"cannot take the audit write lock on {self.location} ({self._reason(exc)}): {_CHECK}"
            ) from exc

    def _unlock(self) -> None:
        if self._lock_conn is None:
            return
        try:
            self._lock_conn.execute("SELECT pg_advisory_unlock(%s)", (WRITE_LOCK_KEY,))
        except psycopg.OperationalError as exc:
            log.warning("the audit write lock's connection to %s was lost while held: %s", self.location, exc)

    def _row(
        self, memory_id: str, kind: EventKind, at: datetime, rev: int, actor: str, detail: dict[str, Any]
    ) -> tuple[Any, ...]:
        return (
            memory_id,
            kind.value,
            at.isoformat(),
            rev,
            actor,
            seal_detail(self.cipher, detail),
            self._host,
            os.getpid(),
        )

    @_guarded
    def append(
        self, memory_id: str, kind: EventKind, at: datetime, rev: int, actor: str, detail: dict[str, Any]
    ) -> int:
        """Append an uncommitted event and return its sequence number."""
        row = (
            self._db()
            .execute(_INSERT + " RETURNING seq", self._row(memory_id, kind, at, rev, actor, detail))
            .fetchone()
        )
        assert row is not None  # INSERT ... RETURNING returns its row
        return int(row[0])

    @_guarded
    def append_many(self, rows: list[EventRow]) -> list[int]:
        """Append several uncommitted events in one transaction; returns their sequence numbers."""
        params = [self._row(*row) for row in rows]
        if not params:
            return []
        seqs: list[int] = []
        db = self._db()
        with db.transaction(), db.cursor() as cursor:
            cursor.executemany(_INSERT + " RETURNING seq", params, returning=True)
            while True:
                row = cursor.fetchone()
                assert row is not None  # one result per inserted row
                seqs.append(int(row[0]))
                if not cursor.nextset():
                    break
        return seqs

    @_guarded
    def commit(self, seqs: list[int]) -> None:
        """Mark events as committed (their change reached the store)."""
        if seqs:
            self._db().execute(f"UPDATE {TABLE} SET committed = TRUE WHERE seq = ANY(%s)", (seqs,))

    @_guarded
    def discard(self, seqs: list[int]) -> None:
        """Remove uncommitted events whose change never reached the store (recovery only)."""
        if seqs:
            self._db().execute(f"DELETE FROM {TABLE} WHERE seq = ANY(%s) AND NOT committed", (seqs,))

    @_guarded
    def pending(self) -> list[Event]:
        """Uncommitted events of this process or of sessions the server no longer lists, oldest first.

        Events of another live session (mark on this or another machine) are its in-flight writes, not
        crash leftovers, so they are not returned.
        """
        db = self._db()
        rows = db.execute(f"SELECT seq, host, pid, backend FROM {TABLE} WHERE NOT committed ORDER BY seq").fetchall()
        if not rows:
            return []
        alive = {row[0] for row in db.execute("SELECT pid FROM pg_stat_activity")}
        me = (self._host, os.getpid())
        mine = [seq for seq, host, pid, backend in rows if (host, pid) == me or backend not in alive]
        if len(mine) < len(rows):
            log.debug("%d uncommitted audit event(s) belong to live sessions: left to them", len(rows) - len(mine))
        if not mine:
            return []
        log.info("%d uncommitted audit event(s) left by an interrupted write: to recover", len(mine))
        return self._select("WHERE seq = ANY(%s) ORDER BY seq", (mine,))

    @_guarded
    def history(self, memory_id: str) -> list[Event]:
        """All committed events of one memory, oldest first."""
        return self._select("WHERE memory_id = %s AND committed ORDER BY seq", (memory_id,))

    @_guarded
    def memory_ids(self, kind: EventKind) -> set[str]:
        """Ids of memories that have a committed event of ``kind``."""
        rows = self._db().execute(
            f"SELECT DISTINCT memory_id FROM {TABLE} WHERE kind = %s AND committed", (kind.value,)
        )
        return {row[0] for row in rows}

    @_guarded
    def forget(self, memory_ids: list[str]) -> int:
        """Tombstone every event of these ids but their FORGET events (the one sanctioned rewrite); returns how many.

        Ids, kinds, times, revisions and actors stay. The table is vacuumed afterwards, so the old row
        versions that held the details are pruned.
        """
        if not memory_ids:
            return 0
        db = self._db()
        cursor = db.execute(
            f"UPDATE {TABLE} SET detail = %s WHERE memory_id = ANY(%s) AND kind <> %s AND detail <> %s",
            (TOMBSTONE, list(memory_ids), EventKind.FORGET.value, TOMBSTONE),
        )
        changed = cursor.rowcount
        if changed:
            db.execute(f"VACUUM {TABLE}")
        return changed

    @_guarded
    def forget_merged_by(self, user_id: str) -> int:
        """Tombstone the MERGE events whose merged text ``user_id`` said; returns how many."""
        merges = self._select("WHERE kind = %s AND detail <> %s ORDER BY seq", (EventKind.MERGE.value, TOMBSTONE))
        seqs = [e.seq for e in merges if e.detail.get("said_by") == user_id]
        if seqs:
            db = self._db()
            db.execute(f"UPDATE {TABLE} SET detail = %s WHERE seq = ANY(%s)", (TOMBSTONE, seqs))
            db.execute(f"VACUUM {TABLE}")
        return len(seqs)

    @_guarded
    def rejected(self, user_id: str) -> list[str]:
        """Ids of the candidates refused for ``user_id`` (REJECT events name their user in the detail)."""
        events = self._select("WHERE kind = %s AND detail <> %s ORDER BY seq", (EventKind.REJECT.value, TOMBSTONE))
        return [e.memory_id for e in events if e.detail.get("user_id") == user_id]

    @_guarded
    def count(self) -> int:
        """Number of committed events."""
        row = self._db().execute(f"SELECT count(*) FROM {TABLE} WHERE committed").fetchone()
        return int(row[0]) if row else 0

    def _select(self, clause: str, args: tuple[Any, ...]) -> list[Event]:
        rows = self._db().execute(f"SELECT {_COLUMNS} FROM {TABLE} {clause}", args).fetchall()
        return [read_event(row, self.cipher, f"the audit log at {self.location}") for row in rows]

"""The audit log's vocabulary, shared by both backends: event kinds, events, the interface, the write lock.

The SQLite log (:mod:`memory.audit`) and the PostgreSQL log (:mod:`memory.audit_pg`) implement
:class:`AuditBackend`; callers are typed against it. :class:`WriteLock` is the reentrant cross-process lock
each backend builds from its own primitive (``flock``, an advisory lock).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from memory.crypto import TextCipher

FORGOTTEN: dict[str, Any] = {"forgotten": True}  # the detail of an event whose memory was forgotten
TOMBSTONE = json.dumps(FORGOTTEN, sort_keys=True)  # that detail as both backends store it


class EventKind(str, Enum):
    """Every kind of change a memory (or a knowledge source, a history, a profile entry) can undergo."""

    CREATE = "create"
    INJECT = "inject"
    FEEDBACK = "feedback"
    MERGE = "merge"
    SUPERSEDE = "supersede"
    REVIEW = "review"
    EDIT = "edit"
    PRUNE = "prune"
    FORGET = "forget"
    RECHECK = "recheck"
    STATUS = "status"
    IMPORT = "import"
    REJECT = "reject"  # a candidate the truth gate refused: never stored, kept here with its reason
    # the knowledge base's sources (memory_id is the source id, detail names its version and passages)
    KNOWLEDGE_ADD = "knowledge_add"
    KNOWLEDGE_REPLACE = "knowledge_replace"
    KNOWLEDGE_REMOVE = "knowledge_remove"
    # a user's conversation history (memory_id is the history's id "history:<user>"; detail names the
    # source and the events); events are not memories, so one event per batch, not per turn
    INGEST = "ingest"
    CONSOLIDATE = "consolidate"  # an episode's events summarised and archived (sources kept)
    EVICT = "evict"  # events archived by a per-user cap (the eviction policy named)
    # semantic profiles (memory_id is the profile entry's id; detail holds key, value, provenance)
    PROFILE_SET = "profile_set"
    PROFILE_UNSET = "profile_unset"


class Event(BaseModel):
    """One audited change. ``rev`` is the memory's revision after the change."""

    model_config = ConfigDict(extra="forbid")

    seq: int
    memory_id: str
    kind: EventKind
    at: datetime
    rev: int
    actor: str
    detail: dict[str, Any]
    committed: bool


EventRow = tuple[str, EventKind, datetime, int, str, dict[str, Any]]  # memory_id, kind, at, rev, actor, detail


class AuditBackend(Protocol):
    """What callers need of an audit log, whichever database holds it (SQLite or PostgreSQL).

    ``path`` is the log's SQLite file, or for a log held elsewhere where that file would be: its folder
    keeps the files mark holds beside the log (histories, maintenance state).
    """

    path: Path
    cipher: TextCipher

    def close(self) -> None:
        """Release the database (and the write lock, if held)."""

    def append(
        self, memory_id: str, kind: EventKind, at: datetime, rev: int, actor: str, detail: dict[str, Any]
    ) -> int:
        """Append an uncommitted event and return its sequence number."""

    def append_many(self, rows: list[EventRow]) -> list[int]:
        """Append several uncommitted events in one transaction; returns their sequence numbers."""

    def commit(self, seqs: list[int]) -> None:
        """Mark events as committed (their change reached the store)."""

    def discard(self, seqs: list[int]) -> None:
        """Remove uncommitted events whose change never reached the store (recovery only)."""

    def pending(self) -> list[Event]:
        """Uncommitted events of this process or of writers that are gone, oldest first."""

    def history(self, memory_id: str) -> list[Event]:
        """All committed events of one memory, oldest first."""

    def memory_ids(self, kind: EventKind) -> set[str]:
        """Ids of memories that have a committed event of ``kind``."""

    def forget(self, memory_ids: list[str]) -> int:
        """Tombstone every event of these ids but their FORGET events; returns how many."""

    def rejected(self, user_id: str) -> list[str]:
        """Ids of the candidates refused for ``user_id``."""

    def forget_merged_by(self, user_id: str) -> int:
        """Tombstone the MERGE events whose merged text ``user_id`` said (their restatements of shared memories)."""

    def count(self) -> int:
        """Number of committed events."""

    def write_lock(self) -> AbstractContextManager[None]:
        """Hold the cross-process write lock for a ``with`` block (reentrant in one thread)."""


class WriteLock:
    """A lock between processes, reentrant in the thread that holds it, exclusive between a process's threads.

    ``acquire`` and ``release`` take and drop the lock between processes (they block until it is had);
    the outermost hold of a thread calls them, nested holds only count.
    """

    def __init__(self, acquire: Callable[[], None], release: Callable[[], None]) -> None:
        self._acquire, self._release = acquire, release
        self._threads = threading.RLock()
        self._depth = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock for the ``with`` block."""
        with self._threads:
            if self._depth == 0:
                self._acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()


def seal_detail(cipher: TextCipher, detail: dict[str, Any]) -> str:
    """An event's detail as stored: canonical JSON, sealed when the cipher has a key."""
    return cipher.seal(json.dumps(detail, sort_keys=True, default=str))


def read_event(row: Sequence[Any], cipher: TextCipher, where: str) -> Event:
    """An :class:`Event` from a row (seq, memory_id, kind, at, rev, actor, detail, committed)."""
    seq, memory_id, kind, at, rev, actor, detail, committed = row
    return Event(
        seq=seq,
        memory_id=memory_id,
        kind=EventKind(kind),
        at=datetime.fromisoformat(at),
        rev=rev,
        actor=actor,
        detail=json.loads(cipher.unseal(detail, where)),
        committed=bool(committed),
    )

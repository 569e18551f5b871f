"""Forgetting: a memory or a whole user erased from every place mark keeps text, the audit trail kept text-free.

Forgetting memories (:func:`forget_records`) follows the write protocol: FORGET events are logged
uncommitted (they carry the memory's type, never its text); the records are deleted from the store
(their Chroma rows and record cache entries) and, in an embedded store, Chroma's own copies of the
text are erased (its write log rows, FTS index entries and free pages: :mod:`memory.store.scrub`);
every other event of those memories is tombstoned (:meth:`memory.audit.AuditLog.forget`: ids, kinds,
times, revisions and actors stay, the detail becomes ``{"forgotten": true}``); then the FORGET events
are committed. A forget cut short after the delete is finished by recovery on the next open
(:meth:`memory.engine.MemoryEngine.recover` calls :func:`erase_text`).

Forgetting a user (:func:`forget_user`) forgets their personal memories as above and drops their then
empty memory collection (its metadata names them), erases their history (events of every status,
their BM25 entries, episodes, chat progress and vectors) and their profile entries, and tombstones the
audit events of their history, of those entries, of the candidates refused for them (REJECT events
quote the candidate) and of their restatements merged into shared memories (MERGE events quote the
merged text). Shared (domain) memories stay, as does everything of other users. A forget of a
user cut short is finished by running it again.

An export is a file: one written before a forget belongs to whoever wrote it, and mark does not
chase it; one written after never holds the forgotten text, since it reads the store.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from memory.audit import EventKind
from memory.models import MemoryRecord
from memory.profiles import owner_of

if TYPE_CHECKING:
    from memory.engine import MemoryEngine

log = logging.getLogger(__name__)


def forget_records(engine: MemoryEngine, records: Sequence[MemoryRecord], now: datetime, actor: str) -> None:
    """Erase records and their text everywhere; a text-free FORGET event remains for each."""
    if records:
        with engine.writing():
            _finish(engine, records, _delete(engine, records, now, actor), actor)


def forget_user(engine: MemoryEngine, user_id: str, now: datetime) -> int:
    """Erase a user's personal memories, history, profile and refused candidates; returns how many memories."""
    from memory.episodic import history_id

    with engine.writing():
        return _forget_user(engine, user_id, now, history_id(user_id))


def _forget_user(engine: MemoryEngine, user_id: str, now: datetime, audit_id: str) -> int:
    personal = [r for r in engine.store.scan(user_id) if r.user_id == user_id]
    seqs = _delete(engine, personal, now, f"forget-user:{user_id}")
    history = engine.episodes
    entries = history.profiles.delete_owner(owner_of(user_id=user_id))
    events = history.forget_user(user_id)
    engine.store.drop_partition(user_id)
    refused = engine.audit.rejected(user_id)
    engine.audit.forget([audit_id, *entries, *refused])
    restated = engine.audit.forget_merged_by(user_id)  # their words merged into shared memories
    _finish(engine, personal, seqs, f"forget-user:{user_id}")  # also vacuums the dropped collections' pages
    log.info(
        "forgot user %s: %d memories, %d history events, %d profile entries, %d refused candidates, %d restatements",
        user_id,
        len(personal),
        events,
        len(entries),
        len(refused),
        restated,
    )
    return len(personal)


def erase_text(engine: MemoryEngine, ids: Sequence[str]) -> None:
    """The copies of deleted memories' text outside their store rows: Chroma's (embedded) and the audit log's."""
    engine.store.scrub(ids)
    engine.audit.forget(list(ids))


def _delete(engine: MemoryEngine, records: Sequence[MemoryRecord], now: datetime, actor: str) -> list[int]:
    """Log the FORGET events uncommitted, then delete the records from the store; returns the events' numbers."""
    rows = [(r.id, EventKind.FORGET, now, r.revision + 1, actor, {"type": r.type.value}) for r in records]
    seqs = engine.audit.append_many(rows)
    engine.store.delete(records)
    return seqs


def _finish(engine: MemoryEngine, records: Sequence[MemoryRecord], seqs: list[int], actor: str) -> None:
    """Erase the deleted records' text, then commit their FORGET events."""
    erase_text(engine, [r.id for r in records])
    engine.audit.commit(seqs)
    for record in records:
        log.info("forgot %s (%s) by %s", record.id, record.type.value, actor)

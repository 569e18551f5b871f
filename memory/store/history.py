"""Where episodic events live: SQLite for their text, a BM25 index and episodes; Chroma for their vectors.

``history.sqlite3`` (beside the memory store) holds every event row, an FTS5 index of the active
events' text (Porter stemming, BM25 ranking; the owner is an indexed column, so a user's lexical
search never reads other users' postings), the fusion-ART state of each user's episodes, and how far
each chat session has been built into memory. Chroma holds one collection of vectors per user and
nothing else (no documents, no metadata): a vector search returns ids and distances only, and the rows
come from SQLite by id.

Write protocol of a batch (:meth:`HistoryStore.add`): (1) one SQLite transaction inserts the new rows
(ids already present are skipped: ingesting twice adds nothing) and their FTS entries, flagged
``vector_ok = 0``; (2) the vectors are upserted into Chroma; (3) the rows are flagged ``vector_ok = 1``.
A crash between (1) and (3) leaves rows that :meth:`HistoryStore.unvectored` lists, so the caller
embeds and upserts them again on open (an upsert of the same id is harmless). A row is searchable
lexically from (1) and by vector from (2).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from memory.history import EventStatus, HistoryEvent
from memory.store.client import StoreClient, distance_to_similarity
from memory.store.history_rows import (
    COLUMNS,
    SCHEMA,
    from_row,
    marks,
    match_query,
    owner_token,
    to_row,
)
from memory.store_health import when_unlocked


class HistoryStore:
    """Events of every user: rows, the BM25 index and episodes in SQLite, vectors in Chroma."""

    def __init__(self, path: Path, client: StoreClient) -> None:
        """Open (creating if needed) ``path`` and use ``client`` for the vector collections."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.client = client
        self.db = sqlite3.connect(str(path), timeout=30.0, isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        when_unlocked(self._setup)

    def _setup(self) -> None:
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA secure_delete=ON")  # a deleted event's text does not linger in free pages
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        """Close the database (the Chroma client belongs to the memory store)."""
        self.db.close()

    def _vector_name(self, user_id: str) -> str:
        return f"{self.client.prefix}-hist-{owner_token(user_id)}"

    def _vectors(self, user_id: str, create: bool) -> Any:
        return self.client.collection(self._vector_name(user_id), create, metadata={"mark": 1, "history": "vectors"})

    # -- writes ------------------------------------------------------------------------------
    def add(self, events: Sequence[HistoryEvent], vectors: Sequence[Sequence[float]]) -> list[HistoryEvent]:
        """Store the events not stored yet (by id) with their vectors; returns those added, in order."""
        known = self.existing([e.id for e in events])
        fresh = [(e, v) for e, v in zip(events, vectors, strict=True) if e.id not in known]
        fresh = list({e.id: (e, v) for e, v in fresh}.values())  # a batch that repeats a turn adds it once
        if not fresh:
            return []
        self.db.execute("BEGIN")
        try:
            for event, _ in fresh:
                cursor = self.db.execute(f"INSERT INTO events ({COLUMNS}) VALUES ({marks(16)})", to_row(event))
                if event.status is EventStatus.ACTIVE:
                    self.db.execute(
                        "INSERT INTO events_fts (rowid, text, owner) VALUES (?, ?, ?)",
                        (cursor.lastrowid, event.text, owner_token(event.user_id)),
                    )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.put_vectors([e for e, _ in fresh], [v for _, v in fresh])
        return [e for e, _ in fresh]

    def put_vectors(self, events: Sequence[HistoryEvent], vectors: Sequence[Sequence[float]]) -> None:
        """Upsert the vectors of stored events into their owners' collections and flag them done."""
        by_user: dict[str, list[int]] = {}
        for i, event in enumerate(events):
            by_user.setdefault(event.user_id, []).append(i)
        for user_id, indexes in by_user.items():
            collection = self._vectors(user_id, create=True)
            step = self.client.batch_size()
            for start in range(0, len(indexes), step):
                part = indexes[start : start + step]
                collection.upsert(
                    ids=[events[i].id for i in part],
                    embeddings=np.asarray([vectors[i] for i in part], dtype=np.float32),
                )
        self._many("UPDATE events SET vector_ok = 1 WHERE id = ?", [(e.id,) for e in events])

    def _many(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
        self.db.execute("BEGIN")
        try:
            self.db.executemany(sql, rows)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def set_episodes(self, assignments: Sequence[tuple[str, str]]) -> None:
        """Record each event's episode: (event id, episode id) pairs."""
        self._many("UPDATE events SET episode_id = ? WHERE id = ?", [(ep, ev) for ev, ep in assignments])

    def touch(self, ids: Sequence[str], now: datetime) -> None:
        """Count one access for each event a search returned (LRU eviction reads ``last_access``)."""
        stamp = now.timestamp()
        self._many("UPDATE events SET last_access = ?, accesses = accesses + 1 WHERE id = ?", [(stamp, i) for i in ids])

    def archive(self, ids: Sequence[str]) -> None:
        """Take events out of search (consolidated or evicted); their rows stay for audit."""
        sql = f"SELECT rowid, id, user_id FROM events WHERE status = 'active' AND id IN ({marks(len(ids))})"
        rows = self.db.execute(sql, list(ids)).fetchall()
        self.db.execute("BEGIN")
        try:
            for row in rows:
                self.db.execute("DELETE FROM events_fts WHERE rowid = ?", (row["rowid"],))
                self.db.execute("UPDATE events SET status = 'archived' WHERE rowid = ?", (row["rowid"],))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self._drop_vectors(rows)

    def delete(self, ids: Sequence[str]) -> int:
        """Erase events: their rows, index entries and vectors (forgetting); returns how many."""
        sql = f"SELECT rowid, id, user_id, status FROM events WHERE id IN ({marks(len(ids))})"
        rows = self.db.execute(sql, list(ids)).fetchall()
        self.db.execute("BEGIN")
        try:
            for row in rows:
                if row["status"] == EventStatus.ACTIVE.value:
                    self.db.execute("DELETE FROM events_fts WHERE rowid = ?", (row["rowid"],))
                self.db.execute("DELETE FROM events WHERE rowid = ?", (row["rowid"],))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self._drop_vectors(rows)
        return len(rows)

    def forget_user(self, user_id: str) -> int:
        """Erase a user's events (any status), index entries, episodes, chat progress and vectors; returns how many.

        No text lingers: ``secure_delete`` is on, FTS5 ``optimize`` rewrites the index without the deleted
        entries and the WAL is truncated (so are profile rows deleted before). The caller scrubs Chroma.
        """
        statements = [
            "DELETE FROM events_fts WHERE rowid IN (SELECT rowid FROM events WHERE user_id = ? AND status = 'active')",
            "DELETE FROM events WHERE user_id = ?",
            "DELETE FROM episodes WHERE user_id = ?",
            "DELETE FROM chat_sessions WHERE user_id = ?",
        ]
        self.db.execute("BEGIN")
        try:
            erased = [self.db.execute(sql, (user_id,)).rowcount for sql in statements][1]
            self.db.execute("INSERT INTO events_fts (events_fts) VALUES ('optimize')")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.client.drop(self._vector_name(user_id))
        return erased

    def _drop_vectors(self, rows: Sequence[sqlite3.Row]) -> None:
        by_user: dict[str, list[str]] = {}
        for row in rows:
            by_user.setdefault(row["user_id"], []).append(row["id"])
        for user_id, ids in by_user.items():
            collection = self._vectors(user_id, create=False)
            if collection is not None:
                collection.delete(ids=ids)

    # -- reads -------------------------------------------------------------------------------
    def existing(self, ids: Sequence[str]) -> set[str]:
        """The ids among ``ids`` that are stored."""
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            found |= {r[0] for r in self.db.execute(f"SELECT id FROM events WHERE id IN ({marks(len(part))})", part)}
        return found

    def get(self, ids: Sequence[str]) -> dict[str, HistoryEvent]:
        """Events by id (missing ids are left out)."""
        out: dict[str, HistoryEvent] = {}
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            sql = f"SELECT {COLUMNS} FROM events WHERE id IN ({marks(len(part))})"
            out.update({r["id"]: from_row(r) for r in self.db.execute(sql, part)})
        return out

    def events(self, user_id: str, status: EventStatus | None = EventStatus.ACTIVE) -> list[HistoryEvent]:
        """A user's events in history order (oldest first); ``status`` None: every status."""
        where, args = (
            ("user_id = ?", [user_id]) if status is None else ("user_id = ? AND status = ?", [user_id, status])
        )
        rows = self.db.execute(f"SELECT {COLUMNS} FROM events WHERE {where} ORDER BY position, turn", args)
        return [from_row(r) for r in rows]

    def session(self, user_id: str, session_id: str) -> list[HistoryEvent]:
        """The events of one session, in turn order."""
        rows = self.db.execute(
            f"SELECT {COLUMNS} FROM events WHERE user_id = ? AND session_id = ? ORDER BY turn", (user_id, session_id)
        )
        return [from_row(r) for r in rows]

    def in_episodes(self, user_id: str, episode_ids: Sequence[str]) -> list[HistoryEvent]:
        """A user's active events of the given episodes."""
        if not episode_ids:
            return []
        sql = (
            f"SELECT {COLUMNS} FROM events WHERE user_id = ? AND status = 'active'"
            f" AND episode_id IN ({marks(len(episode_ids))})"
        )
        return [from_row(r) for r in self.db.execute(sql, [user_id, *episode_ids])]

    def users(self) -> list[str]:
        """Every user with events."""
        return [r[0] for r in self.db.execute("SELECT DISTINCT user_id FROM events ORDER BY user_id")]

    def count(self, user_id: str | None = None, status: EventStatus | None = EventStatus.ACTIVE) -> int:
        """How many events (of a user, of a status)."""
        sql, args = "SELECT COUNT(*) FROM events WHERE 1=1", list[str]()
        if user_id is not None:
            sql, args = sql + " AND user_id = ?", [*args, user_id]
        if status is not None:
            sql, args = sql + " AND status = ?", [*args, status.value]
        return int(self.db.execute(sql, args).fetchone()[0])

    def unvectored(self) -> list[HistoryEvent]:
        """Stored events whose vectors a crash may have lost (to embed and upsert again)."""
        rows = self.db.execute(f"SELECT {COLUMNS} FROM events WHERE vector_ok = 0 AND status = 'active'")
        return [from_row(r) for r in rows]

    def vector_search(self, user_id: str, vector: Sequence[float], n: int) -> list[tuple[str, float]]:
        """The ``n`` nearest active events of a user: (id, cosine similarity), best first."""
        collection = self._vectors(user_id, create=False)
        if collection is None or n <= 0:
            return []
        count = collection.count()
        if count == 0:
            return []
        got = collection.query(
            query_embeddings=np.asarray([vector], dtype=np.float32), n_results=min(n, count), include=["distances"]
        )
        distances = (got["distances"] or [[]])[0]
        return [(i, distance_to_similarity(d)) for i, d in zip(got["ids"][0], distances, strict=True)]

    def vectors(self, user_id: str, ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored vectors of a user's events, by id (events without one are left out)."""
        collection = self._vectors(user_id, create=False)
        if collection is None or not ids:
            return {}
        got = collection.get(ids=list(ids), include=["embeddings"])
        embeddings = got["embeddings"] if got["embeddings"] is not None else []
        return {i: [float(x) for x in v] for i, v in zip(got["ids"], embeddings, strict=True)}

    def lexical_search(self, user_id: str, query: str, n: int) -> list[tuple[str, float]]:
        """The ``n`` best BM25 matches among a user's active events: (id, score; higher is better)."""
        terms = match_query(query)
        if terms is None or n <= 0:
            return []
        rows = self.db.execute(
            "SELECT e.id, -bm25(events_fts, 1.0, 0.0) AS score FROM events_fts"
            " JOIN events e ON e.rowid = events_fts.rowid"
            " WHERE events_fts MATCH ? ORDER BY bm25(events_fts, 1.0, 0.0) LIMIT ?",
            (f"owner:{owner_token(user_id)} AND ({terms})", n),
        )
        return [(r["id"], float(r["score"])) for r in rows]

    # -- episodes and chat progress ----------------------------------------------------------
    def episode_state(self, user_id: str) -> dict[str, Any] | None:
        """The saved fusion-ART state of a user's episodes (None: none yet)."""
        row = self.db.execute("SELECT state FROM episodes WHERE user_id = ?", (user_id,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def save_episode_state(self, user_id: str, state: dict[str, Any]) -> None:
        """Save a user's fusion-ART state."""
        self.db.execute(
            "INSERT INTO episodes (user_id, state) VALUES (?, ?)"
            " ON CONFLICT(user_id) DO UPDATE SET state = excluded.state",
            (user_id, json.dumps(state)),
        )

    def built_turn(self, user_id: str, session_id: str) -> int:
        """How many turns of a chat session were built into memory (0: none)."""
        row = self.db.execute(
            "SELECT built_turn FROM chat_sessions WHERE user_id = ? AND session_id = ?", (user_id, session_id)
        ).fetchone()
        return 0 if row is None else int(row[0])

    def set_built_turn(self, user_id: str, session_id: str, turn: int) -> None:
        """Record that a chat session was built into memory up to (not including) ``turn``."""
        self.db.execute(
            "INSERT INTO chat_sessions (user_id, session_id, built_turn) VALUES (?, ?, ?)"
            " ON CONFLICT(user_id, session_id) DO UPDATE SET built_turn = excluded.built_turn",
            (user_id, session_id, turn),
        )

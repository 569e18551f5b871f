"""How a history event is laid out in ``history.sqlite3``: the schema, the row form, the FTS query. Pure."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from datetime import UTC, datetime
from typing import Any

from memory.history import EventKind, EventStatus, HistoryEvent, Speaker

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    source TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    speaker TEXT NOT NULL,
    text TEXT NOT NULL,
    at REAL,
    position REAL NOT NULL,
    kind TEXT NOT NULL,
    sources TEXT NOT NULL,
    episode_id TEXT,
    status TEXT NOT NULL,
    ingested_at REAL NOT NULL,
    last_access REAL NOT NULL,
    accesses INTEGER NOT NULL,
    vector_ok INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS events_by_user ON events (user_id, status, position);
CREATE INDEX IF NOT EXISTS events_by_session ON events (user_id, session_id, turn);
CREATE INDEX IF NOT EXISTS events_by_episode ON events (user_id, episode_id);
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(text, owner, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS episodes (user_id TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chat_sessions (
    user_id TEXT NOT NULL, session_id TEXT NOT NULL, built_turn INTEGER NOT NULL,
    PRIMARY KEY (user_id, session_id)
);
"""
COLUMNS = (
    "id, user_id, source, session_id, turn, speaker, text, at, position, kind, sources, episode_id, status,"
    " ingested_at, last_access, accesses"
)
_FTS_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def owner_token(user_id: str) -> str:
    """The FTS token standing for a user (a hash: user ids may hold any character)."""
    return "u" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:24]


def marks(n: int) -> str:
    """``n`` SQL placeholders."""
    return ",".join("?" * n)


def _ts(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def _dt(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def to_row(event: HistoryEvent) -> tuple[Any, ...]:
    """An event as the values of ``COLUMNS``."""
    return (
        event.id,
        event.user_id,
        event.source,
        event.session_id,
        event.turn,
        event.speaker.value,
        event.text,
        _ts(event.at),
        event.position,
        event.kind.value,
        json.dumps(event.sources),
        event.episode_id,
        event.status.value,
        event.ingested_at.timestamp(),
        event.last_access.timestamp(),
        event.accesses,
    )


def from_row(row: sqlite3.Row) -> HistoryEvent:
    """An event from a row of ``COLUMNS``."""
    ingested = _dt(row["ingested_at"])
    last = _dt(row["last_access"])
    assert ingested is not None and last is not None
    return HistoryEvent(
        id=row["id"],
        user_id=row["user_id"],
        source=row["source"],
        session_id=row["session_id"],
        turn=row["turn"],
        speaker=Speaker(row["speaker"]),
        text=row["text"],
        at=_dt(row["at"]),
        position=row["position"],
        kind=EventKind(row["kind"]),
        sources=json.loads(row["sources"]),
        episode_id=row["episode_id"],
        status=EventStatus(row["status"]),
        ingested_at=ingested,
        last_access=last,
        accesses=row["accesses"],
    )


def match_query(text: str, max_terms: int = 32) -> str | None:
    """An FTS5 query that matches any word of ``text`` (each quoted, so no word is read as syntax)."""
    words = list(dict.fromkeys(w.lower() for w in _FTS_WORD.findall(text) if len(w) > 1))[:max_terms]
    return " OR ".join(f'"{w}"' for w in words) or None

"""Semantic profiles: small key-value facts about a user or an agent, always injected (MemoryART A3, S2).

A profile entry is one current value per key ("diet" = "vegetarian"), with where it came from (the
events or the person who set it). Setting a key that holds another value supersedes the old entry (kept,
marked superseded, audited): a newer value wins and is never silently duplicated. Unsetting keeps the
entry for audit too. Every change is an audited ``profile_set`` / ``profile_unset`` event under the
entry's id. Profiles live in ``history.sqlite3`` beside the events (:mod:`memory.store.history`).

What a profile may hold is bounded when it is injected (:func:`profile_lines`): at most ``MAX_ENTRIES``
entries and ``MAX_CHARS`` characters, newest first, each quoted on one line.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import uuid
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mark.errors import InputError, NotFoundError
from memory.audit import AuditBackend, EventKind
from memory.models import check_user_id, one_line

log = logging.getLogger(__name__)
MAX_ENTRIES = 12
MAX_CHARS = 600
_KEY = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS profile_entries (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    provenance TEXT NOT NULL,
    set_by TEXT NOT NULL,
    status TEXT NOT NULL,
    superseded_by TEXT,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS profile_by_owner ON profile_entries (owner, status, key);
"""


def owner_of(user_id: str | None = None, agent: str | None = None) -> str:
    """The owner of a profile: ``user:<id>`` or ``agent:<name>`` (exactly one of them)."""
    if (user_id is None) == (agent is None):
        raise InputError("a profile belongs to a user or to an agent: name exactly one")
    if user_id is not None:
        return f"user:{check_user_id(user_id)}"
    assert agent is not None
    if not agent.strip():
        raise InputError("the agent name is empty")
    return f"agent:{agent.strip()}"


def normal_key(key: str) -> str:
    """A key as stored: lower case, words joined by underscores ("Preferred Units" -> "preferred_units")."""
    value = re.sub(r"[^a-z0-9]+", "_", key.strip().lower()).strip("_")
    if not _KEY.match(value):
        raise InputError(f"a profile key needs letters (up to 48 of a-z, 0-9, _), got {key!r}")
    return value


class ProfileEntry(BaseModel):
    """One fact of a profile."""

    model_config = ConfigDict(extra="forbid")

    id: str
    owner: str
    key: str
    value: str
    provenance: str  # the events it was learnt from, or who set it by hand
    set_by: str
    status: str  # current, superseded or unset
    superseded_by: str | None = None
    updated_at: datetime

    @field_validator("value")
    @classmethod
    def _value(cls, value: str) -> str:
        value = one_line(value)
        if not value:
            raise ValueError("a profile value is empty")
        if len(value) > 200:
            raise ValueError("a profile value is at most 200 characters")
        return value


class ProfileChange(BaseModel):
    """What one set did: the new entry and the one it superseded (None when the key was free)."""

    model_config = ConfigDict(extra="forbid")

    entry: ProfileEntry
    superseded: ProfileEntry | None = None
    unchanged: bool = False  # the key already held this value
    history: list[ProfileEntry] = Field(default_factory=list)


class Profiles:
    """Profile entries in SQLite, every change audited."""

    def __init__(self, db: sqlite3.Connection, audit: AuditBackend) -> None:
        """Use an open connection (the history database) and the audit log."""
        self.db, self.audit = db, audit
        self.db.executescript(_SCHEMA)

    def current(self, owner: str) -> list[ProfileEntry]:
        """The current entries of a profile, newest first."""
        rows = self.db.execute(
            "SELECT * FROM profile_entries WHERE owner = ? AND status = 'current' ORDER BY updated_at DESC, key",
            (owner,),
        )
        return [_entry(r) for r in rows]

    def history(self, owner: str, key: str) -> list[ProfileEntry]:
        """Every entry a key of a profile has had, oldest first."""
        rows = self.db.execute(
            "SELECT * FROM profile_entries WHERE owner = ? AND key = ? ORDER BY updated_at, rowid", (owner, key)
        )
        return [_entry(r) for r in rows]

    def set(self, owner: str, key: str, value: str, *, now: datetime, actor: str, provenance: str) -> ProfileChange:
        """Set a key: a new value supersedes the current one (audited); the same value changes nothing."""
        key = normal_key(key)
        old = next((e for e in self.current(owner) if e.key == key), None)
        entry = ProfileEntry(
            id="pf-" + uuid.uuid4().hex,
            owner=owner,
            key=key,
            value=value,
            provenance=provenance,
            set_by=actor,
            status="current",
            updated_at=now,
        )
        if old is not None and old.value.casefold() == entry.value.casefold():
            return ProfileChange(entry=old, unchanged=True)
        detail = {"owner": owner, "key": key, "value": entry.value, "provenance": provenance}
        if old is not None:
            detail["replaces"] = old.id
        seq = self.audit.append(entry.id, EventKind.PROFILE_SET, now, 1, actor, detail)
        self.db.execute("BEGIN")
        try:
            if old is not None:
                self.db.execute(
                    "UPDATE profile_entries SET status = 'superseded', superseded_by = ? WHERE id = ?",
                    (entry.id, old.id),
                )
            self.db.execute(
                "INSERT INTO profile_entries (id, owner, key, value, provenance, set_by, status, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, 'current', ?)",
                (entry.id, owner, key, entry.value, provenance, actor, now.timestamp()),
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.audit.commit([seq])
        log.info("profile %s: %s = %r (%s)", owner, key, entry.value, "replaced" if old else "new")
        return ProfileChange(entry=entry, superseded=old, history=self.history(owner, key))

    def unset(self, owner: str, key: str, *, now: datetime, actor: str) -> ProfileEntry:
        """Remove a key's current value (the entry is kept, marked unset, and audited)."""
        key = normal_key(key)
        old = next((e for e in self.current(owner) if e.key == key), None)
        if old is None:
            raise NotFoundError(f"the profile {owner} has no key {key!r}: `mark profile show` lists them")
        seq = self.audit.append(old.id, EventKind.PROFILE_UNSET, now, 2, actor, {"owner": owner, "key": key})
        self.db.execute("UPDATE profile_entries SET status = 'unset' WHERE id = ?", (old.id,))
        self.audit.commit([seq])
        return old.model_copy(update={"status": "unset"})

    def delete_owner(self, owner: str) -> list[str]:
        """Erase every entry of a profile (forgetting a user); returns their ids (to tombstone their audit events)."""
        ids = [r[0] for r in self.db.execute("SELECT id FROM profile_entries WHERE owner = ?", (owner,))]
        self.db.execute("DELETE FROM profile_entries WHERE owner = ?", (owner,))
        return ids


def _entry(row: sqlite3.Row) -> ProfileEntry:
    return ProfileEntry(
        id=row["id"],
        owner=row["owner"],
        key=row["key"],
        value=row["value"],
        provenance=row["provenance"],
        set_by=row["set_by"],
        status=row["status"],
        superseded_by=row["superseded_by"],
        updated_at=datetime.fromtimestamp(row["updated_at"], UTC),
    )


def profile_lines(entries: list[ProfileEntry]) -> list[str]:
    """A profile as ``key: value`` lines, newest first, within ``MAX_ENTRIES`` and ``MAX_CHARS``."""
    lines: list[str] = []
    size = 0
    for entry in entries[:MAX_ENTRIES]:
        line = f"{entry.key.replace('_', ' ')}: {entry.value}"
        if size + len(line) > MAX_CHARS:
            break
        lines.append(line)
        size += len(line)
    return lines

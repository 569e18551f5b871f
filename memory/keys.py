"""API keys: who a caller is and what they may do (issue 15: identity and roles).

A key is a random secret shown once when it is created (``mark keys create``); only its SHA-256 is kept,
in ``keys.json`` beside the store (owner-only file, replaced atomically). Each key maps to one user and
a set of roles:

- ``user``: their own personal memories, shared memories to read, feedback, their profile, chat;
- ``sme``: as a user, and what they teach is credited to an SME (shared domain memory) - the credit
  comes from the role, never from a flag the caller sets;
- ``reviewer``: decides the review queue, and votes as a reviewer;
- ``admin``: everything, including every user's memories, export and import, and keys.

A revoked key is kept (with when it was revoked) so the audit log's actors stay explained. The command
line acts as a configured local admin (:data:`LOCAL_ADMIN`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tempfile
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mark.errors import InputError, NotFoundError
from memory.models import check_user_id

PREFIX = "mk_"


class Role(StrEnum):
    """What a key may do."""

    USER = "user"
    SME = "sme"
    REVIEWER = "reviewer"
    ADMIN = "admin"


class Identity(BaseModel):
    """A caller: the user they act as, their roles, and the key that says so."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str
    roles: frozenset[Role]
    key_id: str

    def has(self, role: Role) -> bool:
        """Whether the caller holds ``role`` (an admin holds every role)."""
        return role in self.roles or Role.ADMIN in self.roles

    @property
    def actor(self) -> str:
        """How the audit log names this caller."""
        return f"{self.user_id} (key {self.key_id})"


LOCAL_ADMIN = Identity(user_id="local-admin", roles=frozenset({Role.ADMIN}), key_id="cli")


class KeyEntry(BaseModel):
    """One key as stored: its hash, never the key."""

    model_config = ConfigDict(extra="forbid")

    id: str  # the first characters of the key, to name it in lists and the audit log
    sha256: str
    user_id: str
    roles: list[Role] = Field(min_length=1)
    name: str = ""
    created_at: datetime
    revoked_at: datetime | None = None


class CreatedKey(BaseModel):
    """A new key: the secret (shown once) and its entry."""

    model_config = ConfigDict(extra="forbid")

    key: str
    entry: KeyEntry


def digest(key: str) -> str:
    """The SHA-256 of a key (keys are long random strings, so a plain hash is enough)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class KeyStore:
    """The keys file: create, list, revoke, and identify a caller by key."""

    def __init__(self, path: Path) -> None:
        """Use ``path`` (created on the first key)."""
        self.path = path

    def _read(self) -> list[KeyEntry]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [KeyEntry.model_validate(item) for item in data]
        except (OSError, ValueError, ValidationError) as exc:
            problem = f"the keys file {self.path} cannot be read ({exc})"
            raise InputError(f"{problem}: restore it or create new keys") from exc

    def _write(self, entries: list[KeyEntry]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".keys.", suffix=".tmp")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump([e.model_dump(mode="json") for e in entries], handle, indent=2)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def create(self, user_id: str, roles: list[Role], *, now: datetime, name: str = "") -> CreatedKey:
        """A new key for ``user_id`` with ``roles``; the returned secret is not stored anywhere."""
        check_user_id(user_id)
        if not roles:
            raise InputError("a key needs at least one role: user, sme, reviewer or admin")
        key = PREFIX + secrets.token_urlsafe(32)
        entry = KeyEntry(
            id=key[: len(PREFIX) + 8],
            sha256=digest(key),
            user_id=user_id,
            roles=sorted(set(roles)),
            name=name,
            created_at=now,
        )
        self._write([*self._read(), entry])
        return CreatedKey(key=key, entry=entry)

    def list(self) -> list[KeyEntry]:
        """Every key, revoked ones included."""
        return self._read()

    def revoke(self, key_id: str, *, now: datetime) -> KeyEntry:
        """Revoke a key by its id (kept, marked revoked)."""
        entries = self._read()
        for entry in entries:
            if entry.id == key_id and entry.revoked_at is None:
                entry.revoked_at = now
                self._write(entries)
                return entry
        raise NotFoundError(f"no active key {key_id!r}: `mark keys list` shows them")

    def identify(self, key: str) -> Identity | None:
        """The caller a key stands for (None for an unknown or revoked key)."""
        wanted = digest(key)
        for entry in self._read():
            if secrets.compare_digest(entry.sha256, wanted) and entry.revoked_at is None:
                return Identity(user_id=entry.user_id, roles=frozenset(entry.roles), key_id=entry.id)
        return None

"""What a caller may do with mark, whoever serves it (REST, MCP): the engine and the society behind roles.

Every operation takes the caller's :class:`~memory.keys.Identity` and enforces the same rules:

- personal memories reach their owner only (an admin sees every memory); asking for another user's
  memory is answered as if it did not exist (:class:`~mark.errors.NotFoundError`: HTTP 404), so ids
  leak nothing;
- SME credit comes from the role: a caller with ``sme`` writes and builds as an SME; everyone else as a
  user (shared memory from a user waits for a reviewer, as the engine's write policy says);
- review decisions need ``reviewer``; export, import and other users' memories need ``admin``;
- every change is audited with the caller as actor.

The engine is not thread-safe (one Chroma client, SQLite connections): every engine call runs under
one lock. Model calls (chat, builds) run outside it, so a slow model never blocks searches.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from autogen_core.models import ChatCompletionClient

from agents.building import BuildReport, BuildState, ReviewPolicy, Turn
from agents.chatbot import MarkMemory, Retrieved
from agents.errors import ProviderError
from agents.team import build_memories
from mark.errors import InputError, MarkError
from memory import review
from memory.audit import EventKind
from memory.engine import AddResult, MemoryEngine, UnknownMemoryError, utcnow
from memory.episodic import EventHit
from memory.keys import Identity, Role
from memory.models import MemoryRecord, MemoryType, Source, Status, VoterRole
from memory.profiles import ProfileChange, ProfileEntry, owner_of
from memory.search import SearchHit

T = TypeVar("T")


class Forbidden(MarkError, PermissionError):
    """The caller's roles do not allow this (HTTP 403)."""


class Metrics:
    """Request counters and latencies, by operation, for ``/metrics``."""

    def __init__(self) -> None:
        """Start empty."""
        self.calls: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.seconds: dict[str, float] = {}
        self._lock = threading.Lock()

    def observe(self, name: str, seconds: float, failed: bool) -> None:
        """Count one call."""
        with self._lock:
            self.calls[name] = self.calls.get(name, 0) + 1
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds
            if failed:
                self.errors[name] = self.errors.get(name, 0) + 1


class Service:
    """mark's operations for identified callers."""

    def __init__(self, engine: MemoryEngine, client_factory: Callable[[], ChatCompletionClient], domain: str) -> None:
        """Serve ``engine``; ``client_factory`` builds the model client on first use."""
        self.engine, self.domain = engine, domain
        self._client_factory = client_factory
        self._client: ChatCompletionClient | None = None
        self._lock = threading.RLock()
        self.metrics = Metrics()

    @property
    def client(self) -> ChatCompletionClient:
        """The model client (built on first use: a search never loads a model)."""
        if self._client is None:
            self._client = self._client_factory()
        return self._client

    def locked(self, name: str, fn: Callable[[], T]) -> T:
        """Run ``fn`` under the engine lock, timed and counted as ``name``."""
        started = time.monotonic()
        failed = True
        try:
            with self._lock:
                value = fn()
            failed = False
            return value
        finally:
            self.metrics.observe(name, time.monotonic() - started, failed)

    # -- memories ----------------------------------------------------------------------------
    def visible(self, caller: Identity, record: MemoryRecord) -> bool:
        """Whether the caller may see a memory: shared, their own, or any for an admin."""
        return record.shared or record.user_id == caller.user_id or caller.has(Role.ADMIN)

    def get(self, caller: Identity, memory_id: str) -> MemoryRecord:
        """A memory the caller may see (else "no memory with id ...": 404, never 403)."""

        def read() -> MemoryRecord:
            record = self.engine.get(memory_id)
            if not self.visible(caller, record):
                raise UnknownMemoryError(memory_id)
            return record

        return self.locked("get", read)

    def add(self, caller: Identity, text: str, memory_type: MemoryType, category: Any = None) -> AddResult:
        """Write a memory of the caller's (SME credit from the role; the engine's policy decides the status)."""
        source = Source.SME if Role.SME in caller.roles else Source.USER  # credit from the role, not an admin's say
        kwargs: dict[str, Any] = {"source": source, "actor": caller.actor}
        if category is not None:
            kwargs["category"] = category
        return self.locked("add", lambda: self.engine.add(text, memory_type, caller.user_id, **kwargs))

    def search(self, caller: Identity, query: str, k: int, preset: str | None, risk: str) -> list[SearchHit]:
        """The caller's best memories per type (their own and shared)."""
        if not query.strip():
            raise InputError("a search needs a query")
        result = self.locked("search", lambda: self.engine.search(query, caller.user_id, k=k, preset=preset, risk=risk))
        return result.all_hits()

    def feedback(self, caller: Identity, memory_id: str, correct: bool) -> MemoryRecord:
        """A vote on a memory the caller may see, weighted by their role."""
        self.get(caller, memory_id)
        role = (
            VoterRole.SME
            if Role.SME in caller.roles
            else VoterRole.REVIEWER
            if caller.has(Role.REVIEWER)
            else VoterRole.USER
        )
        return self.locked("feedback", lambda: self.engine.feedback(memory_id, correct, actor=caller.actor, role=role))

    def edit(self, caller: Identity, memory_id: str, text: str) -> MemoryRecord:
        """Change a memory's text: its owner (personal memory) or a reviewer (any memory they may see)."""
        record = self.get(caller, memory_id)
        owner = not record.shared and record.user_id == caller.user_id
        if not (owner or caller.has(Role.REVIEWER)):
            raise Forbidden("only the owner of a personal memory or a reviewer may edit a memory")
        return self.locked(
            "edit",
            lambda: self.engine.set_status(
                memory_id, record.status, EventKind.EDIT, {"before": record.text}, actor=caller.actor, text=text
            ),
        )

    def forget(self, caller: Identity, memory_id: str) -> None:
        """Erase a memory: the owner of a personal memory, or an admin."""
        record = self.get(caller, memory_id)
        if record.shared and not caller.has(Role.ADMIN):
            raise Forbidden("shared memory is forgotten by an admin; vote it incorrect or ask a reviewer instead")
        if not record.shared and record.user_id != caller.user_id and not caller.has(Role.ADMIN):
            raise UnknownMemoryError(memory_id)
        self.locked("forget", lambda: self.engine.forget(memory_id, actor=caller.actor))

    def history(self, caller: Identity, memory_id: str) -> list[dict[str, Any]]:
        """The audited changes of a memory the caller may see."""
        self.get(caller, memory_id)
        return [e.model_dump(mode="json") for e in self.locked("history", lambda: self.engine.history(memory_id))]

    def memories(self, caller: Identity, user_id: str | None, status: Status | None) -> list[MemoryRecord]:
        """The memories the caller may list: their own and shared; every user's for an admin."""
        if user_id is not None and user_id != caller.user_id and not caller.has(Role.ADMIN):
            raise Forbidden("listing another user's memories needs the admin role")
        statuses = [status] if status else None
        if user_id is None and caller.has(Role.ADMIN):
            return self.locked("list", lambda: self.engine.list(None, statuses=statuses))
        return self.locked("list", lambda: self.engine.list(user_id or caller.user_id, statuses=statuses))

    def export(self, caller: Identity) -> list[MemoryRecord]:
        """What the caller may take away: the memories they own (an admin: every memory)."""
        if caller.has(Role.ADMIN):
            return self.locked("export", lambda: self.engine.list(None))
        return [
            r for r in self.locked("export", lambda: self.engine.list(caller.user_id)) if r.user_id == caller.user_id
        ]

    # -- profile and history -----------------------------------------------------------------
    def profile(self, caller: Identity) -> list[ProfileEntry]:
        """The caller's profile."""
        return self.locked("profile", lambda: self.engine.episodes.profiles.current(owner_of(user_id=caller.user_id)))

    def set_profile(self, caller: Identity, key: str, value: str) -> ProfileChange:
        """Set a key of the caller's profile."""
        owner = owner_of(user_id=caller.user_id)
        return self.locked(
            "profile",
            lambda: self.engine.episodes.profiles.set(
                owner, key, value, now=utcnow(), actor=caller.actor, provenance="set through the API"
            ),
        )

    def unset_profile(self, caller: Identity, key: str) -> ProfileEntry:
        """Remove a key of the caller's profile."""
        owner = owner_of(user_id=caller.user_id)
        return self.locked(
            "profile", lambda: self.engine.episodes.profiles.unset(owner, key, now=utcnow(), actor=caller.actor)
        )

    def history_search(self, caller: Identity, query: str, k: int) -> list[EventHit]:
        """The turns of the caller's own history that answer ``query``."""
        if not query.strip():
            raise InputError("a search needs a query")
        return self.locked("history", lambda: self.engine.episodes.search(caller.user_id, query, k=k))

    # -- review queue ------------------------------------------------------------------------
    def require(self, caller: Identity, role: Role) -> None:
        """Refuse a caller without ``role``."""
        if not caller.has(role):
            raise Forbidden(f"this needs the {role.value} role")

    def pending(self, caller: Identity) -> list[MemoryRecord]:
        """The review queue (reviewers)."""
        self.require(caller, Role.REVIEWER)
        return self.locked("reviews", lambda: review.pending(self.engine))

    def decide(self, caller: Identity, memory_id: str, action: str, text: str | None, reason: str) -> MemoryRecord:
        """Approve, edit or reject a pending memory (reviewers; audited with the reviewer as actor)."""
        self.require(caller, Role.REVIEWER)
        who = caller.actor
        if action == "approve":
            return self.locked("decide", lambda: review.approve(self.engine, memory_id, who))
        if action == "edit":
            return self.locked("decide", lambda: review.edit(self.engine, memory_id, text or "", who))
        if action == "reject":
            return self.locked("decide", lambda: review.reject(self.engine, memory_id, who, reason))
        raise InputError(f"a review decision is approve, edit or reject, not {action!r}")

    # -- the society -------------------------------------------------------------------------
    def build(self, caller: Identity, turns: list[Turn], policy: ReviewPolicy) -> BuildReport:
        """Build a transcript into the caller's memory (SME credit from the role); all or nothing."""
        source = Source.SME if Role.SME in caller.roles else Source.USER
        state = BuildState(turns, caller.user_id, source=source, policy=policy, domain=self.domain)
        started = time.monotonic()
        try:
            with self._lock:  # the team writes through the engine: one build at a time
                asyncio.run(build_memories(self.engine, self.client, state))
        finally:
            self.metrics.observe("build", time.monotonic() - started, bool(state.usage.unreachable))
        if state.usage.unreachable:
            why = state.usage.unreachable[0]
            raise ProviderError(f"the model could not be reached during the build; nothing was written ({why})")
        return state.report()

    def context(self, caller: Identity, query: str) -> Retrieved:
        """What an answer to ``query`` is given for this caller; the memories are counted as recalled."""
        memory = MarkMemory(self.engine, caller.user_id, knowledge=self.engine.knowledge, profile="chatbot", events=2)

        def retrieve() -> Retrieved:
            got = memory.retrieve(query)
            if got.hits:
                self.engine.mark_injected([h.record.id for h in got.hits], actor=f"chat:{caller.actor}")
            return got

        return self.locked("context", retrieve)

"""A user's episodic memory: events in, episodes formed by fusion ART, and hybrid search out (A1, A2, X2).

:class:`History` writes events through :class:`~memory.store.history.HistoryStore` in batches (one
embedding call, one SQLite transaction and one Chroma upsert per batch, no conflict judging: an event
is what was said, not a fact), assigns each new event to an episode with the user's fusion-ART network
(:mod:`memory.art`, state saved per user), and audits one ``ingest`` event per call.

Search fuses, by reciprocal rank (``1 / (rrf_k + rank)``), the vector neighbours and the BM25 matches
of the question; a question that names a time ("last month") adds the events of that window and of the
episodes that resonate with the question on content and time together; a question about a current
value ("how many ... now") adds a bonus by recency, so the newest of conflicting statements comes
first. Every part can be switched off (:class:`SearchParts`) to measure what it adds. Events never
decay: an event's age alone never hides it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from memory import timewords
from memory.art import ArtNetwork, Channel, encode_event
from memory.audit import AuditBackend
from memory.audit import EventKind as AuditKind
from memory.config import HistoryConfig
from memory.history import EventKind, EventStatus, HistoryEvent, Speaker, event_id
from memory.ingest import ParsedHistory, ParsedTurn
from memory.profiles import Profiles

if TYPE_CHECKING:
    from memory.embedder import Embedder
    from memory.store.history import HistoryStore
    from memory.store.memories import ChromaStore

log = logging.getLogger(__name__)
EPOCH_DAY = 86400.0


class IngestReport(BaseModel):
    """What one ingest did."""

    model_config = ConfigDict(extra="forbid")

    user_id: str
    source: str
    format: str
    turns: int  # turns read from the file
    added: int  # new events
    existing: int  # already stored (a re-run adds nothing)
    undated: int  # turns without a date (accepted, flagged)
    sessions: int
    episodes: int  # the user's episodes after the ingest
    seconds: float

    @property
    def rate(self) -> float:
        """Turns per second over the whole call."""
        return self.turns / self.seconds if self.seconds > 0 else 0.0


class SearchParts(BaseModel):
    """Which retrievers and boosts a search uses (each can be switched off to measure it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vector: bool = True
    lexical: bool = True
    time: bool = True
    episodes: bool = True


class EventHit(BaseModel):
    """A found event, its fused score, why it was found, and its neighbours in the session."""

    model_config = ConfigDict(extra="forbid")

    event: HistoryEvent
    score: float
    found_by: list[str]  # vector, lexical, time, episode, latest
    context: list[HistoryEvent] = []  # the turns just before and after it in its session


def history_id(user_id: str) -> str:
    """The audit id under which a user's history changes are filed."""
    return f"history:{user_id}"


def _days(at: datetime | None, fallback: float) -> float:
    return at.timestamp() / EPOCH_DAY if at is not None else fallback / EPOCH_DAY


class History:
    """Ingest, episodes and hybrid search over users' conversation events."""

    def __init__(
        self, store: HistoryStore, embedder: Embedder, audit: AuditBackend, config: HistoryConfig | None = None
    ) -> None:
        """Serve events from ``store``, embedding with ``embedder`` and auditing into ``audit``."""
        self.store, self.embedder, self.audit = store, embedder, audit
        self.reply_embedder = embedder  # the assistant's turns (beside() gives it a shorter reading)
        self.config = config or HistoryConfig()
        self._networks: dict[str, ArtNetwork] = {}
        self._profiles: Profiles | None = None

    @property
    def profiles(self) -> Profiles:
        """The user and agent profiles kept beside the events (semantic memory, A3)."""
        if self._profiles is None:
            self._profiles = Profiles(self.store.db, self.audit)
        return self._profiles

    @classmethod
    def beside(cls, store: ChromaStore, audit: AuditBackend, embedder: Embedder, config: HistoryConfig) -> History:
        """The histories beside an open memory store (``history.sqlite3`` next to the audit log), recovered."""
        from memory.embedder import int8, truncated
        from memory.store.history import HistoryStore

        events = HistoryStore(audit.path.parent / "history.sqlite3", store.client)
        bulk = int8(embedder) if config.embed_int8 else embedder
        history = cls(events, truncated(bulk, config.embed_tokens), audit, config)
        history.reply_embedder = truncated(bulk, config.reply_embed_tokens)
        history.recover()
        return history

    # -- writes ------------------------------------------------------------------------------
    def events_of(self, user_id: str, parsed: Sequence[ParsedTurn], source: str, now: datetime) -> list[HistoryEvent]:
        """Turns as events of ``user_id`` (ids by content and position; undated turns ordered after ``now``)."""
        base = now.timestamp()
        return [
            HistoryEvent(
                id=event_id(user_id, t.session_id, t.turn, t.text),
                user_id=user_id,
                source=source,
                session_id=t.session_id,
                turn=t.turn,
                speaker=t.speaker,
                text=t.text,
                at=t.at,
                position=t.at.timestamp() + t.turn * 1e-3 if t.at is not None else base + i * 1e-3,
                ingested_at=now,
                last_access=now,
            )
            for i, t in enumerate(parsed)
        ]

    def ingest(self, user_id: str, history: ParsedHistory, now: datetime, actor: str = "ingest") -> IngestReport:
        """Store a parsed history for ``user_id`` (batched; turns already stored are skipped)."""
        started = time.monotonic()
        events = self.events_of(user_id, history.turns, history.path, now)
        known = self.store.existing([e.id for e in events])
        fresh = [e for e in events if e.id not in known]
        added = self.add(fresh)
        if added:
            detail = {"source": history.path, "format": history.format, "added": len(added), "turns": len(events)}
            seq = self.audit.append(history_id(user_id), AuditKind.INGEST, now, 0, actor, detail)
            self.audit.commit([seq])
        report = IngestReport(
            user_id=user_id,
            source=history.path,
            format=history.format,
            turns=len(events),
            added=len(added),
            existing=len(events) - len(added),
            undated=history.undated,
            sessions=len({t.session_id for t in history.turns}),
            episodes=len(self.network(user_id)),
            seconds=time.monotonic() - started,
        )
        log.info(
            "ingested %s for %s: %d new event(s), %d already stored",
            history.path,
            user_id,
            report.added,
            report.existing,
        )
        return report

    def add(self, events: Sequence[HistoryEvent]) -> list[HistoryEvent]:
        """Embed, episode and store events in batches; returns those that were new.

        The episode networks are saved once, at the end (a crash before that leaves events whose
        episode the network does not hold yet: they keep their episode id and search still finds them).
        """
        added: list[HistoryEvent] = []
        ordered = sorted(events, key=lambda e: (e.user_id, e.position, e.turn))
        touched: set[str] = set()
        for start in range(0, len(ordered), self.config.batch):
            part = ordered[start : start + self.config.batch]
            vectors = self.embed(part)
            touched |= self._learn_episodes(part, vectors)
            added += self.store.add(part, vectors)
        for user_id in touched:
            self.store.save_episode_state(user_id, self._networks[user_id].to_state())
        return added

    def embed(self, events: Sequence[HistoryEvent]) -> list[list[float]]:
        """The vectors of events: the assistant's turns read by ``reply_embedder`` (their opening), the rest in full.

        An assistant's reply is long (a list of suggestions, an explanation) and is found by its opening
        and its words (the BM25 index holds all of it); what a person said is read as far as
        ``embed_tokens`` goes. Embedding is most of an ingest's time.
        """
        replies = [i for i, e in enumerate(events) if e.speaker is Speaker.ASSISTANT]
        others = [i for i, e in enumerate(events) if e.speaker is not Speaker.ASSISTANT]
        out: list[list[float]] = [[] for _ in events]
        for indexes, embedder in ((replies, self.reply_embedder), (others, self.embedder)):
            if indexes:
                for i, vector in zip(indexes, embedder.embed([events[i].text for i in indexes]), strict=True):
                    out[i] = vector
        return out

    def _learn_episodes(self, events: Sequence[HistoryEvent], vectors: Sequence[Sequence[float]]) -> set[str]:
        """Give each event its episode (fusion ART, in history order); returns the users whose network changed."""
        touched: set[str] = set()
        known = self.store.existing([e.id for e in events])
        for event, vector in zip(events, vectors, strict=True):
            if event.id in known or event.kind is not EventKind.TURN:  # a summary keeps its episode
                continue
            net = self.network(event.user_id)
            coded = encode_event(vector, _days(event.at, event.position), event.speaker, event.session_id, net.cfg)
            event.episode_id = net.learn(coded).episode_id
            touched.add(event.user_id)
        return touched

    def network(self, user_id: str) -> ArtNetwork:
        """A user's fusion-ART network (loaded from the store on first use)."""
        if user_id not in self._networks:
            state = self.store.episode_state(user_id)
            cfg = self.config.art
            self._networks[user_id] = ArtNetwork.from_state(state, cfg) if state else ArtNetwork(cfg)
        return self._networks[user_id]

    def recover(self) -> int:
        """Embed and upsert again the events whose vectors a crash lost; returns how many."""
        lost = self.store.unvectored()
        if lost:
            self.store.put_vectors(lost, self.embed(lost))
            log.info("re-embedded %d history event(s) an interrupted write left without a vector", len(lost))
        return len(lost)

    def forget_user(self, user_id: str) -> int:
        """Erase a user's events, episodes and vectors (see :meth:`HistoryStore.forget_user`); returns how many."""
        self._networks.pop(user_id, None)
        return self.store.forget_user(user_id)

    # -- search ------------------------------------------------------------------------------
    def search(
        self,
        user_id: str,
        question: str,
        now: datetime | None = None,
        k: int = 10,
        parts: SearchParts | None = None,
        touch: bool = True,
    ) -> list[EventHit]:
        """The ``k`` events of ``user_id`` that best answer ``question`` asked at ``now``."""
        now = now or datetime.now(UTC)
        parts = parts or SearchParts(
            lexical=self.config.lexical, time=self.config.time_aware, episodes=self.config.episodes
        )
        depth, rrf = self.config.depth, self.config.rrf_k
        vector = self.embedder.embed([question])[0]
        scores: dict[str, float] = {}
        found: dict[str, list[str]] = {}

        def vote(ranked: Sequence[str], label: str, weight: float = 1.0) -> None:
            for rank, eid in enumerate(ranked, start=1):
                scores[eid] = scores.get(eid, 0.0) + weight / (rrf + rank)
                found.setdefault(eid, []).append(label)

        if parts.vector:
            vote([i for i, _ in self.store.vector_search(user_id, vector, depth)], "vector")
        if parts.lexical:
            vote([i for i, _ in self.store.lexical_search(user_id, question, depth)], "lexical")
        events = self.store.get(list(scores))
        if parts.time:
            for ranked, label, weight in self._time_votes(user_id, question, now, vector, events, parts.episodes):
                vote(ranked, label, weight)
        events.update(self.store.get([i for i in scores if i not in events]))
        live = {i: e for i, e in events.items() if e.status is EventStatus.ACTIVE}
        ranked = sorted(live, key=lambda i: (-scores[i], live[i].position))[:k]
        hits = [EventHit(event=live[i], score=round(scores[i], 6), found_by=found[i]) for i in ranked]
        if parts.episodes:
            self._add_context(hits)
        if touch and hits:
            self.store.touch([h.event.id for h in hits], now)
        return hits

    def _time_votes(
        self,
        user_id: str,
        question: str,
        now: datetime,
        vector: Sequence[float],
        events: dict[str, HistoryEvent],
        episodes: bool,
    ) -> list[tuple[list[str], str, float]]:
        """Rankings to fuse for a question about time: (event ids best first, label, weight).

        A window ("last month"): the candidates inside it, newest first, and (with episodes) the events
        of the episodes that resonate with the question on content and time. A current value ("now",
        "since I started"): every candidate, newest first, at half weight.
        """
        votes: list[tuple[list[str], str, float]] = []
        span = timewords.window(question, now)
        if span is not None:
            inside = sorted((e for e in events.values() if span.holds(e.at)), key=lambda e: -e.position)
            votes.append(([e.id for e in inside], "time", 1.0))
            if episodes:
                votes.append((self._resonating(user_id, vector, span), "episode", 0.5))
        if timewords.wants_latest(question) and events:
            newest = sorted(events.values(), key=lambda e: -e.position)
            votes.append(([e.id for e in newest], "latest", 0.5))
        return votes

    def _resonating(self, user_id: str, vector: Sequence[float], span: timewords.TimeWindow) -> list[str]:
        """Events of the episodes that resonate with the question on content and time, newest first."""
        net = self.network(user_id)
        if not len(net):
            return []
        middle = span.start + (span.end - span.start) / 2
        probe = encode_event(vector, middle.timestamp() / EPOCH_DAY, "user", "", net.cfg)
        width = (span.end - span.start).total_seconds() / EPOCH_DAY / net.cfg.time_span_days
        recalled = net.resonate(probe, k=5, channels={Channel.CONTENT, Channel.TIME}, rho={Channel.TIME: 1.0 - width})
        members = self.store.in_episodes(user_id, [r.episode_id for r in recalled])
        return [e.id for e in sorted(members, key=lambda e: -e.position)][: self.config.depth]

    def _add_context(self, hits: list[EventHit]) -> None:
        """Give each hit the turns just before and after it in its session."""
        for hit in hits:
            session = self.store.session(hit.event.user_id, hit.event.session_id)
            index = next((i for i, e in enumerate(session) if e.id == hit.event.id), None)
            if index is not None:
                hit.context = [session[i] for i in (index - 1, index + 1) if 0 <= i < len(session)]

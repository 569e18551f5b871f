"""Keeping a user's history under a cap: consolidation of old episodes, or eviction by policy (S6, P1).

``HistoryConfig.max_events`` caps a user's active events. Over it, the ``eviction`` setting decides:

- ``none``: nothing is lost. The oldest episodes are *consolidated*: each becomes one summary event (the
  first sentence of each of its turns, the user's first, in order, up to ``SUMMARY_CHARS``) that names
  the events it summarises; those are archived, kept whole for audit, and no longer searched. Oldest
  episodes first, until the user is under the cap (a user's history can still exceed it when every
  episode is already one summary).
- ``lru`` and ``relevance``: the events :func:`memory.eviction.to_evict` picks are archived. Relevance is
  measured against the user's recent queries (the vectors of their last ``relevance_window`` user
  turns: what they have been asking lately), plus the salience prior ``relevance_user_bonus`` and
  ``relevance_disclosure`` weigh (see :mod:`memory.eviction`).

Every change is one audited event (``consolidate`` per episode, ``evict`` per run) under the history's
audit id; a dry run decides and writes nothing.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from memory.audit import EventKind
from memory.config import Eviction
from memory.episodic import History, history_id
from memory.eviction import Salience, to_evict
from memory.history import EventKind as HistoryKind
from memory.history import HistoryEvent, Speaker, event_id

log = logging.getLogger(__name__)
SUMMARY_CHARS = 600
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class CapReport(BaseModel):
    """What a cap did to one user's history."""

    model_config = ConfigDict(extra="forbid")

    user_id: str
    policy: Eviction
    cap: int
    before: int
    after: int
    archived: list[str] = Field(default_factory=list)  # events taken out of search (kept for audit)
    summaries: list[str] = Field(default_factory=list)  # summary events written by consolidation
    dry_run: bool = False


def summary_text(events: list[HistoryEvent]) -> str:
    """An extractive summary of an episode: the first sentence of each turn (user turns first), dated."""
    dated = [e.at for e in events if e.at is not None]
    when = f"{min(dated):%Y-%m-%d} to {max(dated):%Y-%m-%d}" if dated else "undated"
    ordered = [e for e in events if e.speaker is Speaker.USER] + [e for e in events if e.speaker is not Speaker.USER]
    parts: list[str] = []
    size = 0
    for event in ordered:
        first = _SENTENCE.split(event.text, maxsplit=1)[0]
        if size + len(first) > SUMMARY_CHARS and parts:
            break
        parts.append(f"{event.speaker.value}: {first}")
        size += len(first)
    return f"Summary of {len(events)} turn(s), {when}. " + " | ".join(parts)


def _consolidate(history: History, user_id: str, events: list[HistoryEvent], cap: int, now: datetime) -> CapReport:
    report = CapReport(user_id=user_id, policy=Eviction.NONE, cap=cap, before=len(events), after=len(events))
    episodes: dict[str, list[HistoryEvent]] = {}
    for event in events:  # oldest first: the store returns a history in order
        if event.kind is HistoryKind.TURN:
            episodes.setdefault(event.episode_id or event.id, []).append(event)
    for episode, members in episodes.items():
        if report.after <= cap:
            break
        if len(members) < 2:
            continue
        text = summary_text(members)
        summary = HistoryEvent(
            id=event_id(user_id, f"summary:{episode}", 0, text),
            user_id=user_id,
            source="consolidation",
            session_id=members[0].session_id,
            turn=members[0].turn,
            speaker=Speaker.OTHER,
            text=text,
            at=members[-1].at,
            position=members[-1].position,
            kind=HistoryKind.SUMMARY,
            sources=[m.id for m in members],
            episode_id=members[0].episode_id,
            ingested_at=now,
            last_access=now,
        )
        history.add([summary])
        history.store.archive([m.id for m in members])
        detail = {"episode": episode, "summary": summary.id, "sources": summary.sources}
        history.audit.commit(
            [history.audit.append(history_id(user_id), EventKind.CONSOLIDATE, now, 0, "maintenance", detail)]
        )
        report.summaries.append(summary.id)
        report.archived += summary.sources
        report.after -= len(members) - 1
    return report


def apply_cap(history: History, user_id: str, now: datetime, dry_run: bool = False) -> CapReport | None:
    """Bring a user's active events under ``max_events`` (None when no cap is set or none is needed)."""
    cfg = history.config
    events = history.store.events(user_id)
    if cfg.max_events is None or len(events) <= cfg.max_events:
        return None
    cap, policy = cfg.max_events, cfg.eviction
    if policy is Eviction.NONE:
        if dry_run:
            return CapReport(
                user_id=user_id, policy=policy, cap=cap, before=len(events), after=len(events), dry_run=True
            )
        report = _consolidate(history, user_id, events, cap, now)
    else:
        ids = [e.id for e in events]
        vectors = history.store.vectors(user_id, ids) if policy is Eviction.RELEVANCE else None
        asked = [e.id for e in events if e.speaker is Speaker.USER][-cfg.relevance_window :]
        queries = [vectors[i] for i in asked if i in vectors] if vectors else []
        weights = Salience(cfg.relevance_user_bonus, cfg.relevance_disclosure)
        chosen = to_evict(events, cap, policy, vectors, queries, cfg.relevance_aggregate, weights)
        report = CapReport(
            user_id=user_id,
            policy=policy,
            cap=cap,
            before=len(events),
            after=len(events) - len(chosen),
            archived=chosen,
            dry_run=dry_run,
        )
        if chosen and not dry_run:
            history.store.archive(chosen)
            detail = {"policy": policy.value, "cap": cap, "events": chosen}
            history.audit.commit(
                [history.audit.append(history_id(user_id), EventKind.EVICT, now, 0, "maintenance", detail)]
            )
    log.info("history cap for %s: %d -> %d active event(s) (%s)", user_id, report.before, report.after, policy.value)
    return report

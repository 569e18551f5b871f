"""Budgets on a user's history: the eviction policies (pure), and caps applied by maintenance (real store)."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from pathlib import Path

import pytest

from memory.config import Eviction, HistoryConfig
from memory.engine import MemoryEngine
from memory.eviction import Salience, disclosure, relevance, salience, to_evict
from memory.history import EventKind, EventStatus, HistoryEvent, Speaker
from memory.history_retention import apply_cap, summary_text
from memory.ingest import read_history
from memory.maintenance import maintain
from tests.conftest import NOW


def _event(i: int, last_access_days: float = 0.0, speaker: Speaker = Speaker.USER) -> HistoryEvent:
    return HistoryEvent(
        id=f"e{i}",
        user_id="ann",
        source="f",
        session_id="s",
        turn=i,
        speaker=speaker,
        text=f"turn {i}",
        at=NOW + timedelta(minutes=i),
        position=float(i),
        ingested_at=NOW,
        last_access=NOW + timedelta(days=last_access_days),
    )


def test_relevance_is_the_best_or_mean_cosine_with_the_recent_queries() -> None:
    vectors = [[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]]
    queries = [[1.0, 0.0], [0.0, 1.0]]
    # e0: max(1, 0) = 1, mean 0.5; e1: max(0, 1) = 1; e2: max(0.6, 0.8) = 0.8, mean 0.7
    assert relevance(vectors, queries) == pytest.approx([1.0, 1.0, 0.8])
    assert relevance(vectors, queries, "mean") == pytest.approx([0.5, 0.5, 0.7])
    assert relevance(vectors, []) == [0.0, 0.0, 0.0]


def test_each_policy_removes_what_it_should() -> None:
    events = [_event(0, 5), _event(1, 1), _event(2, 3), _event(3, 2)]
    assert to_evict(events, 2, Eviction.NONE) == []
    assert to_evict(events, 10, Eviction.LRU) == []
    # least recently used first: e1 (day 1), then e3 (day 2)
    assert to_evict(events, 2, Eviction.LRU) == ["e1", "e3"]
    vectors = {"e0": [1.0, 0.0], "e1": [0.0, 1.0], "e2": [0.6, 0.8], "e3": [0.8, 0.6]}
    # relevance to one query (1, 0): e0 1.0, e3 0.8, e2 0.6, e1 0.0: the two least relevant go
    assert to_evict(events, 2, Eviction.RELEVANCE, vectors, [[1.0, 0.0]]) == ["e1", "e2"]
    # an event without a vector counts as irrelevant; ties go to the older event
    assert to_evict(events, 3, Eviction.RELEVANCE, {"e0": [1.0, 0.0]}, [[1.0, 0.0]]) == ["e1"]


def test_salience_counts_first_person_words_and_quantities() -> None:
    # I, my, 25 / My, two; "mine" in "minerals" and "me" in "meal" are not words of their own
    assert disclosure("I've added 25 new postcards to my collection") == 3
    assert disclosure("My two dogs like minerals in their meal") == 2
    assert disclosure("Paris is the capital of France.") == 0
    user = _event(0).model_copy(update={"text": "I ran 5 km"})  # 2 -> log(3)
    reply = _event(1, speaker=Speaker.ASSISTANT).model_copy(update={"text": "I ran 5 km"})
    weights = Salience(user_bonus=1.0, disclosure=0.5)
    assert salience(user, weights) == pytest.approx(1.0 + 0.5 * math.log(3))
    assert salience(reply, weights) == pytest.approx(0.5 * math.log(3))
    assert salience(user, Salience()) == 0.0


def test_relevance_with_salience_keeps_what_the_user_said_about_themselves() -> None:
    events = [
        _event(0).model_copy(update={"text": "I moved my 3 bikes to the garage"}),
        _event(1, speaker=Speaker.ASSISTANT).model_copy(update={"text": "Here is a poem about the sea."}),
        _event(2).model_copy(update={"text": "write a poem about the sea"}),
    ]
    vectors = {"e0": [0.0, 1.0], "e1": [1.0, 0.0], "e2": [0.8, 0.6]}
    recent = [[1.0, 0.0]]  # the user's recent queries are about poems
    # the seed's policy: relevance alone (e0 0.0, e2 0.8, e1 1.0) evicts the bikes first
    assert to_evict(events, 2, Eviction.RELEVANCE, vectors, recent) == ["e0"]
    # with the prior: e0 0 + 1 + 0.2 log 4 = 1.28; e1 1.0 + 0 = 1.0; e2 0.8 + 1 = 1.8: the reply goes
    weights = Salience(user_bonus=1.0, disclosure=0.2)
    assert to_evict(events, 2, Eviction.RELEVANCE, vectors, recent, weights=weights) == ["e1"]
    assert to_evict(events, 1, Eviction.RELEVANCE, vectors, recent, weights=weights) == ["e1", "e0"]


def test_a_summary_keeps_the_first_sentence_of_each_turn_users_first() -> None:
    events = [_event(0, speaker=Speaker.ASSISTANT), _event(1)]
    events[0].text, events[1].text = "Answer one. More detail.", "Question two? And more."
    assert summary_text(events) == (
        f"Summary of 2 turn(s), {NOW:%Y-%m-%d} to {NOW:%Y-%m-%d}. user: Question two? | assistant: Answer one."
    )


def _history(tmp_path: Path, sessions: int = 4) -> Path:
    data = {
        "sessions": [
            {
                "id": f"s{i}",
                "date": (NOW - timedelta(days=40 - 10 * i)).isoformat(),
                "turns": [
                    {"role": "user", "content": f"On day {i} I planted {i + 3} rows of tomatoes in the garden."},
                    {"role": "assistant", "content": f"Good: {i + 3} rows of tomatoes need regular watering."},
                ],
            }
            for i in range(sessions)
        ]
    }
    path = tmp_path / "h.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_cap_without_eviction_consolidates_old_episodes_and_keeps_their_sources(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    engine.history_config = HistoryConfig(max_events=5, eviction=Eviction.NONE)
    engine.episodes.ingest("ann", read_history(_history(tmp_path)), NOW)
    assert engine.episodes.store.count("ann") == 8
    report = maintain(engine, NOW)
    (cap,) = report.history
    # each session is its own episode (ten days apart): two are summarised, 8 -> 7 -> 6 -> 5 events
    assert (cap.before, cap.after, len(cap.summaries)) == (8, 5, 3)
    store = engine.episodes.store
    summaries = [e for e in store.events("ann") if e.kind is EventKind.SUMMARY]
    assert [len(s.sources) for s in summaries] == [2, 2, 2]
    # the summarised turns are archived, not deleted: their text stays for audit
    sources = store.get(summaries[0].sources)
    assert all(e.status is EventStatus.ARCHIVED for e in sources.values())
    assert [e.kind.value for e in engine.audit.history("history:ann")][-3:] == ["consolidate"] * 3
    # and a summary is searchable in their place
    hits = engine.episodes.search("ann", "how many rows of tomatoes did I plant", NOW, k=3)
    assert any(h.event.kind is EventKind.SUMMARY for h in hits)


def test_a_cap_with_lru_eviction_archives_the_least_recently_used(engine: MemoryEngine, tmp_path: Path) -> None:
    engine.history_config = HistoryConfig(max_events=6, eviction=Eviction.LRU)
    engine.episodes.ingest("ann", read_history(_history(tmp_path)), NOW)
    store = engine.episodes.store
    first = store.events("ann")[0]
    store.touch([first.id], NOW + timedelta(days=1))  # read recently: LRU keeps it
    cap = apply_cap(engine.episodes, "ann", NOW + timedelta(days=2))
    assert cap is not None and (cap.before, cap.after, len(cap.archived)) == (8, 6, 2)
    assert first.id not in cap.archived and store.count("ann") == 6
    assert engine.audit.history("history:ann")[-1].detail["policy"] == "lru"
    assert apply_cap(engine.episodes, "ann", NOW) is None  # under the cap now


def test_a_cap_with_relevance_eviction_archives_the_replies_first(engine: MemoryEngine, tmp_path: Path) -> None:
    engine.history_config = HistoryConfig(max_events=4, eviction=Eviction.RELEVANCE)
    engine.episodes.ingest("ann", read_history(_history(tmp_path)), NOW)
    cap = apply_cap(engine.episodes, "ann", NOW)
    assert cap is not None and (cap.before, cap.after) == (8, 4)
    store = engine.episodes.store
    # what the user said about their garden stays; the assistant's replies are archived
    assert {e.speaker for e in store.events("ann")} == {Speaker.USER}
    assert {e.speaker for e in store.get(cap.archived).values()} == {Speaker.ASSISTANT}
    assert engine.audit.history("history:ann")[-1].detail["policy"] == "relevance"

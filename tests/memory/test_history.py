"""Episodic events on a real embedded store: ingest formats, idempotency, isolation, hybrid search, recovery."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory.engine import MemoryEngine
from memory.episodic import SearchParts
from memory.history import EventStatus, Speaker
from memory.ingest import HistoryFileError, read_history
from tests.conftest import NOW

KNEE = [
    {"role": "user", "content": "My left knee hurts when I climb stairs since the hike."},
    {"role": "assistant", "content": "Knee pain on stairs after a hike often comes from the kneecap tendon."},
]
POSTCARDS = [
    {"role": "user", "content": "I added 12 postcards to my collection last week."},
    {"role": "assistant", "content": "Twelve new postcards is a good week for a collector."},
]
GARDEN = [{"role": "user", "content": "The tomatoes in my garden are finally ripe."}]


def _lme(tmp_path: Path, sessions: list[list[dict[str, Any]]], dates: list[str], qid: str = "q1") -> Path:
    record = {
        "question_id": qid,
        "question": "?",
        "haystack_session_ids": [f"s{i}" for i in range(len(sessions))],
        "haystack_dates": dates,
        "haystack_sessions": sessions,
    }
    path = tmp_path / f"{qid}.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    return path


def test_longmemeval_sessions_keep_their_own_dates_and_a_rerun_adds_nothing(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    path = _lme(tmp_path, [KNEE, POSTCARDS], ["2023/05/20 (Sat) 02:21", "2023/06/02 (Fri) 10:00"])
    history = read_history(path)
    assert (history.format, len(history.turns), history.undated) == ("longmemeval", 4, 0)
    report = engine.episodes.ingest("ann", history, NOW)
    assert (report.added, report.existing, report.sessions) == (4, 0, 2)
    events = engine.episodes.store.events("ann")
    assert [(e.session_id, e.turn, e.speaker) for e in events] == [
        ("s0", 0, Speaker.USER),
        ("s0", 1, Speaker.ASSISTANT),
        ("s1", 0, Speaker.USER),
        ("s1", 1, Speaker.ASSISTANT),
    ]
    # the history's date, not the clock's: a session's date for each of its turns
    assert events[0].at == datetime(2023, 5, 20, 2, 21, tzinfo=UTC) and events[0].ingested_at == NOW
    again = engine.episodes.ingest("ann", read_history(path), NOW + timedelta(days=1))
    assert (again.added, again.existing) == (0, 4) and engine.episodes.store.count("ann") == 4
    # one audited ingest event per call that added something
    assert [e.kind.value for e in engine.audit.history("history:ann")] == ["ingest"]


def test_plain_transcripts_and_sessions_files(engine: MemoryEngine, tmp_path: Path) -> None:
    plain = tmp_path / "chat-7.json"
    plain.write_text(json.dumps(KNEE), encoding="utf-8")
    parsed = read_history(plain)
    assert parsed.format == "transcript" and {t.session_id for t in parsed.turns} == {"chat-7"}
    assert parsed.undated == 2  # accepted, flagged
    sessions = tmp_path / "sessions.json"
    sessions.write_text(
        json.dumps({"sessions": [{"id": "a", "date": "2024-01-02T09:00:00", "turns": GARDEN}]}), encoding="utf-8"
    )
    dated = read_history(sessions)
    assert dated.format == "sessions" and dated.turns[0].at == datetime(2024, 1, 2, 9, 0, tzinfo=UTC)
    engine.episodes.ingest("bo", parsed, NOW)
    stored = engine.episodes.store.events("bo")
    assert [e.dated for e in stored] == [False, False]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"role": "user", "content": "hi"}', "not valid JSON"),
        ('[{"role": "user"}]', "[0]: content is missing or not text"),
        ('[{"content": "hi"}]', "[0]: role is missing"),
        ('{"turns": 3}', "expected a list of {role, content} turns"),
        ('[{"role": "user", "content": "hi", "at": "yesterday-ish"}]', "[0]: unreadable date 'yesterday-ish'"),
    ],
)
def test_a_bad_file_is_one_error_naming_it(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(HistoryFileError) as caught:
        read_history(path)
    assert str(path) in str(caught.value) and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_bad_longmemeval_record_is_named(tmp_path: Path) -> None:
    path = _lme(tmp_path, [KNEE, [{"role": "user"}]], ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 02:21"], "q9")
    with pytest.raises(HistoryFileError, match=r"record 0 \(q9\): haystack_sessions\[1\]\[0\]: content is missing"):
        read_history(path)


def test_each_user_searches_only_their_own_history(engine: MemoryEngine, tmp_path: Path) -> None:
    engine.episodes.ingest("ann", read_history(_lme(tmp_path, [KNEE], ["2023/05/20 (Sat) 02:21"], "a")), NOW)
    engine.episodes.ingest("bo", read_history(_lme(tmp_path, [POSTCARDS], ["2023/05/20 (Sat) 02:21"], "b")), NOW)
    for user, other in (("ann", "postcards"), ("bo", "knee")):
        hits = engine.episodes.search(user, f"my {other} and my collection and my knee", NOW, k=10)
        assert hits and all(h.event.user_id == user for h in hits)
        assert engine.episodes.store.lexical_search(user, other, 10) == []


def test_parts_of_the_search_and_time_questions(engine: MemoryEngine, tmp_path: Path) -> None:
    sessions = [KNEE, GARDEN, POSTCARDS]
    dates = ["2024-02-10T10:00:00", "2024-03-01T10:00:00", "2024-03-12T10:00:00"]
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "sessions": [
                    {"id": f"s{i}", "date": d, "turns": t} for i, (t, d) in enumerate(zip(sessions, dates, strict=True))
                ]
            }
        ),
        encoding="utf-8",
    )
    engine.episodes.ingest("ann", read_history(path), NOW)
    asked = datetime(2024, 3, 14, 9, 0, tzinfo=UTC)
    # lexical only: the word "stairs" finds the knee turn
    lexical = engine.episodes.search("ann", "stairs", asked, k=3, parts=SearchParts(vector=False, time=False))
    assert lexical[0].event.text.startswith("My left knee") and lexical[0].found_by == ["lexical"]
    # a question naming last month: February's events are voted for by time, and come first
    hits = engine.episodes.search("ann", "what did I tell you last month about my knee", asked, k=3)
    assert hits[0].event.session_id == "s0" and "time" in hits[0].found_by
    # the hit comes with its neighbour in the session
    assert [c.turn for c in hits[0].context] == [1] or [c.turn for c in hits[0].context] == [0]
    # a search counts an access (LRU eviction reads it): the lexical search and this one returned it
    first = engine.episodes.store.get([hits[0].event.id])[hits[0].event.id]
    assert first.accesses == 2 and first.last_access == asked


def test_archived_events_are_not_searched_and_deleted_ones_are_gone(engine: MemoryEngine, tmp_path: Path) -> None:
    engine.episodes.ingest("ann", read_history(_lme(tmp_path, [KNEE, POSTCARDS], ["2023/05/20 (Sat) 02:21"] * 2)), NOW)
    store = engine.episodes.store
    knee = next(e for e in store.events("ann") if "stairs" in e.text)
    store.archive([knee.id])
    assert store.get([knee.id])[knee.id].status is EventStatus.ARCHIVED  # kept for audit
    assert all(h.event.id != knee.id for h in engine.episodes.search("ann", "knee stairs hike", NOW, k=10))
    assert knee.id not in {i for i, _ in store.lexical_search("ann", "stairs", 10)}
    assert store.delete([knee.id]) == 1 and store.get([knee.id]) == {}


def test_events_written_without_their_vectors_are_embedded_again_on_open(engine: MemoryEngine, tmp_path: Path) -> None:
    history = engine.episodes
    events = history.events_of(
        "ann", read_history(_lme(tmp_path, [GARDEN], ["2023/05/20 (Sat) 02:21"])).turns, "f", NOW
    )
    # a crash after the rows were written, before the vectors: the rows say so
    history.store.put_vectors = lambda *_: None  # type: ignore[method-assign]  # the process dies here
    history.add(events)
    assert [e.id for e in history.store.unvectored()] == [events[0].id]
    del history.store.put_vectors  # the next process
    assert history.recover() == 1 and history.store.unvectored() == []
    assert history.store.vector_search("ann", engine.embedder.embed([GARDEN[0]["content"]])[0], 1)[0][0] == events[0].id

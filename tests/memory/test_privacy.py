"""Privacy that holds: a forgotten memory or user leaves no copy of its text anywhere under MARK_HOME.

A real embedded store in tmp_path. Each test writes marker sentences into every place mark keeps text
(Chroma documents and its write log, the audit log, history events and their BM25 index, profiles,
refused candidates), forgets them, and reads every file under the home byte by byte, WAL and SHM files
included, while the engine is open and after it is closed.
"""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest

from memory.audit import AuditLog, EventKind
from memory.config import Settings
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.history import EventStatus, Speaker
from memory.ingest import ParsedTurn
from memory.maintenance import run_if_due
from memory.models import MemoryType, Source
from memory.portability import export_jsonl
from memory.profiles import owner_of
from tests.conftest import HASHING_CONFIG, NOW

# one sentence per forget, each with a word no other text has (its FTS5 stem is searched for too)
MEMORY_MARKER = "Zanzibarite vault code 7731 opens the quokka locker"
USER_MARKER = "Xylomancer heron 4418 guards the velvet orchard"
NEEDLES = {
    MEMORY_MARKER: [MEMORY_MARKER.encode(), b"zanzibarit"],
    USER_MARKER: [USER_MARKER.encode(), b"xylomanc"],
}


def copies(home: Path, marker: str) -> list[str]:
    """Every file under ``home`` whose raw bytes hold the marker sentence or its distinctive word (any case)."""
    found = []
    for path in sorted(home.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        lowered = data.lower()
        if any(needle in data or needle.lower() in lowered for needle in NEEDLES[marker]):
            found.append(str(path.relative_to(home)))
    return found


def _turn(text: str, turn: int) -> ParsedTurn:
    return ParsedTurn(session_id="s1", turn=turn, speaker=Speaker.USER, text=text, at=NOW)


def _write_everything(engine: MemoryEngine) -> tuple[str, str, str, str]:
    """Alice's two memories (one merged twice), a history event, a profile value and a refused candidate; Bob's and
    a shared memory beside them. Returns (forgotten memory id, alice's other memory id, bob's id, shared id)."""
    first = engine.add(f"My note: {MEMORY_MARKER}.", MemoryType.USER_QUESTION, "alice", now=NOW).record
    second = engine.add(f"Remember that {USER_MARKER}.", MemoryType.USER_QUESTION, "alice", now=NOW).record
    again = engine.add(f"Remember that {USER_MARKER}.", MemoryType.USER_QUESTION, "alice", now=NOW)
    assert again.action == "merged" and again.record.id == second.id  # a MERGE event holds the text too
    bob = engine.add("Bob drinks green tea every morning.", MemoryType.USER_QUESTION, "bob", now=NOW).record
    shared = engine.add(
        "Tropicamide drops are 0.5 to 1 percent.", MemoryType.RESIDUAL, "sme", source=Source.SME, now=NOW
    ).record
    history = engine.episodes
    history.add(history.events_of("alice", [_turn(f"I said {USER_MARKER}", 0), _turn("hello", 1)], "chat:s1", NOW))
    history.add(history.events_of("bob", [_turn("Bob's own turn about tea", 0)], "chat:s1", NOW))
    history.profiles.set(owner_of(user_id="alice"), "hobby", USER_MARKER, now=NOW, actor="test", provenance="test")
    engine.reject_candidate(f"Unsupported: {USER_MARKER}", MemoryType.USER_QUESTION, "alice", "no evidence", now=NOW)
    run_if_due(engine, NOW, 24.0)  # maintenance.json, like `mark chat` writes it
    return first.id, second.id, bob.id, shared.id


def test_forgetting_leaves_no_copy_of_the_text_under_home(settings: Settings, tmp_path: Path) -> None:
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    try:
        forgotten, other, bob, shared = _write_everything(engine)
        assert copies(settings.home, MEMORY_MARKER) and copies(settings.home, USER_MARKER)  # the probe sees text

        engine.forget(forgotten, now=NOW)
        assert copies(settings.home, MEMORY_MARKER) == []  # engine still open: WAL and SHM files included
        assert copies(settings.home, USER_MARKER)  # alice's other text is still there until she is forgotten

        assert engine.forget_user("alice", now=NOW) == 1
        assert copies(settings.home, USER_MARKER) == []
        export = tmp_path / "after.jsonl"  # an export written after the forget never holds the text
        export_jsonl(engine, export)
        assert MEMORY_MARKER not in export.read_text() and USER_MARKER not in export.read_text()
        assert "green tea" in export.read_text()

        # bob's memory and history, and the shared memory, survive
        assert engine.get(bob).text.startswith("Bob drinks") and engine.get(shared).shared
        assert [e.text for e in engine.episodes.store.events("bob")] == ["Bob's own turn about tea"]
        assert engine.episodes.store.events("alice", status=None) == []
        assert engine.episodes.profiles.current(owner_of(user_id="alice")) == []
        assert [h.event.user_id for h in engine.episodes.search("bob", "tea", now=NOW)] == ["bob"]
        assert engine.search("green tea", "bob", now=NOW).all_hits()

        # the audit trail of the forgotten ids is kept, with ids, kinds, times and actors but no text
        for memory_id, kinds in ((forgotten, ["create", "forget"]), (other, ["create", "merge", "forget"])):
            events = engine.history(memory_id)
            assert [e.kind.value for e in events] == kinds
            assert all(e.at == NOW and e.actor for e in events)
            assert all(e.detail == {"forgotten": True} for e in events if e.kind is not EventKind.FORGET)
            assert "text" not in json.dumps(events[-1].detail)
    finally:
        engine.close()
    assert copies(settings.home, MEMORY_MARKER) == [] and copies(settings.home, USER_MARKER) == []

    reopened = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    try:  # Chroma replays nothing of the forgotten records when it opens the store again
        assert sorted(r.user_id for r in reopened.list()) == ["bob", "sme"]
        assert reopened.search("green tea", "bob", now=NOW).all_hits()
        added = reopened.add("Bob also likes lemon.", MemoryType.USER_QUESTION, "bob", now=NOW).record
        assert reopened.get(added.id).text == "Bob also likes lemon."
        assert reopened.episodes.store.events("alice", status=None) == []
    finally:
        reopened.close()
    assert copies(settings.home, MEMORY_MARKER) == [] and copies(settings.home, USER_MARKER) == []


def test_forgetting_archived_events_and_a_user_with_no_memories(settings: Settings) -> None:
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    try:
        history = engine.episodes
        history.add(history.events_of("carol", [_turn(f"Note {USER_MARKER}", 0), _turn("bye", 1)], "chat:s2", NOW))
        history.store.archive([e.id for e in history.store.events("carol")][:1])  # archived: out of the index
        assert history.store.count("carol", EventStatus.ARCHIVED) == 1
        assert engine.forget_user("carol", now=NOW) == 0  # no memories, but her history goes
        assert history.store.count("carol", status=None) == 0
    finally:
        engine.close()
    assert copies(settings.home, USER_MARKER) == []


def _modes(home: Path) -> dict[str, int]:
    paths = [home, *home.rglob("*")]
    return {str(p.relative_to(home)) or ".": stat.S_IMODE(p.stat().st_mode) for p in paths if "models" not in p.parts}


def test_data_files_are_readable_by_their_owner_only(settings: Settings) -> None:
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    try:
        _write_everything(engine)
        open_modes = _modes(settings.home)
    finally:
        engine.close()
    for modes in (open_modes, _modes(settings.home)):
        assert {"audit.sqlite3", "history.sqlite3", "chroma", "chroma/chroma.sqlite3", "maintenance.json"} <= set(modes)
        loose = {p: oct(m) for p, m in modes.items() if m & 0o077}
        assert loose == {}


def test_a_home_made_world_readable_is_closed_when_opened(settings: Settings) -> None:
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    engine.add("Bob drinks green tea every morning.", MemoryType.USER_QUESTION, "bob", now=NOW)
    engine.close()
    for path in [settings.home, *settings.home.rglob("*")]:  # as older versions of mark left it
        path.chmod(0o755 if path.is_dir() else 0o644)
    MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG).close()
    modes = _modes(settings.home)
    assert {p: oct(m) for p, m in modes.items() if m & 0o077} == {}
    assert modes["."] == 0o700 and modes["audit.sqlite3"] == 0o600


def test_recovery_finishes_a_forget_cut_short_after_its_delete(settings: Settings) -> None:
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    record = engine.add(f"My note: {MEMORY_MARKER}.", MemoryType.USER_QUESTION, "alice", now=NOW).record
    # the first steps of forget_records, then a crash: the FORGET event is uncommitted, the text not yet erased
    engine.audit.append(record.id, EventKind.FORGET, NOW, record.revision + 1, "user", {"type": record.type.value})
    engine.store.delete([record])
    engine.close()
    assert copies(settings.home, MEMORY_MARKER)
    reopened = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    try:
        assert reopened.recovered == {"committed": 1, "discarded": 0}
        assert [(e.kind.value, e.detail) for e in reopened.history(record.id)] == [
            ("create", {"forgotten": True}),
            ("forget", {"type": "user_question"}),
        ]
    finally:
        reopened.close()
    assert copies(settings.home, MEMORY_MARKER) == []


def test_the_audit_log_refuses_any_other_rewrite(engine: MemoryEngine) -> None:
    record = engine.add("Bob drinks green tea every morning.", MemoryType.USER_QUESTION, "bob", now=NOW).record
    db = engine.audit._db
    for sql in ("UPDATE events SET detail = '{}'", "UPDATE events SET actor = 'someone else'"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute(sql + " WHERE memory_id = ?", (record.id,))
    assert engine.history(record.id)[0].detail["record"]["text"] == record.text


def test_a_log_made_by_an_older_version_can_tombstone(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite3"
    old = sqlite3.connect(path)  # the schema before forgetting rewrote details: no detail could change
    old.executescript(
        "CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT NOT NULL, kind TEXT NOT NULL,"
        " at TEXT NOT NULL, rev INTEGER NOT NULL, actor TEXT NOT NULL, detail TEXT NOT NULL,"
        " committed INTEGER NOT NULL DEFAULT 0, pid INTEGER NOT NULL DEFAULT 0);"
        "CREATE TRIGGER events_no_update BEFORE UPDATE OF memory_id, kind, at, rev, detail ON events"
        " BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;"
    )
    old.execute(
        "INSERT INTO events (memory_id, kind, at, rev, actor, detail, committed) VALUES (?, ?, ?, 1, 'x', ?, 1)",
        ("m1", "create", NOW.isoformat(), json.dumps({"record": {"text": MEMORY_MARKER}})),
    )
    old.commit()
    old.close()
    log = AuditLog(path)
    try:
        assert log.forget(["m1"]) == 1
        assert [e.detail for e in log.history("m1")] == [{"forgotten": True}]
    finally:
        log.close()
    assert MEMORY_MARKER.encode() not in path.read_bytes()


def test_chroma_telemetry_is_off(engine: MemoryEngine) -> None:
    assert engine.store.client.api.get_settings().anonymized_telemetry is False


def test_forgetting_a_user_tombstones_their_restatements_merged_into_shared_memories(settings: Settings) -> None:
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    try:
        text = "Tropicamide drops are 0.5 to 1 percent strength for dilating the pupil."
        shared = engine.add(text, MemoryType.RESIDUAL, "sme", source=Source.SME, now=NOW).record
        for who in ("alice", "bob"):  # each restates it: a MERGE event on the shared memory quotes them
            restated = engine.add(text, MemoryType.RESIDUAL, who, source=Source.USER, now=NOW)
            assert restated.action == "merged" and restated.record.id == shared.id
        merges = [e for e in engine.history(shared.id) if e.kind is EventKind.MERGE]
        assert [e.detail["said_by"] for e in merges] == ["alice", "bob"]

        engine.forget_user("alice", now=NOW)
        kinds = [(e.kind.value, e.detail.get("said_by")) for e in engine.history(shared.id)]
        assert kinds == [("create", None), ("merge", None), ("merge", "bob")]  # alice's is a tombstone now
        assert engine.history(shared.id)[1].detail == {"forgotten": True}
        assert engine.get(shared.id).text == text and engine.get(shared.id).shared  # the shared memory stays
    finally:
        engine.close()

"""The audit log on a real PostgreSQL server: the same behaviour as the SQLite log, and its own failures.

The server comes from ``conftest.py`` (the tests skip without PostgreSQL's binaries).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from mark.errors import UnavailableError
from memory.audit import AuditBackend, AuditLog, EventKind
from memory.config import load_settings
from memory.crypto import EncryptionKeyError, TextCipher
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.models import MemoryType
from tests.conftest import HASHING_CONFIG, NOW
from tests.memory.pg_cluster import free_port, raw

ROOT = Path(__file__).resolve().parents[2]
KEY = Fernet.generate_key().decode()


# -- the same behaviour as the SQLite log ---------------------------------------------------------------


def test_write_protocol_history_and_counts(pg_log: AuditBackend) -> None:
    first = pg_log.append("m1", EventKind.CREATE, NOW, 1, "alice", {"text": "a"})
    assert pg_log.history("m1") == [] and pg_log.count() == 0  # uncommitted: not history yet
    more = pg_log.append_many(
        [("m1", EventKind.FEEDBACK, NOW, 2, "bob", {"correct": True}), ("m2", EventKind.CREATE, NOW, 1, "bob", {})]
    )
    assert more == [first + 1, first + 2]  # an identity column: consecutive in one writer
    pg_log.commit([first, *more])
    events = pg_log.history("m1")
    assert [(e.seq, e.kind, e.rev, e.actor, e.at) for e in events] == [
        (first, EventKind.CREATE, 1, "alice", NOW),
        (first + 1, EventKind.FEEDBACK, 2, "bob", NOW),
    ]
    assert events[0].detail == {"text": "a"} and all(e.committed for e in events)
    assert pg_log.count() == 3 and pg_log.memory_ids(EventKind.CREATE) == {"m1", "m2"}
    assert pg_log.append_many([]) == []


def test_pending_commit_and_discard(pg_log: AuditBackend) -> None:
    kept = pg_log.append("m1", EventKind.CREATE, NOW, 1, "a", {})
    dropped = pg_log.append("m2", EventKind.CREATE, NOW, 1, "a", {})
    assert [e.seq for e in pg_log.pending()] == [kept, dropped] and not pg_log.pending()[0].committed
    pg_log.commit([kept])
    pg_log.discard([dropped, kept])  # a committed event is never discarded
    assert pg_log.pending() == [] and [e.seq for e in pg_log.history("m1")] == [kept] and pg_log.history("m2") == []


def test_pending_leaves_events_of_live_sessions_alone(pg_url: str, pg_log: AuditBackend) -> None:
    import psycopg

    insert = "INSERT INTO mark_audit_events (memory_id, kind, at, rev, actor, detail, host, pid, backend)"
    with psycopg.connect(pg_url, autocommit=True) as other:  # another machine's writer, alive
        other.execute(
            insert + " VALUES ('m-live', 'create', %s, 1, 'x', '{}', 'elsewhere', 1, pg_backend_pid())",
            (NOW.isoformat(),),
        )
        other.execute(insert + " VALUES ('m-dead', 'create', %s, 1, 'x', '{}', 'elsewhere', 1, 0)", (NOW.isoformat(),))
        assert [e.memory_id for e in pg_log.pending()] == ["m-dead"]  # session 0 is no session: gone
    for _ in range(200):  # the server lists a session a moment after its client left
        if len(pg_log.pending()) == 2:
            break
        time.sleep(0.01)
    assert [e.memory_id for e in pg_log.pending()] == ["m-live", "m-dead"]  # its session ended: oldest first


def test_append_many_is_one_transaction(pg_url: str, pg_log: AuditBackend) -> None:
    import psycopg

    rows = [("m1", EventKind.CREATE, NOW, 1, "a", {}), ("m2", EventKind.CREATE, NOW, 2**40, "a", {})]
    with pytest.raises(psycopg.DataError, match="out of range"):  # the server refuses the second row
        pg_log.append_many(rows)
    assert pg_log.pending() == [] and raw(pg_url, "SELECT count(*) FROM mark_audit_events") == [(0,)]
    assert len(pg_log.append_many(rows[:1])) == 1  # the connection is usable afterwards


def test_forget_tombstones_and_keeps_the_rest(pg_url: str, pg_log: AuditBackend) -> None:
    rows = [
        ("m1", EventKind.CREATE, NOW, 1, "alice", {"record": {"text": "secret"}}),
        ("m1", EventKind.MERGE, NOW, 2, "bob", {"text": "secret again"}),
        ("m1", EventKind.FORGET, NOW, 3, "alice", {"type": "user_question"}),
        ("m2", EventKind.CREATE, NOW, 1, "alice", {"text": "kept"}),
        ("c1", EventKind.REJECT, NOW, 0, "gate", {"user_id": "alice", "text": "refused"}),
    ]
    pg_log.commit(pg_log.append_many(rows))
    assert pg_log.rejected("alice") == ["c1"] and pg_log.rejected("bob") == []
    assert pg_log.forget(["m1", "c1"]) == 3 and pg_log.forget(["m1", "c1"]) == 0
    events = pg_log.history("m1")
    assert [(e.kind, e.rev, e.actor, e.at) for e in events] == [(r[1], r[3], r[4], r[2]) for r in rows[:3]]
    assert [e.detail for e in events] == [{"forgotten": True}, {"forgotten": True}, {"type": "user_question"}]
    assert pg_log.history("m2")[0].detail == {"text": "kept"} and pg_log.rejected("alice") == []
    stored = raw(pg_url, "SELECT detail FROM mark_audit_events")
    assert not any("secret" in str(detail) or "refused" in str(detail) for (detail,) in stored)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_forget_merged_by_tombstones_one_users_restatements(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    log: AuditBackend = (
        AuditLog(tmp_path / "audit.sqlite3") if backend == "sqlite" else request.getfixturevalue("pg_log")
    )
    rows = [
        ("s1", EventKind.CREATE, NOW, 1, "committer", {"text": "shared fact"}),
        ("s1", EventKind.MERGE, NOW, 2, "committer", {"merged_text": "alice's words", "said_by": "alice"}),
        ("s1", EventKind.MERGE, NOW, 3, "committer", {"merged_text": "bob's words", "said_by": "bob"}),
    ]
    try:
        log.commit(log.append_many(rows))
        assert log.forget_merged_by("alice") == 1 and log.forget_merged_by("alice") == 0
        assert [e.detail for e in log.history("s1")] == [
            {"text": "shared fact"},
            {"forgotten": True},
            {"merged_text": "bob's words", "said_by": "bob"},
        ]
    finally:
        if backend == "sqlite":
            log.close()


def test_any_other_rewrite_is_refused(pg_url: str, pg_log: AuditBackend) -> None:
    import psycopg

    seq = pg_log.append("m1", EventKind.CREATE, NOW, 1, "alice", {"text": "a"})
    pg_log.commit([seq])
    refused = [
        "UPDATE mark_audit_events SET detail = '{}'",
        "UPDATE mark_audit_events SET actor = 'someone else'",
        "UPDATE mark_audit_events SET at = '2001-01-01T00:00:00+00:00'",
        "UPDATE mark_audit_events SET rev = 9",
        "UPDATE mark_audit_events SET committed = FALSE",
        "DELETE FROM mark_audit_events",
        "TRUNCATE mark_audit_events",
    ]
    for sql in refused:
        with pytest.raises(psycopg.IntegrityError, match="append-only"):
            raw(pg_url, sql)
    assert pg_log.history("m1")[0].detail == {"text": "a"} and pg_log.count() == 1


def test_a_user_who_may_not_create_tables_uses_the_log_its_owner_set_up(pg_url: str, tmp_path: Path) -> None:
    from memory.audit_pg import PostgresAuditLog

    role = pg_url.rsplit("/", 1)[1] + "_writer"  # roles belong to the cluster: one per test database
    raw(pg_url, f"CREATE ROLE {role} LOGIN; REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    writer_url = pg_url.replace("//mark@", f"//{role}@")
    with pytest.raises(UnavailableError, match=r"cannot set up the audit log in .*give its user the right"):
        PostgresAuditLog(writer_url, tmp_path / "audit.sqlite3")
    PostgresAuditLog(pg_url, tmp_path / "audit.sqlite3").close()  # the owner creates the table
    raw(pg_url, f"GRANT SELECT, INSERT, UPDATE, DELETE ON mark_audit_events TO {role}")
    writer = PostgresAuditLog(writer_url, tmp_path / "audit.sqlite3")
    try:
        writer.commit([writer.append("m1", EventKind.CREATE, NOW, 1, "a", {"text": "x"})])
        assert writer.forget(["m1"]) == 1 and [e.detail for e in writer.history("m1")] == [{"forgotten": True}]
    finally:
        writer.close()


def test_a_dropped_connection_is_one_error_then_the_log_reconnects(pg_url: str, pg_log: AuditBackend) -> None:
    seq = pg_log.append("m1", EventKind.CREATE, NOW, 1, "a", {})  # in flight when the server drops us
    ((backend,),) = raw(pg_url, "SELECT backend FROM mark_audit_events")
    raw(pg_url, "SELECT pg_terminate_backend(%s, 5000)", (backend,))  # waits until that session is gone
    with pytest.raises(UnavailableError, match=r"lost its connection to postgresql://mark@127\.0\.0\.1"):
        pg_log.count()
    pg_log.commit([seq])  # the next call connects again, and the event in flight is still this process's
    assert [e.seq for e in pg_log.history("m1")] == [seq] and pg_log.pending() == []
    assert raw(pg_url, "SELECT backend <> %s FROM mark_audit_events", (backend,)) == [(True,)]


def test_details_are_sealed_with_a_key(pg_url: str, tmp_path: Path) -> None:
    from memory.audit_pg import PostgresAuditLog

    sealed = PostgresAuditLog(pg_url, tmp_path / "audit.sqlite3", TextCipher(KEY))
    try:
        sealed.commit([sealed.append("m1", EventKind.CREATE, NOW, 1, "a", {"text": "Zanzibarite"})])
        assert sealed.history("m1")[0].detail == {"text": "Zanzibarite"}
        ((stored,),) = raw(pg_url, "SELECT detail FROM mark_audit_events")
        assert str(stored).startswith("mark-fernet:") and "Zanzibarite" not in str(stored)
        sealed.forget(["m1"])  # a tombstone is not sealed: it holds nothing
        assert raw(pg_url, "SELECT detail FROM mark_audit_events") == [('{"forgotten": true}',)]
        sealed.commit([sealed.append("m2", EventKind.CREATE, NOW, 1, "a", {"text": "x"})])
    finally:
        sealed.close()
    plain = PostgresAuditLog(pg_url, tmp_path / "audit.sqlite3")
    try:
        with pytest.raises(EncryptionKeyError, match=r"audit log at postgresql://mark@127\.0\.0\.1"):
            plain.history("m2")
    finally:
        plain.close()


def test_an_unreachable_server_is_one_line_without_the_password(tmp_path: Path) -> None:
    from memory.audit_pg import PostgresAuditLog

    port = free_port()
    with pytest.raises(UnavailableError) as caught:
        PostgresAuditLog(
            f"postgresql://mark:hunter2@127.0.0.1:{port}/mark?connect_timeout=5", tmp_path / "audit.sqlite3"
        )
    message = str(caught.value)
    assert "\n" not in message and "hunter2" not in message
    assert f"postgresql://mark:***@127.0.0.1:{port}/mark" in message and "check that the server" in message


# -- the engine on PostgreSQL ----------------------------------------------------------------------------


def test_the_engine_keeps_its_history_in_postgresql(pg_url: str, tmp_path: Path) -> None:
    from memory.audit_pg import PostgresAuditLog

    env = {"MARK_HOME": str(tmp_path / "home"), "MARK_EMBEDDER": "hashing", "MARK_DATABASE_URL": pg_url}
    settings = load_settings(env=env)
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    try:
        assert isinstance(engine.audit, PostgresAuditLog)
        kept = engine.add("Bob drinks green tea every morning.", MemoryType.USER_QUESTION, "bob", now=NOW).record
        engine.feedback(kept.id, correct=True, now=NOW)
        gone = engine.add("Alice keeps her vault code in a quokka locker.", MemoryType.USER_QUESTION, "alice", now=NOW)
        engine.forget(gone.record.id, now=NOW)
        assert [e.kind for e in engine.history(kept.id)] == [EventKind.CREATE, EventKind.FEEDBACK]
        created, _ = engine.history(gone.record.id)
        assert (created.kind, created.detail) == (
            EventKind.CREATE,
            {"forgotten": True},
        )
    finally:
        engine.close()
    assert not settings.audit_path.exists()
    rows = raw(pg_url, "SELECT memory_id, kind FROM mark_audit_events WHERE committed ORDER BY seq")
    assert rows == [
        (kept.id, "create"),
        (kept.id, "feedback"),
        (gone.record.id, "create"),
        (gone.record.id, "forget"),
    ]
    reopened = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    try:
        assert reopened.recovered == {"committed": 0, "discarded": 0} and reopened.audit.count() == 4
    finally:
        reopened.close()

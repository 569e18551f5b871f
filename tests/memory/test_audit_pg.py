"""The audit log on a real PostgreSQL server, and the write lock of both backends across processes.

A session fixture starts a throwaway cluster from Debian's binaries (``/usr/lib/postgresql/*/bin``) in a
temporary folder owned by the ``postgres`` user (PostgreSQL refuses to run as root), on a free loopback
port with its unix socket in that folder, and removes it at the end. Each test gets a database of its
own. Without the binaries the PostgreSQL tests skip, naming the apt command; the SQLite lock test and
the settings tests run anyway.
"""

from __future__ import annotations

import itertools
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from mark.errors import UnavailableError
from memory.audit import AuditBackend, AuditLog, EventKind, open_audit_log
from memory.config import ConfigError, load_settings
from memory.crypto import EncryptionKeyError, TextCipher
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.models import MemoryType
from tests.conftest import HASHING_CONFIG, NOW

ROOT = Path(__file__).resolve().parents[2]
INSTALL = "apt-get install postgresql"
KEY = Fernet.generate_key().decode()


@dataclass
class PgServer:
    """A running throwaway cluster: URLs of its databases, and a counter for fresh ones."""

    port: int
    names: Iterator[int]

    def url(self, database: str) -> str:
        return f"postgresql://mark@127.0.0.1:{self.port}/{database}"


def _binaries() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    return found[-1].parent if found and (found[-1].parent / "pg_ctl").is_file() else None


def _as_server_user() -> list[str]:
    """Run as ``postgres`` when we are root (PostgreSQL refuses root); as ourselves otherwise."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """initdb, pg_ctl start on a free loopback port, then stop and remove the cluster."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e .")
    bin_dir = _binaries()
    if bin_dir is None:
        pytest.skip(f"PostgreSQL's server binaries are not installed: {INSTALL} (scripts/test.sh does, as root)")
    if os.geteuid() == 0:
        try:
            server_user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip(f"no postgres user to run the server as: {INSTALL}")
    folder = Path(tempfile.mkdtemp(prefix="mark-pg-"))
    data = folder / "data"
    if os.geteuid() == 0:
        os.chown(folder, server_user.pw_uid, server_user.pw_gid)
    run = [*_as_server_user(), str(bin_dir / "pg_ctl"), "-D", str(data)]
    started = False
    try:
        subprocess.run(
            [*_as_server_user(), str(bin_dir / "initdb"), "-D", str(data), "-U", "mark", "-A", "trust", "--no-sync"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        for _ in range(3):  # a free port can be taken between the probe and the start: try another
            port = _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={folder}"
                " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=40"
            )
            start = [*run, "-o", options, "-l", str(folder / "server.log"), "-w", "-t", "60", "start"]
            started = subprocess.run(start, capture_output=True, timeout=90, check=False).returncode == 0
            if started:
                break
        assert started, (folder / "server.log").read_text()
        with psycopg.connect(f"postgresql://mark@127.0.0.1:{port}/postgres", autocommit=True) as admin:
            admin.execute("SELECT 1")
        yield PgServer(port, itertools.count())
    finally:
        if started:
            subprocess.run([*run, "-m", "immediate", "-w", "stop"], capture_output=True, timeout=60, check=False)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A new, empty database on the test server."""
    import psycopg

    name = f"mark_test_{next(pg_server.names)}"
    with psycopg.connect(pg_server.url("postgres"), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return pg_server.url(name)


@pytest.fixture
def pg_log(pg_url: str, tmp_path: Path) -> Iterator[AuditBackend]:
    from memory.audit_pg import PostgresAuditLog

    log = PostgresAuditLog(pg_url, tmp_path / "audit.sqlite3")
    try:
        yield log
    finally:
        log.close()


def _raw(url: str, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        cursor = db.execute(sql, args)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description else []


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
    assert pg_log.pending() == [] and _raw(pg_url, "SELECT count(*) FROM mark_audit_events") == [(0,)]
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
    stored = _raw(pg_url, "SELECT detail FROM mark_audit_events")
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
            _raw(pg_url, sql)
    assert pg_log.history("m1")[0].detail == {"text": "a"} and pg_log.count() == 1


def test_a_user_who_may_not_create_tables_uses_the_log_its_owner_set_up(pg_url: str, tmp_path: Path) -> None:
    from memory.audit_pg import PostgresAuditLog

    role = pg_url.rsplit("/", 1)[1] + "_writer"  # roles belong to the cluster: one per test database
    _raw(pg_url, f"CREATE ROLE {role} LOGIN; REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    writer_url = pg_url.replace("//mark@", f"//{role}@")
    with pytest.raises(UnavailableError, match=r"cannot set up the audit log in .*give its user the right"):
        PostgresAuditLog(writer_url, tmp_path / "audit.sqlite3")
    PostgresAuditLog(pg_url, tmp_path / "audit.sqlite3").close()  # the owner creates the table
    _raw(pg_url, f"GRANT SELECT, INSERT, UPDATE, DELETE ON mark_audit_events TO {role}")
    writer = PostgresAuditLog(writer_url, tmp_path / "audit.sqlite3")
    try:
        writer.commit([writer.append("m1", EventKind.CREATE, NOW, 1, "a", {"text": "x"})])
        assert writer.forget(["m1"]) == 1 and [e.detail for e in writer.history("m1")] == [{"forgotten": True}]
    finally:
        writer.close()


def test_a_dropped_connection_is_one_error_then_the_log_reconnects(pg_url: str, pg_log: AuditBackend) -> None:
    seq = pg_log.append("m1", EventKind.CREATE, NOW, 1, "a", {})  # in flight when the server drops us
    ((backend,),) = _raw(pg_url, "SELECT backend FROM mark_audit_events")
    _raw(pg_url, "SELECT pg_terminate_backend(%s, 5000)", (backend,))  # waits until that session is gone
    with pytest.raises(UnavailableError, match=r"lost its connection to postgresql://mark@127\.0\.0\.1"):
        pg_log.count()
    pg_log.commit([seq])  # the next call connects again, and the event in flight is still this process's
    assert [e.seq for e in pg_log.history("m1")] == [seq] and pg_log.pending() == []
    assert _raw(pg_url, "SELECT backend <> %s FROM mark_audit_events", (backend,)) == [(True,)]


def test_details_are_sealed_with_a_key(pg_url: str, tmp_path: Path) -> None:
    from memory.audit_pg import PostgresAuditLog

    sealed = PostgresAuditLog(pg_url, tmp_path / "audit.sqlite3", TextCipher(KEY))
    try:
        sealed.commit([sealed.append("m1", EventKind.CREATE, NOW, 1, "a", {"text": "Zanzibarite"})])
        assert sealed.history("m1")[0].detail == {"text": "Zanzibarite"}
        ((stored,),) = _raw(pg_url, "SELECT detail FROM mark_audit_events")
        assert str(stored).startswith("mark-fernet:") and "Zanzibarite" not in str(stored)
        sealed.forget(["m1"])  # a tombstone is not sealed: it holds nothing
        assert _raw(pg_url, "SELECT detail FROM mark_audit_events") == [('{"forgotten": true}',)]
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

    port = _free_port()
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
    rows = _raw(pg_url, "SELECT memory_id, kind FROM mark_audit_events WHERE committed ORDER BY seq")
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


# -- several processes at once ---------------------------------------------------------------------------

_OPEN = """
import sys, time
from pathlib import Path
backend, where, ready, name = sys.argv[1:5]
if backend == "sqlite":
    from memory.audit import AuditLog
    log = AuditLog(Path(where))
else:
    from memory.audit_pg import PostgresAuditLog
    log = PostgresAuditLog(where, Path(ready) / "audit.sqlite3")
(Path(ready) / name).touch()
while len(list(Path(ready).iterdir())) < 2:  # both open before either starts
    time.sleep(0.005)
"""

_APPEND = """
from datetime import UTC, datetime
from memory.audit import EventKind
for i in range(0, 200, 2):
    one = log.append(f"{name}-{i}", EventKind.CREATE, datetime.now(UTC), 1, name, {"i": i})
    two = log.append_many([(f"{name}-{i + 1}", EventKind.CREATE, datetime.now(UTC), 1, name, {"i": i + 1})])
    log.commit([one, *two])
log.close()
"""

_COUNT = """
counter = Path(sys.argv[5])
for _ in range(50):
    with log.write_lock():
        with log.write_lock():  # nested: the same hold
            value = int(counter.read_text())
        time.sleep(0.002)  # without the lock the other process reads the same value meanwhile
        counter.write_text(str(value + 1))
log.close()
"""


def _two_processes(code: str, backend: str, where: str, folder: Path, *extra: str) -> None:
    ready = folder / "ready"
    ready.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, backend, where, str(ready), name, *extra],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("p1", "p2")
    ]
    errors = [proc.communicate(timeout=180)[1] for proc in procs]  # both pipes drained before any assert
    for proc, err in zip(procs, errors, strict=True):
        assert proc.returncode == 0, err


def test_two_processes_append_at_once_without_loss(pg_url: str, tmp_path: Path) -> None:
    _two_processes(_OPEN + _APPEND, "postgresql", pg_url, tmp_path)
    rows = _raw(pg_url, "SELECT seq, memory_id, actor FROM mark_audit_events WHERE committed")
    assert len(rows) == 400 and len({seq for seq, _, _ in rows}) == 400
    for name in ("p1", "p2"):
        assert sorted(str(m) for _, m, actor in rows if actor == name) == sorted(f"{name}-{i}" for i in range(200))
    assert _raw(pg_url, "SELECT count(*) FROM mark_audit_events WHERE NOT committed") == [(0,)]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_write_lock_serialises_two_processes(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    where = str(tmp_path / "audit.sqlite3") if backend == "sqlite" else request.getfixturevalue("pg_url")
    counter = tmp_path / "counter"
    counter.write_text("0")
    _two_processes(_OPEN + _COUNT, backend, where, tmp_path, str(counter))
    assert counter.read_text() == "100"  # 2 x 50 read-modify-writes, none lost


def test_the_sqlite_write_lock_is_one_file_beside_the_log(tmp_path: Path) -> None:
    import fcntl

    log = AuditLog(tmp_path / "audit.sqlite3")
    try:
        with log.write_lock(), log.write_lock():
            probe = os.open(log.lock_path, os.O_RDWR)
            try:  # another open file description (another process) cannot have it now
                with pytest.raises(BlockingIOError):
                    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            finally:
                os.close(probe)
        assert log.lock_path.name == "audit.sqlite3.lock" and (log.lock_path.stat().st_mode & 0o077) == 0
    finally:
        log.close()


# -- settings --------------------------------------------------------------------------------------------


def test_the_database_url_comes_from_the_environment_or_mark_toml(tmp_path: Path) -> None:
    url = "postgresql://mark:pw@db.example:5432/mark"
    assert load_settings(env={"MARK_HOME": str(tmp_path), "MARK_DATABASE_URL": url}).store.database_url is not None
    toml = tmp_path / "mark.toml"
    toml.write_text(f'[store]\ndatabase_url = "{url}"\n')
    settings = load_settings(env={"MARK_HOME": str(tmp_path), "MARK_CONFIG": str(toml)})
    assert settings.store.database_url is not None and settings.store.database_url.get_secret_value() == url
    assert "pw" not in repr(settings.store)
    with pytest.raises(ConfigError, match=r"store\.database_url: .*PostgreSQL URL"):
        load_settings(env={"MARK_HOME": str(tmp_path), "MARK_DATABASE_URL": "mysql://db/mark"})


def test_without_a_database_url_the_log_is_sqlite_and_psycopg_stays_unloaded(tmp_path: Path) -> None:
    code = (
        "import sys, cli\n"
        "from memory.audit import AuditLog, open_audit_log\nfrom memory.config import load_settings\n"
        f"log = open_audit_log(load_settings(env={{'MARK_HOME': {str(tmp_path)!r}}}))\n"
        "print(json.dumps([type(log) is AuditLog, 'psycopg' in sys.modules, 'memory.audit_pg' in sys.modules]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", "import json\n" + code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert json.loads(proc.stdout) == [True, False, False], proc.stderr
    assert (tmp_path / "audit.sqlite3").is_file()


def test_with_a_database_url_the_log_is_postgresql(pg_url: str, tmp_path: Path) -> None:
    from memory.audit_pg import PostgresAuditLog

    log = open_audit_log(load_settings(env={"MARK_HOME": str(tmp_path), "MARK_DATABASE_URL": pg_url}))
    try:
        assert isinstance(log, PostgresAuditLog) and not (tmp_path / "audit.sqlite3").exists()
        with log.write_lock():
            held = _raw(
                pg_url,
                "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
                " WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database()",
            )
        assert held == [(1,)]
    finally:
        log.close()


def test_mark_doctor_checks_the_postgresql_audit_log_it_is_given(pg_url: str, tmp_path: Path) -> None:
    from agents.doctor import run_checks

    env = {"MARK_HOME": str(tmp_path / "home"), "MARK_DATABASE_URL": pg_url, "MARK_EMBEDDER": "hashing"}
    store = run_checks(load_settings(env=env)).checks["store"]
    assert store.ok and "audit events in postgresql://" in store.detail, store.detail
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    down = pg_url.replace(pg_url.split("@", 1)[1].split("/", 1)[0], f"127.0.0.1:{closed}")
    store = run_checks(load_settings(env={**env, "MARK_DATABASE_URL": down})).checks["store"]
    assert not store.ok and "cannot connect to the audit database" in store.detail and "\n" not in store.detail

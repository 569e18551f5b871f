"""Which audit backend a data home uses: SQLite by default, PostgreSQL with a database URL."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from memory.audit import open_audit_log
from memory.config import ConfigError, load_settings
from tests.memory.pg_cluster import raw

ROOT = Path(__file__).resolve().parents[2]
KEY = Fernet.generate_key().decode()


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
            held = raw(
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

"""Fixtures for the tests that need a real PostgreSQL server.

``pg_server`` (one per session) starts a throwaway cluster from Debian's binaries
(``/usr/lib/postgresql/*/bin``) in a temporary folder owned by the ``postgres`` user (PostgreSQL refuses
to run as root), on a free loopback port with its unix socket in that folder, and removes it at the end;
``pg_url`` is a new database on it for each test, ``pg_log`` the audit log in it. Without the binaries
these tests skip, naming the apt command.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.audit import AuditBackend
from tests.memory.pg_cluster import INSTALL, PgServer, as_server_user, binaries, free_port


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """initdb, pg_ctl start on a free loopback port, then stop and remove the cluster."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e .")
    bin_dir = binaries()
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
    run = [*as_server_user(), str(bin_dir / "pg_ctl"), "-D", str(data)]
    started = False
    try:
        subprocess.run(
            [*as_server_user(), str(bin_dir / "initdb"), "-D", str(data), "-U", "mark", "-A", "trust", "--no-sync"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        for _ in range(3):  # a free port can be taken between the probe and the start: try another
            port = free_port()
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

"""A throwaway PostgreSQL cluster for the tests that need a real server (fixtures in ``conftest.py``)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

INSTALL = "apt-get install postgresql"


@dataclass
class PgServer:
    """A running throwaway cluster: URLs of its databases, and a counter for fresh ones."""

    port: int
    names: Iterator[int]

    def url(self, database: str) -> str:
        return f"postgresql://mark@127.0.0.1:{self.port}/{database}"


def binaries() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    return found[-1].parent if found and (found[-1].parent / "pg_ctl").is_file() else None


def as_server_user() -> list[str]:
    """Run as ``postgres`` when we are root (PostgreSQL refuses root); as ourselves otherwise."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def raw(url: str, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Run one statement on its own connection; its rows, if it returns any."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        cursor = db.execute(sql, args)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description else []

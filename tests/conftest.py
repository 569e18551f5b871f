"""Shared fixtures: loopback-only sockets, a temporary data home, a deterministic engine."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory.config import Settings, load_settings
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.engine_config import EngineConfig
from memory.scoring import ScoringConfig

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
# bag-of-words hashing scores lower than MiniLM: its relevance floor is lower too
HASHING_CONFIG = EngineConfig(scoring=ScoringConfig(min_similarity=0.1))
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _loopback_only(address: Any) -> None:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        if host == "localhost":
            return
        try:
            if ipaddress.ip_address(host).is_loopback:
                return
        except ValueError:
            pass
        raise ConnectionRefusedError(f"tests may only connect to loopback, not {host}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _loopback_only(address)
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _loopback_only(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with outbound connections limited to loopback."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings with a temporary home and the hashing embedder (no model files needed)."""
    env = {"MARK_HOME": str(tmp_path / "home"), "MARK_EMBEDDER": "hashing", "MARK_PROVIDER": "replay"}
    return load_settings(env=env)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``MARK_HOME`` for CLI tests: a new folder under tmp_path, the hashing embedder, tmp_path as cwd."""
    monkeypatch.setenv("MARK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MARK_EMBEDDER", "hashing")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.fixture
def engine(settings: Settings) -> Iterator[MemoryEngine]:
    """A real engine on an embedded Chroma store in a temporary folder."""
    eng = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    try:
        yield eng
    finally:
        eng.close()

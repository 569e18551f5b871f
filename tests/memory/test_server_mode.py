"""The same engine code against a real Chroma server (`chroma run`) on loopback."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.config import load_settings
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.models import MemoryType, Source
from memory.store import SPACE, StoreError
from tests.conftest import NOW


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if binary is None:
        pytest.skip("the chroma CLI is not installed next to this Python")
    port = _free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen(
        [binary, "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("chroma server did not start")
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_engine_against_chroma_server(chroma_url: str, tmp_path: Path) -> None:
    settings = load_settings(env={"MARK_HOME": str(tmp_path), "MARK_CHROMA_URL": chroma_url})
    first = MemoryEngine.open(settings, embedder=HashingEmbedder())
    second = MemoryEngine.open(settings, embedder=HashingEmbedder())  # two clients share a server store
    try:
        rec = first.add(
            "tropicamide is a short acting mydriatic", MemoryType.RESIDUAL, "sme", source=Source.SME, now=NOW
        )
        assert first.store.mode == "server"
        hits = second.search("tropicamide mydriatic", "bob", now=NOW).top()
        assert [h.record.id for h in hits] == [rec.record.id]
        assert all(second.store.space(p) == SPACE for p in second.store.partitions())
        # another client's write is seen at once: a server store keeps no record cache
        assert first.store.cache.capacity == second.store.cache.capacity == 0
        first.feedback(rec.record.id, correct=True, now=NOW)
        again = second.search("tropicamide mydriatic", "bob", now=NOW).top()
        assert again[0].record.validated_correct == 1
    finally:
        first.close()
        second.close()


def test_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    settings = load_settings(env={"MARK_HOME": str(tmp_path), "MARK_CHROMA_URL": f"http://127.0.0.1:{_free_port()}"})
    with pytest.raises(StoreError, match="cannot reach the Chroma server"):
        MemoryEngine.open(settings, embedder=HashingEmbedder())

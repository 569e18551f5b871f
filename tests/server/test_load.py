"""Several clients at once, over loopback, against real ``mark serve`` processes: nothing acknowledged is lost.

The load and the checks are the benchmark's (``benchmarks/_service_load.py``), bounded here in time and
size: 20 users through the API, then every acknowledged add present with its text, a ``create`` event
naming its owner, a 404 for three other users, and its votes counted exactly; with four worker processes
on a Chroma server, 4 x 25 concurrent votes on one memory count 100, and the same 10 texts added by four
clients at once make 10 memories.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _service_load import free_port, hot_spot, make_keys, process, run_load, verify, wait_until_up  # noqa: E402

MARK = str(Path(sys.executable).with_name("mark"))
CHROMA = str(Path(sys.executable).with_name("chroma"))


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {"MARK_HOME": str(home), "MARK_EMBEDDER": "hashing", "MARK_LOG_LEVEL": "warning", **extra}


@pytest.mark.slow
def test_one_process_under_eight_clients_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    keys = make_keys(home, 20)
    port = free_port()
    with process([MARK, "serve", "--port", str(port)], _env(home), tmp_path / "serve.log"):
        base = f"http://127.0.0.1:{port}"
        wait_until_up(f"{base}/health")
        ledger, _ = run_load(base, keys, clients=8, seconds=6)
        checked = verify(base, keys, ledger)
    assert ledger.errors == {}
    assert checked["acknowledged_adds"] > 20 and checked["checked"] == checked["acknowledged_adds"]
    assert checked["problems"] == []


@pytest.mark.slow
def test_four_workers_on_a_chroma_server_count_every_vote(tmp_path: Path) -> None:
    home = tmp_path / "home"
    keys = make_keys(home, 20)
    chroma_port, port = free_port(), free_port()
    chroma = [CHROMA, "run", "--host", "127.0.0.1", "--port", str(chroma_port), "--path", str(tmp_path / "chroma")]
    with process(chroma, {}, tmp_path / "chroma.log"):
        wait_until_up(f"http://127.0.0.1:{chroma_port}/api/v2/heartbeat")
        env = _env(home, MARK_CHROMA_URL=f"http://127.0.0.1:{chroma_port}")
        with process([MARK, "serve", "--port", str(port), "--workers", "4"], env, tmp_path / "serve.log"):
            base = f"http://127.0.0.1:{port}"
            wait_until_up(f"{base}/health")
            ledger, _ = run_load(base, keys, clients=8, seconds=5)
            checked = verify(base, keys, ledger)
            spot = hot_spot(base, keys)
    assert ledger.errors == {} and checked["problems"] == []
    assert (spot["votes_acknowledged"], spot["votes_counted"]) == (100, 100)
    assert (spot["identical_texts"], spot["records_for_them"]) == (10, 10)

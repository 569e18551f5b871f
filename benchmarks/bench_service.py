"""mark as a service under load: throughput and latency over loopback, then every acknowledged write checked.

Run:  nice -n 10 .venv/bin/python benchmarks/bench_service.py [--mode embedded|workers|both] [--seconds 60]
      [--clients 8] [--users 20] [--workers 4] [--embedder onnx|hashing]

(1) ``embedded``: one ``mark serve`` process on an embedded store in a fresh MARK_HOME. ``--clients``
    threads, each with its own HTTP client, act for ``--users`` users (one API key each, round robin)
    for ``--seconds``: 50% searches, 30% adds of a new personal memory, 20% votes on one of the user's
    own memories. Every operation is timed from request to response.
(2) ``workers``: a Chroma server (``chroma run``) and ``mark serve --workers N`` against it
    (``MARK_CHROMA_URL``), sharing one MARK_HOME (the SQLite audit log and the keys), the same load.
    Then the hot spot: 4 threads x 25 "correct" votes on one memory (the count must be exactly 100) and
    the same 10 texts added by each of the 4 threads (there must be exactly 10 records).

After each load, through the API: every add the server acknowledged is present with its text, has a
``create`` event naming its owner, is invisible (404) to 3 other users picked at random, and its vote
counts equal the acknowledged votes; no user's listing holds another user's personal memory.
Reported: operations per second (overall and per operation), median and p95 latency per operation,
errors, and the checks. Results: ``benchmarks/results/service.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from _common import ROOT, machine_info, print_table, say, summarize, temp_home, write_results
from _service_load import free_port, hot_spot, make_keys, process, run_load, verify, wait_until_up


def _report(title: str, ledger: Any, wall: float) -> dict[str, Any]:
    ops = sum(len(v) for v in ledger.latencies.values())
    rows = [["all", ops, round(ops / wall, 1), "", ""]]
    stats = {}
    for op, samples in ledger.latencies.items():
        s = summarize(samples)
        stats[op] = s
        rows.append([op, len(samples), round(len(samples) / wall, 1), s.get("median_ms"), s.get("p95_ms")])
    say(f"\n== {title}: {ops} operations in {wall:.1f} s ==")
    print_table(["operation", "count", "per s", "median ms", "p95 ms"], rows)
    if ledger.errors:
        say(f"errors: {ledger.errors}")
    return {"operations": ops, "seconds": wall, "per_s": ops / wall, "latency": stats, "errors": ledger.errors}


def _checks(title: str, checked: dict[str, Any]) -> None:
    say(
        f"{title}: {checked['checked']} of {checked['acknowledged_adds']} acknowledged adds checked; "
        f"{len(checked['problems'])} problem(s)"
    )
    for problem in checked["problems"][:10]:
        say(f"  {problem}")


def embedded(args: argparse.Namespace, home: Path) -> dict[str, Any]:
    keys = make_keys(home, args.users)
    port = free_port()
    env = {"MARK_HOME": str(home), "MARK_EMBEDDER": args.embedder, "MARK_LOG_LEVEL": "warning"}
    mark = str(Path(sys.executable).with_name("mark"))
    with process([mark, "serve", "--port", str(port)], env, home.parent / "serve.log"):
        base = f"http://127.0.0.1:{port}"
        wait_until_up(f"{base}/health")
        ledger, wall = run_load(base, keys, args.clients, args.seconds)
        result = _report("embedded store, one process", ledger, wall)
        result["checks"] = verify(base, keys, ledger)
        _checks("embedded", result["checks"])
    return result


def workers(args: argparse.Namespace, home: Path) -> dict[str, Any]:
    keys = make_keys(home, args.users)
    chroma_port, port = free_port(), free_port()
    chroma = str(Path(sys.executable).with_name("chroma"))
    chroma_dir = home.parent / "chroma-server"
    with process(
        [chroma, "run", "--host", "127.0.0.1", "--port", str(chroma_port), "--path", str(chroma_dir)],
        {},
        home.parent / "chroma.log",
    ):
        wait_until_up(f"http://127.0.0.1:{chroma_port}/api/v2/heartbeat")
        env = {
            "MARK_HOME": str(home),
            "MARK_EMBEDDER": args.embedder,
            "MARK_CHROMA_URL": f"http://127.0.0.1:{chroma_port}",
            "MARK_LOG_LEVEL": "warning",
        }
        mark = str(Path(sys.executable).with_name("mark"))
        serve = [mark, "serve", "--port", str(port), "--workers", str(args.workers)]
        with process(serve, env, home.parent / "serve-workers.log"):
            base = f"http://127.0.0.1:{port}"
            wait_until_up(f"{base}/health")
            ledger, wall = run_load(base, keys, args.clients, args.seconds)
            result = _report(f"Chroma server, {args.workers} worker processes", ledger, wall)
            result["checks"] = verify(base, keys, ledger)
            _checks("workers", result["checks"])
            result["hot_spot"] = spot = hot_spot(base, keys)
            say(
                f"hot spot: {spot['votes_counted']} votes counted of {spot['votes_acknowledged']} acknowledged; "
                f"{spot['records_for_them']} records for {spot['identical_texts']} identical texts added 4 times"
            )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["embedded", "workers", "both"], default="both")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--embedder", choices=["onnx", "hashing"], default="onnx")
    args = parser.parse_args()
    payload: dict[str, Any] = {"machine": machine_info(), "args": vars(args)}
    if args.mode in ("embedded", "both"):
        with temp_home("bench-service") as tmp:
            payload["embedded"] = embedded(args, tmp / "home")
    if args.mode in ("workers", "both"):
        with temp_home("bench-service-workers") as tmp:
            payload["workers"] = workers(args, tmp / "home")
    say(f"\nresults: {write_results('service', payload)}")
    failed = [m for m in ("embedded", "workers") if m in payload and payload[m]["checks"]["problems"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())

"""``mark ask`` latency on the configured (default: embedded) model: the first call including the
model load, then warm calls in the same process (median, p95), and the process's peak RSS.

    python benchmarks/bench_ask.py [--warm 5]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time

from _common import machine_info, say, summarize, write_results

from agents.ask import ask
from agents.providers import build_client
from memory.config import load_settings

QUESTION = "Concentration of tropicamide eye drops? A) 0.01 B) 0.02 C) 0.03 D) 0.04"


def main() -> int:
    parser = argparse.ArgumentParser(description="mark ask latency")
    parser.add_argument("--warm", type=int, default=5, help="warm calls after the first (default 5)")
    args = parser.parse_args()
    settings = load_settings()
    start = time.perf_counter()
    client = build_client(settings)
    first_answer = asyncio.run(ask(client, QUESTION, "medicine")).answer
    first_s = time.perf_counter() - start
    warm: list[float] = []
    for _ in range(args.warm):
        t0 = time.perf_counter()
        asyncio.run(ask(client, QUESTION, "medicine"))
        warm.append(time.perf_counter() - t0)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stats = summarize(warm)
    say(f"model: {settings.model.provider.value} threads={settings.model.n_threads}")
    say(f"first call (model load + answer): {first_s:.2f} s")
    say(f"warm calls: median {stats['median_ms'] / 1000:.2f} s, p95 {stats['p95_ms'] / 1000:.2f} s (n={len(warm)})")
    say(f"peak RSS: {peak_mb:.0f} MB; first answer: {first_answer[:80]!r}")
    write_results("ask", {"machine": machine_info(), "first_s": first_s, "warm": stats, "peak_rss_mb": peak_mb})
    return 0


if __name__ == "__main__":
    sys.exit(main())

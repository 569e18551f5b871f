"""The MARK paper's appendix example: build memories from the tropicamide dialogue with the real model.

Run:  MARK_THREADS=1 nice -n 10 .venv/bin/python benchmarks/bench_tropicamide.py [--runs 3]
      [--model-path GGUF] [--threads N]

The dialogue (written for mark, in the spirit of the paper's appendix): a multiple-choice question on
the strength of tropicamide, the assistant's first answer that no option fits, the expert pointing out
that 0.5%-1% is 0.005-0.01 as a decimal, the assistant agreeing, the expert asking for the option, the
assistant answering a) 0.01. Each run builds it with ``agents.team.build_memories`` (source=SME,
domain medicine) into a FRESH temporary store, so every run starts empty. The model is loaded once,
before the first run (its load time is reported apart). Reported: memories extracted per type (mean),
outcomes per type (mean), LLM calls and tokens per built conversation (``state.report()["usage"]``),
wall time per build (median), and the memories of the first run. Results: ``results/tropicamide.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _common import ROOT, machine_info, print_table, say, temp_home, write_results

from agents.building import BuildState, Turn
from agents.local_model import resolve_model_path
from agents.providers import build_client, release_local_models
from agents.team import build_memories
from memory.config import Provider, load_settings
from memory.embedder import build_embedder
from memory.engine import MemoryEngine
from memory.models import MemoryType, Source

TRANSCRIPT = [
    Turn(role="user", content="What is the concentration of tropicamide? a) 0.01 b) 0.02 c) 0.03 d) 0.04"),
    Turn(
        role="assistant",
        content=(
            "The strength of tropicamide depends on what it is used for. The eye drops used to dilate the "
            "pupil are usually sold as 0.5% and 1% solutions, so none of the listed values (0.01, 0.02, "
            "0.03, 0.04) matches a usual concentration."
        ),
    ),
    Turn(role="user", content="Look again: 0.5% to 1% is the same as 0.005 to 0.01 written as a decimal fraction."),
    Turn(
        role="assistant",
        content=(
            "You are right, my apologies. Ophthalmic tropicamide is used at 0.5% to 1%, which is 0.005 to "
            "0.01 in decimal form."
        ),
    ),
    Turn(role="user", content="So which of the four options is the right one?"),
    Turn(role="assistant", content="Given that range, the correct option is a) 0.01."),
]
USER_ID = "sme-1"
DOMAIN = "medicine"


def command_line() -> str:
    """The command as typed, with the MARK_* variables that shape it (keys hidden)."""
    env = [f"{k}={shlex.quote(v)}" for k, v in sorted(os.environ.items()) if k.startswith("MARK_") and "KEY" not in k]
    exe = Path(sys.executable)
    shown = str(exe.relative_to(ROOT)) if exe.is_relative_to(ROOT) else str(exe)
    return " ".join([*env, shown, *map(shlex.quote, sys.argv)])


def model_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Pin the model to one file so a temporary MARK_HOME never assembles the packaged GGUF again."""
    model: dict[str, Any] = {}
    if args.threads:
        model["n_threads"] = args.threads
    base = load_settings(model=dict(model))
    if args.model_path:
        model["model_path"] = args.model_path
    elif base.model.provider is Provider.LOCAL:
        model["model_path"] = str(resolve_model_path(base.model, base.models_dir))
    return model


async def one_build(engine: MemoryEngine, client: Any, run: int) -> BuildState:
    state = BuildState(
        list(TRANSCRIPT), USER_ID, source=Source.SME, domain=DOMAIN, conversation_id=f"tropicamide-{run}"
    )
    return await build_memories(engine, client, state)


def run_once(run: int, model: dict[str, Any], client: Any, embedder: Any) -> dict[str, Any]:
    with temp_home(f"tropicamide-{run}") as home:
        settings = load_settings(home=str(home), model=dict(model))
        engine = MemoryEngine.open(settings, embedder=embedder)
        try:
            start = time.perf_counter()
            state = asyncio.run(one_build(engine, client, run))
            wall = time.perf_counter() - start
            stored = [
                {"type": r.type.value, "status": r.status.value, "veracity": round(r.veracity, 3), "text": r.text}
                for r in engine.list()
            ]
        finally:
            engine.close()
    report = state.report().as_json()
    report["wall_s"] = round(wall, 2)
    report["stored"] = stored
    report["fact_checks"] = [
        {"type": c.type.value, "text": c.text, "fact_check": c.fact_check, "reason": c.fact_reason}
        for c in state.candidates
    ]
    return report


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(runs)
    types = [t.value for t in MemoryType]
    outcomes: dict[str, dict[str, float]] = {}
    for r in runs:
        for memory_type, counts in r["counts"].items():
            for action, count in counts.items():
                row = outcomes.setdefault(memory_type, {})
                row[action] = row.get(action, 0) + count / n
    totals = [r["usage"]["total"] for r in runs]
    walls = [r["wall_s"] for r in runs]
    return {
        "runs": n,
        "extracted_mean": {t: round(sum(r["extracted"][t] for r in runs) / n, 2) for t in types},
        "outcomes_mean": {t: {a: round(v, 2) for a, v in sorted(c.items())} for t, c in sorted(outcomes.items())},
        "llm_calls_mean": round(sum(t["calls"] for t in totals) / n, 2),
        "prompt_tokens_mean": round(sum(t["prompt_tokens"] for t in totals) / n, 1),
        "completion_tokens_mean": round(sum(t["completion_tokens"] for t in totals) / n, 1),
        "rejected_replies_mean": round(sum(t["failures"] for t in totals) / n, 2),
        "errors_total": sum(len(r["errors"]) for r in runs),
        "wall_s_median": round(statistics.median(walls), 2),
        "wall_s_min": min(walls),
        "wall_s_max": max(walls),
    }


def print_summary(summary: dict[str, Any], runs: list[dict[str, Any]]) -> None:
    say(f"\n== tropicamide dialogue, {summary['runs']} build(s), fresh store each ==")
    print_table(
        ["memory type", "extracted (mean)", "outcomes (mean)"],
        [
            [t, n, ", ".join(f"{a} {v:g}" for a, v in summary["outcomes_mean"].get(t, {}).items()) or "-"]
            for t, n in summary["extracted_mean"].items()
        ],
    )
    say(
        f"  per built conversation: {summary['llm_calls_mean']:g} LLM calls, "
        f"{summary['prompt_tokens_mean']:g} prompt + {summary['completion_tokens_mean']:g} completion tokens, "
        f"{summary['rejected_replies_mean']:g} rejected replies"
    )
    say(
        f"  wall time per build: median {summary['wall_s_median']:.1f} s "
        f"(min {summary['wall_s_min']:.1f}, max {summary['wall_s_max']:.1f})"
    )
    first = runs[0]
    say(
        "  LLM calls per agent (first run): "
        + ", ".join(f"{a} {u['calls']}" for a, u in first["usage"]["agents"].items())
    )
    say("\nmemories of the first run (outcome | type | status | text):")
    for o in first["outcomes"]:
        say(f"  {o['action']:<10} | {o['type']:<13} | {o['status'] or '-':<14} | {o['text']}")
    if not first["outcomes"]:
        say("  (none)")
    for c in first["fact_checks"]:
        if c["fact_check"] is not None:
            say(f"  fact check {c['fact_check']:g}: {c['text'][:70]} ({c['reason'][:80]})")
    errors = [e for r in runs for e in r["errors"]]
    if errors:
        say("errors:")
        for e in errors:
            say(f"  {e}")


def start_model(args: argparse.Namespace) -> tuple[dict[str, Any], Any, Any, dict[str, Any]]:
    """The model overrides, a loaded client, the embedder, and what was loaded (printed) with its load time."""
    model = model_overrides(args)
    base = load_settings(model=dict(model))
    cfg = base.model
    say(f"model: provider={cfg.provider.value} {cfg.model_path or cfg.base_url or cfg.model} threads={cfg.n_threads}")
    start = time.perf_counter()
    client = build_client(base)
    load_s = time.perf_counter() - start
    say(f"model client ready in {load_s:.1f} s")
    info = {
        "provider": cfg.provider.value,
        "path": str(cfg.model_path or ""),
        "threads": cfg.n_threads,
        "load_s": round(load_s, 2),
    }
    return model, client, build_embedder(base.embedder), info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="builds, each into a fresh store (default 3)")
    parser.add_argument("--model-path", help="GGUF to load (else MARK_MODEL_PATH or the packaged model)")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (else MARK_THREADS, default 1)")
    args = parser.parse_args()
    say(f"command: {command_line()}")
    model, client, embedder, info = start_model(args)
    runs: list[dict[str, Any]] = []
    try:
        for run in range(max(1, args.runs)):
            runs.append(run_once(run, model, client, embedder))
            r = runs[-1]
            say(f"  run {run + 1}: {r['extracted']} extracted, {r['usage']['total']['calls']} calls, {r['wall_s']} s")
    finally:
        release_local_models()
    summary = summarise(runs)
    print_summary(summary, runs)
    payload = {
        "command": command_line(),
        "machine": machine_info(),
        "model": {k: info[k] for k in ("provider", "path", "threads")},
        "model_load_s": info["load_s"],
        "transcript": [t.model_dump() for t in TRANSCRIPT],
        "summary": summary,
        "runs": runs,
    }
    say(f"\nresults: {write_results('tropicamide', payload)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

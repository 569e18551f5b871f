"""Start-up time of the ``mark`` command line: ``mark --help`` and ``mark memory search`` as a user runs them.

Run:  .venv/bin/python benchmarks/bench_startup.py [--runs N] [--base PATH]

Every command is a fresh process (interpreter start, imports, work, exit), timed from spawn to exit.
Setup: a fresh ``MARK_HOME`` under /tmp with four memories added through ``mark memory add`` (the
default offline ONNX MiniLM embedder). Then ``--runs`` rounds (default 10); each round runs every row
once, in order, so machine noise hits every row alike:
(0) BASELINE ``python -c pass`` with the venv's interpreter;
(a) ``mark --help`` and (b) ``mark memory search QUERY --user alice`` through the installed script
(``.venv/bin/mark``, this checkout);
(a-base), (b-base) with ``--base PATH``: the same commands from another checkout (e.g. a ``git worktree``
of the previous commit), run as ``python -c "from cli import main; ..."`` from that folder with the same
interpreter and the same store. Rows (a-launch), (b-launch) run this checkout the same way, so that the
base rows compare like with like.
Each row prints its median and p95 and the ratio of its median to the baseline's; with ``--base``, also
the ratio to its base row. Then, once per checkout, the heavy packages that ``mark --help`` loaded.

Results go to ``benchmarks/results/startup.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import ROOT, machine_info, print_table, say, summarize, temp_home, write_results

QUERY = "how long does tropicamide dilate the pupil"
MEMORIES = (
    "Tropicamide dilates the pupil for about four to six hours",
    "I prefer short answers",
    "Atropine is a long acting cycloplegic",
    "Phenylephrine is an alpha agonist used for mydriasis",
)
HEAVY = ("chromadb", "numpy", "pydantic", "autogen_core", "autogen_agentchat", "llama_cpp", "matplotlib", "openai")
LAUNCH = "import sys; from cli import main; sys.argv[0] = 'mark'; sys.exit(main())"
PROBE = (
    "import contextlib, io, json, sys; from cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])\n"
    "print(json.dumps([m for m in {heavy!r} if m in sys.modules]))"
)


def run_once(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Seconds from spawn to exit of one command; a failing command stops the benchmark."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} (in {cwd}) exited {done.returncode}: {done.stderr.strip()}")
    return elapsed


def heavy_modules(cwd: Path, env: dict[str, str]) -> list[str]:
    """The packages of ``HEAVY`` that ``mark --help`` imports when run from ``cwd``."""
    probe = PROBE.format(heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    found: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def rows_for(base: Path | None) -> dict[str, tuple[list[str], Path]]:
    """Row label -> (command, working folder)."""
    script = str(Path(sys.executable).parent / "mark")
    search = ["memory", "search", QUERY, "--user", "alice"]
    rows: dict[str, tuple[list[str], Path]] = {
        "(0) python -c pass": ([sys.executable, "-c", "pass"], ROOT),
        "(a) mark --help": ([script, "--help"], ROOT),
        "(b) mark memory search": ([script, *search], ROOT),
    }
    if base is not None:
        launch = [sys.executable, "-c", LAUNCH]
        rows["(a-launch) --help, this checkout"] = ([*launch, "--help"], ROOT)
        rows["(a-base) --help, base checkout"] = ([*launch, "--help"], base)
        rows["(b-launch) search, this checkout"] = ([*launch, *search], ROOT)
        rows["(b-base) search, base checkout"] = ([*launch, *search], base)
    return rows


def main() -> None:
    """Set up a store, time every row ``--runs`` times (interleaved), print and save the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="rounds (every row once per round)")
    parser.add_argument("--base", type=Path, default=None, help="another mark checkout to compare with")
    args = parser.parse_args()
    base = args.base.resolve() if args.base else None
    info = machine_info()
    with temp_home("startup") as home:
        env = {**os.environ, "MARK_HOME": str(home)}
        for key in ("MARK_CONFIG", "MARK_EMBEDDER", "MARK_CHROMA_URL"):
            env.pop(key, None)
        script = str(Path(sys.executable).parent / "mark")
        for text in MEMORIES:
            run_once([script, "memory", "add", text, "--user", "alice"], ROOT, env)
        rows = rows_for(base)
        samples: dict[str, list[float]] = {label: [] for label in rows}
        say(f"{len(rows)} rows x {args.runs} rounds (load average {os.getloadavg()[0]:.2f})")
        for _ in range(args.runs):
            for label, (command, cwd) in rows.items():
                samples[label].append(run_once(command, cwd, env))
        heavy = {"this checkout": heavy_modules(ROOT, env)}
        if base is not None:
            heavy["base checkout"] = heavy_modules(base, env)
    summary = {label: summarize(values) for label, values in samples.items()}
    floor = summary["(0) python -c pass"]["median_ms"]
    table: list[list[Any]] = []
    for label, stats in summary.items():
        stats["x_baseline"] = round(stats["median_ms"] / floor, 2)
        base_label = label.replace("-launch)", "-base)").replace(", this checkout", ", base checkout")
        if "-launch)" in label and base_label in summary:
            stats["x_base_checkout"] = round(stats["median_ms"] / summary[base_label]["median_ms"], 3)
        table.append(
            [label, stats["median_ms"], stats["p95_ms"], stats["x_baseline"], stats.get("x_base_checkout", "")]
        )
    print_table(["row", "median ms", "p95 ms", "x (0)", "x base"], table)
    for where, found in heavy.items():
        say(f"mark --help imports, {where}: {', '.join(found) or 'none of ' + ', '.join(HEAVY)}")
    payload = {"machine": info, "runs": args.runs, "base": str(base) if base else None, "rows": summary}
    payload["help_imports"] = heavy
    say(f"wrote {write_results('startup', payload)}")


if __name__ == "__main__":
    main()

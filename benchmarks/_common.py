"""Shared helpers for the benchmarks: statistics, call timers, machine info, result files.

The synthetic memory store the engine benchmarks load lives in ``_dataset``.

Not a benchmark itself. The bench scripts put this folder on ``sys.path`` implicitly (they are run
as ``python benchmarks/bench_x.py``), so they import it as ``_common``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "benchmarks" / "results"
NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


# -- statistics ---------------------------------------------------------------------------------
def summarize(samples_s: Sequence[float]) -> dict[str, float]:
    """Median / p95 / mean / min / max in milliseconds of samples given in seconds."""
    ms = np.asarray(samples_s, dtype=np.float64) * 1e3
    if ms.size == 0:
        return {"n": 0}
    return {
        "n": int(ms.size),
        "median_ms": round(float(np.median(ms)), 3),
        "p95_ms": round(float(np.percentile(ms, 95)), 3),
        "mean_ms": round(float(ms.mean()), 3),
        "min_ms": round(float(ms.min()), 3),
        "max_ms": round(float(ms.max()), 3),
    }


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    """Seconds one call ``fn(*args, **kwargs)`` took, and its return value."""
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


class CallTimer:
    """Wraps methods of live objects (instance attributes only) to add up their time and calls."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._undo: list[Callable[[], None]] = []

    def wrap(self, owner: Any, attr: str, label: str | Callable[..., str]) -> None:
        original = getattr(owner, attr)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            name = label(*args, **kwargs) if callable(label) else label
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
                self.calls[name] = self.calls.get(name, 0) + 1

        had_own = attr in vars(owner)
        setattr(owner, attr, wrapper)

        def undo() -> None:
            if had_own:
                setattr(owner, attr, original)
            else:
                delattr(owner, attr)

        self._undo.append(undo)

    def restore(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()

    def per_call_ms(self, runs: int) -> dict[str, dict[str, float]]:
        """Average time and number of calls per ``runs`` (e.g. per search)."""
        return {
            name: {"ms_per_run": round(self.seconds[name] * 1e3 / runs, 3), "calls_per_run": self.calls[name] / runs}
            for name in self.seconds
        }


# -- machine, files, output ---------------------------------------------------------------------
def machine_info() -> dict[str, Any]:
    """What the numbers were measured on (cores, CPU, load, versions)."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for package in ("chromadb", "onnxruntime", "tokenizers", "numpy"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "absent"
    return {
        "code": code_version(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cores": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        "versions": versions,
    }


def code_version() -> dict[str, Any]:
    """The commit measured and which engine files differed from it (read-only git calls)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "memory"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return {"commit": "unknown"}
    changed = [line[3:] for line in dirty.stdout.splitlines() if line.strip()]
    return {"commit": head.stdout.strip() or "unknown", "memory_files_changed_since_commit": changed}


def rss_mb() -> dict[str, float]:
    """Current and peak resident memory of this process in MiB."""
    current = 0.0
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                current = int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rss_mb": round(current, 1), "peak_rss_mb": round(peak, 1)}


def dir_mb(path: Path) -> float:
    """Disk size of a folder in MiB."""
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return round(total / 2**20, 1)


@contextmanager
def temp_home(prefix: str) -> Iterator[Path]:
    """A fresh MARK_HOME under /tmp, deleted afterwards."""
    path = Path(tempfile.mkdtemp(prefix=f"mark-{prefix}-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def write_results(name: str, payload: dict[str, Any]) -> Path:
    """Write ``benchmarks/results/<name>.json`` (git-ignored) and return its path."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    payload.setdefault("machine", {})["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=False, default=str) + "\n")
    return path


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A compact fixed-width table (first column left-aligned, the rest right-aligned)."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        print("  ".join(parts))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def say(message: str) -> None:
    """Progress line on stdout, flushed at once."""
    print(message, flush=True)

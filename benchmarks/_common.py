"""Shared helpers for the benchmarks: statistics, synthetic data, call timers, result files.

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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from memory.models import SEARCHABLE, SHARED_USER, MemoryRecord, MemoryType, Source, Status

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


# -- synthetic text -----------------------------------------------------------------------------
_DRUGS = [
    "tropicamide",
    "atropine",
    "metformin",
    "lisinopril",
    "amoxicillin",
    "warfarin",
    "heparin",
    "insulin glargine",
    "salbutamol",
    "prednisolone",
    "omeprazole",
    "ibuprofen",
    "paracetamol",
    "ciprofloxacin",
    "doxycycline",
    "furosemide",
    "digoxin",
    "amlodipine",
    "atorvastatin",
    "levothyroxine",
    "sertraline",
    "diazepam",
    "morphine",
    "ondansetron",
    "ceftriaxone",
    "vancomycin",
    "clopidogrel",
    "enoxaparin",
    "labetalol",
    "magnesium",
]
_GROUPS = [
    "adults",
    "children under five",
    "pregnant women",
    "elderly patients",
    "patients with renal failure",
    "patients with liver disease",
    "neonates",
    "athletes",
    "diabetic patients",
    "post-operative patients",
    "patients on dialysis",
    "smokers",
    "adolescents",
    "nursing mothers",
    "patients with asthma",
]
_TOPICS = [
    "dosage",
    "side effects",
    "contraindications",
    "interactions",
    "storage",
    "monitoring",
    "first aid",
    "diet",
    "exercise",
    "sleep",
    "vaccination",
    "screening",
    "follow-up visits",
    "lab results",
    "allergies",
]
_PREFS = [
    "short answers",
    "metric units",
    "plain language",
    "bullet points",
    "references to guidelines",
    "answers in Spanish",
    "examples",
    "step-by-step instructions",
    "dose tables",
    "no jargon",
]
_PEOPLE = ["my mother", "my son", "my grandfather", "my wife", "my daughter", "my neighbour", "my patient", "I"]
_CONDITIONS = [
    "hypertension",
    "type 2 diabetes",
    "asthma",
    "migraine",
    "chronic kidney disease",
    "atrial fibrillation",
    "hypothyroidism",
    "depression",
    "osteoarthritis",
    "glaucoma",
    "anaemia",
    "gout",
    "psoriasis",
    "COPD",
]


class SentenceMaker:
    """Varied, unique-on-request sentences in a medical-chatbot domain, per memory type."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self._seen: set[str] = set()

    def _pick(self, items: Sequence[str]) -> str:
        return items[int(self.rng.integers(len(items)))]

    def sentence(self, memory_type: MemoryType) -> str:
        n = int(self.rng.integers(1, 500))
        if memory_type is MemoryType.RESIDUAL:
            forms = [
                f"The usual dose of {self._pick(_DRUGS)} for {self._pick(_GROUPS)} is {n} mg per day.",
                f"{self._pick(_DRUGS).capitalize()} should be avoided in {self._pick(_GROUPS)} with "
                f"{self._pick(_CONDITIONS)}.",
                f"For {self._pick(_CONDITIONS)}, check {self._pick(_TOPICS)} every {n % 12 + 1} months.",
                f"{self._pick(_DRUGS).capitalize()} interacts with {self._pick(_DRUGS)}; "
                f"monitor {self._pick(_TOPICS)}.",
            ]
        elif memory_type is MemoryType.USER_QUESTION:
            forms = [
                f"{self._pick(_PEOPLE).capitalize()} takes {self._pick(_DRUGS)} for {self._pick(_CONDITIONS)}.",
                f"The user prefers {self._pick(_PREFS)} when asking about {self._pick(_TOPICS)}.",
                f"The user asked how {self._pick(_DRUGS)} affects {self._pick(_CONDITIONS)} in {self._pick(_GROUPS)}.",
                f"{self._pick(_PEOPLE).capitalize()} is allergic to {self._pick(_DRUGS)} since {1950 + n % 70}.",
            ]
        else:
            forms = [
                f"The assistant explained that {self._pick(_DRUGS)} {self._pick(_TOPICS)} matter for "
                f"{self._pick(_GROUPS)}.",
                f"The answer recommended asking a pharmacist about {self._pick(_DRUGS)} and {self._pick(_DRUGS)}.",
                f"The assistant said {self._pick(_CONDITIONS)} needs {self._pick(_TOPICS)} review after {n} days.",
                f"The reply listed {n % 9 + 2} options for {self._pick(_CONDITIONS)} including {self._pick(_DRUGS)}.",
            ]
        return forms[int(self.rng.integers(len(forms)))]

    def unique(self, memory_type: MemoryType) -> str:
        """A sentence never returned by ``unique`` before (a suffix breaks rare repeats)."""
        text = self.sentence(memory_type)
        while text in self._seen:
            text = f"{self.sentence(memory_type)[:-1]} (note {int(self.rng.integers(10**6))})."
        self._seen.add(text)
        return text


# -- synthetic memories -------------------------------------------------------------------------
PERSONAL = (MemoryType.USER_QUESTION, MemoryType.LLM_RESPONSE)
_STATUSES = [Status.ACTIVE, Status.PROBATIONARY, Status.SUPERSEDED, Status.ARCHIVED]
_STATUS_P = [0.90, 0.04, 0.04, 0.02]


class VectorPool:
    """Real ONNX MiniLM vectors of a few thousand generated sentences, jittered per memory.

    Bulk-loaded memories get ``normalise(pool[j] + noise)`` (cosine to the pool vector about 0.9), so the
    stored vectors live where MiniLM puts real sentences and ONNX query vectors land among them,
    without paying the embedding cost for every one of 100k memories.
    """

    def __init__(self, embed: Callable[[list[str]], list[list[float]]], maker: SentenceMaker, size: int) -> None:
        self.texts: dict[MemoryType, list[str]] = {}
        self.vectors: dict[MemoryType, np.ndarray] = {}
        per_type = max(1, size // len(MemoryType))
        for memory_type in MemoryType:
            texts = [maker.unique(memory_type) for _ in range(per_type)]
            self.texts[memory_type] = texts
            self.vectors[memory_type] = np.asarray(embed(texts), dtype=np.float32)

    def draw(self, memory_type: MemoryType, count: int, rng: np.random.Generator) -> tuple[list[str], np.ndarray]:
        """``count`` (text, jittered vector) pairs of one type."""
        pool = self.vectors[memory_type]
        picks = rng.integers(len(pool), size=count)
        noise = rng.standard_normal((count, pool.shape[1])).astype(np.float32) * (0.48 / np.sqrt(pool.shape[1]))
        vectors = pool[picks] + noise
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        texts = [self.texts[memory_type][int(i)] for i in picks]
        return texts, vectors


def search_key(partition: str, memory_type: MemoryType, status: Status) -> str:
    """A selective composite key (partition|type|searchable) for the search prototype's ``where``."""
    return f"{partition}|{memory_type.value}|{int(status in SEARCHABLE)}"


def make_record(
    text: str, memory_type: MemoryType, user_id: str, rng: np.random.Generator, status: Status | None = None
) -> MemoryRecord:
    """A plausible stored memory: age up to a year, a few recalls, mostly active.

    It carries one user-metadata key, ``skey`` (stored as ``meta_skey``), used only by the search
    prototype to try a selective composite ``where``; the engine ignores it.
    """
    created = NOW - timedelta(days=float(rng.uniform(0, 365)))
    chosen = status or _STATUSES[int(rng.choice(len(_STATUSES), p=_STATUS_P))]
    partition = SHARED_USER if memory_type is MemoryType.RESIDUAL else user_id
    return MemoryRecord(
        text=text,
        type=memory_type,
        user_id=partition,
        source=Source.SME if memory_type is MemoryType.RESIDUAL else Source.USER,
        recall_count=int(rng.integers(0, 6)),
        veracity=float(rng.uniform(0.5, 0.95)),
        veracity_at=created,
        status=chosen,
        created_at=created,
        updated_at=created,
        metadata={"skey": search_key(partition, memory_type, chosen)},
    )


def skewed_users(user_ids: Sequence[str], every: int) -> list[str]:
    """Every ``every``-th user (0: none) has a skewed type mix, see :func:`build_dataset`."""
    return list(user_ids[every - 1 :: every]) if every else []


def build_dataset(
    pool: VectorPool, users: int, per_user: int, residual: int, seed: int, skew_every: int = 0
) -> tuple[list[MemoryRecord], np.ndarray, list[str]]:
    """``users`` x ``per_user`` personal memories + ``residual`` domain memories.

    Users hold half user_question, half llm_response memories, except every ``skew_every``-th user
    (see :func:`skewed_users`), who holds 5 user_question and ``per_user - 5`` llm_response memories.
    """
    rng = np.random.default_rng(seed)
    user_ids = [f"user-{i:05d}" for i in range(users)]
    skewed = set(skewed_users(user_ids, skew_every))
    records: list[MemoryRecord] = []
    chunks: list[np.ndarray] = []
    for user_id in user_ids:
        questions = 5 if user_id in skewed else per_user // 2
        halves = ((MemoryType.USER_QUESTION, questions), (MemoryType.LLM_RESPONSE, per_user - questions))
        for memory_type, count in halves:
            texts, vectors = pool.draw(memory_type, count, rng)
            records.extend(make_record(t, memory_type, user_id, rng) for t in texts)
            chunks.append(vectors)
    texts, vectors = pool.draw(MemoryType.RESIDUAL, residual, rng)
    records.extend(make_record(t, MemoryType.RESIDUAL, SHARED_USER, rng) for t in texts)
    chunks.append(vectors)
    return records, np.concatenate(chunks), user_ids


def bulk_load(store: Any, records: Sequence[MemoryRecord], vectors: np.ndarray, chunk: int = 4500) -> float:
    """Write records with their vectors straight into the store (no audit events); returns seconds."""
    start = time.perf_counter()
    for i in range(0, len(records), chunk):
        store.put(records[i : i + chunk], vectors[i : i + chunk])
        if (i // chunk) % 5 == 4:
            say(f"    loaded {i + chunk:,} / {len(records):,} ({time.perf_counter() - start:.0f} s)")
    return time.perf_counter() - start

"""``mark doctor``: check every part of the stack and say precisely what is broken.

The store check asks SQLite whether the audit log and Chroma's database are sound before opening
them, says how to recover a damaged one, and shows what crash recovery settled on open. The names
check fails when another installed distribution provides one of mark's top-level names (``agents``
is also the name of ``openai-agents``): whichever is found first on ``sys.path`` wins the import.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from mark.errors import InputError, MarkError
from memory.config import Provider, Settings
from memory.store_health import damaged, sqlite_problem

DISTRIBUTION = "mark-memory"
TOP_LEVEL_NAMES = ("agents", "memory", "prompts", "scenarios", "commands", "mark", "cli")

_PACKAGES = (
    "autogen-agentchat",
    "autogen-core",
    "autogen-ext",
    "chromadb",
    "llama-cpp-python",
    "onnxruntime",
    "tokenizers",
    "tiktoken",
    "openai",
    "pydantic",
    "typer",
)


class Check(BaseModel):
    """One check's result: whether it passed, one line of detail, and what it found (extra fields)."""

    model_config = ConfigDict(extra="allow")

    ok: bool
    detail: str


class DoctorReport(BaseModel):
    """Every check of ``mark doctor``; ``ok`` only when all pass."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    home: str
    checks: dict[str, Check]

    def as_json(self) -> dict[str, Any]:
        """The JSON document of ``mark doctor --json``."""
        return self.model_dump(mode="json")


def _check(fn: Callable[[], tuple[str, dict[str, Any]]]) -> Check:
    try:
        detail, extra = fn()
        return Check(ok=True, detail=detail, **extra)
    except Exception as exc:  # doctor reports every failure instead of stopping at the first
        return Check(ok=False, detail=_one_line(exc))


def _one_line(exc: Exception) -> str:
    """A failure as one line: a mark error's own message, a validation error's first problem."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"invalid {exc.title} ({where}: {first['msg']})"
    text = str(exc) if isinstance(exc, MarkError) else f"{exc.__class__.__name__}: {exc}"
    return " ".join(text.split())


def _model(settings: Settings) -> tuple[str, dict[str, Any]]:
    from agents.local_model import check_model
    from agents.providers import describe_provider

    info = describe_provider(settings)
    if settings.model.provider is not Provider.LOCAL:
        return f"{info['provider']} {info.get('model')} at {info.get('base_url')}", {"provider": info}
    check = check_model(settings.model, settings.models_dir)
    if not check.ok:
        raise RuntimeError(check.detail)
    return f"{check.path} ({check.detail})", {"provider": info, "model": check.model_dump(mode="json")}


def _embedder(settings: Settings) -> tuple[str, dict[str, Any]]:
    from memory.embedder import build_embedder, cosine

    embedder = build_embedder(settings.embedder)
    a, b, c = embedder.embed(
        ["The cat sat on the mat.", "A cat was sitting on a rug.", "Stock markets fell sharply today."]
    )
    near, far = cosine(a, b), cosine(a, c)
    if len(a) != embedder.dimension or not near > far:
        raise RuntimeError(f"self-test failed: dimension {len(a)}, paraphrase {near:.3f} vs unrelated {far:.3f}")
    return f"{embedder.name}, {len(a)} dims, paraphrase {near:.2f} > unrelated {far:.2f}", {"dimension": len(a)}


def _check_files(settings: Settings) -> None:
    """Raise a :class:`~memory.store_health.DamagedStoreError` for a damaged audit log or Chroma database."""
    files = [("audit log", settings.audit_path)]
    if not settings.store.chroma_url:
        files.append(("memory store", settings.store_path / "chroma.sqlite3"))
    for what, path in files:
        problem = sqlite_problem(path)
        if problem is not None:
            raise damaged(what, path, problem, settings.home)


def _store(settings: Settings) -> tuple[str, dict[str, Any]]:
    from memory.engine import MemoryEngine
    from memory.models import SHARED_USER

    _check_files(settings)
    engine = MemoryEngine.open(settings)
    try:
        partitions = engine.store.partitions()
        spaces = {engine.store.space(p) for p in partitions}
        if spaces - {"cosine"}:
            raise RuntimeError(f"collections not in cosine space: {sorted(str(s) for s in spaces)}")
        domain = engine.store.count(SHARED_USER)
        events = engine.audit.count()
        audit_at = getattr(engine.audit, "location", None) or str(engine.audit.path)  # PostgreSQL, else SQLite
        recovered = engine.recovered
        detail = (
            f"{engine.store.mode} at {engine.store.location}: {len(partitions)} collection(s), "
            f"{domain} domain memories, {events} audit events in {audit_at}"
        )
        if any(recovered.values()):
            detail += (
                f"; recovered interrupted writes: {recovered['committed']} committed, "
                f"{recovered['discarded']} discarded"
            )
        extra = {
            "mode": engine.store.mode,
            "location": engine.store.location,
            "collections": len(partitions),
            "audit": audit_at,
        }
        return detail, {**extra, "recovered": recovered}
    finally:
        engine.close()


def _tokens(_: Settings) -> tuple[str, dict[str, Any]]:
    from memory.tokens import count_tokens

    n = count_tokens("Concentration of tropicamide: 0.01")
    return f"tiktoken cl100k_base offline, sample = {n} tokens", {}


def _versions(_: Settings) -> tuple[str, dict[str, Any]]:
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "missing"
    missing = [n for n, v in versions.items() if v == "missing"]
    if missing:
        raise RuntimeError(f"missing packages: {', '.join(missing)}")
    return ", ".join(f"{n} {v}" for n, v in versions.items()), {"versions": versions}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def name_clashes() -> dict[str, list[str]]:
    """The top-level names of mark that another distribution on ``sys.path`` also installs, with its name."""
    found = importlib.metadata.packages_distributions()
    clashes: dict[str, list[str]] = {}
    for name in TOP_LEVEL_NAMES:
        others = sorted({d for d in found.get(name, []) if _normalized(d) != DISTRIBUTION})
        if others:
            clashes[name] = others
    return clashes


def _names(_: Settings) -> tuple[str, dict[str, Any]]:
    clashes = name_clashes()
    if clashes:
        listed = "; ".join(f"{name} (also from {', '.join(dists)})" for name, dists in clashes.items())
        raise InputError(
            f"another installed distribution provides mark's top-level names: {listed}; "
            "uninstall it, or install mark-memory in a virtual environment of its own"
        )
    return f"no other distribution provides {', '.join(TOP_LEVEL_NAMES)}", {}


def run_checks(settings: Settings) -> DoctorReport:
    """Run every check; ``ok`` is true only when all pass."""
    checks = {
        "model": _check(lambda: _model(settings)),
        "embedder": _check(lambda: _embedder(settings)),
        "store": _check(lambda: _store(settings)),
        "tokens": _check(lambda: _tokens(settings)),
        "packages": _check(lambda: _versions(settings)),
        "names": _check(lambda: _names(settings)),
    }
    return DoctorReport(ok=all(c.ok for c in checks.values()), home=str(settings.home), checks=checks)

"""``mark doctor``: check every part of the stack and say precisely what is broken."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import Any

from memory.config import Provider, Settings

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


def _check(fn: Callable[[], tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    try:
        detail, extra = fn()
        return {"ok": True, "detail": detail, **extra}
    except Exception as exc:  # doctor reports every failure instead of stopping at the first
        return {"ok": False, "detail": f"{exc.__class__.__name__}: {exc}"}


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


def _store(settings: Settings) -> tuple[str, dict[str, Any]]:
    from memory.engine import MemoryEngine
    from memory.models import SHARED_USER

    engine = MemoryEngine.open(settings)
    try:
        partitions = engine.store.partitions()
        spaces = {engine.store.space(p) for p in partitions}
        if spaces - {"cosine"}:
            raise RuntimeError(f"collections not in cosine space: {sorted(str(s) for s in spaces)}")
        domain = engine.store.count(SHARED_USER)
        events = engine.audit.count()
        detail = (
            f"{engine.store.mode} at {engine.store.location}: {len(partitions)} collection(s), "
            f"{domain} domain memories, {events} audit events"
        )
        return detail, {"mode": engine.store.mode, "location": engine.store.location, "collections": len(partitions)}
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


def run_checks(settings: Settings) -> dict[str, Any]:
    """Run every check; ``ok`` is true only when all pass."""
    checks = {
        "model": _check(lambda: _model(settings)),
        "embedder": _check(lambda: _embedder(settings)),
        "store": _check(lambda: _store(settings)),
        "tokens": _check(lambda: _tokens(settings)),
        "packages": _check(lambda: _versions(settings)),
    }
    return {"ok": all(c["ok"] for c in checks.values()), "home": str(settings.home), "checks": checks}

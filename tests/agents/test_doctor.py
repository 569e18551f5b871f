"""``mark doctor``: a clash of top-level names, a damaged store with the fix, and crash recovery shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.doctor import name_clashes, run_checks
from memory.audit import EventKind
from memory.config import Settings
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.models import MemoryType
from tests.conftest import NOW


def fake_distribution(folder: Path, name: str, top_level: str) -> None:
    """An installed distribution as pip leaves it: a ``*.dist-info`` with METADATA, RECORD and top_level.txt."""
    package = folder / top_level
    package.mkdir()
    (package / "__init__.py").write_text('"""Someone else\'s package."""\n', encoding="utf-8")
    info = folder / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "top_level.txt").write_text(f"{top_level}\n", encoding="utf-8")
    (info / "RECORD").write_text(
        f"{top_level}/__init__.py,,\n{info.name}/METADATA,,\n{info.name}/top_level.txt,,\n{info.name}/RECORD,,\n",
        encoding="utf-8",
    )


def test_no_other_distribution_provides_marks_names_here() -> None:
    assert name_clashes() == {}


def test_another_distribution_providing_agents_fails_doctor_in_one_line(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    fake_distribution(site, "openai-agents-lookalike", "agents")
    monkeypatch.syspath_prepend(str(site))
    assert name_clashes() == {"agents": ["openai-agents-lookalike"]}
    report = run_checks(settings).as_json()
    names = report["checks"]["names"]
    assert report["ok"] is False and names["ok"] is False
    assert names["detail"] == (
        "another installed distribution provides mark's top-level names: agents (also from openai-agents-lookalike); "
        "uninstall it, or install mark-memory in a virtual environment of its own"
    )
    assert [n for n, c in report["checks"].items() if not c["ok"]] == ["names"]


@pytest.mark.parametrize("damaged_file", ["audit.sqlite3", "chroma/chroma.sqlite3"])
def test_a_damaged_store_is_reported_with_what_to_do(settings: Settings, damaged_file: str) -> None:
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder())
    engine.close()
    path = settings.home / damaged_file
    path.write_bytes(b"not a database at all\n" * 100)
    store = run_checks(settings).as_json()["checks"]["store"]
    assert store["ok"] is False
    assert store["detail"] == (
        f"the {'audit log' if damaged_file == 'audit.sqlite3' else 'memory store'} {path} is damaged "
        f"(file is not a database): move {settings.home} away, then restore your last export with "
        "`mark memory import --restore FILE` (or start empty)"
    )


def test_doctor_shows_what_crash_recovery_settled(settings: Settings) -> None:
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder())
    kept = engine.add("alice takes her coffee without sugar", MemoryType.USER_QUESTION, "alice", now=NOW).record
    # a write interrupted after its audit event: one the store has (rev 1), one it never got
    engine.audit.append(kept.id, EventKind.CREATE, NOW, kept.revision, "test", {})
    engine.audit.append("never-written", EventKind.CREATE, NOW, 1, "test", {})
    engine.close()
    store = run_checks(settings).as_json()["checks"]["store"]
    assert store["ok"] is True and store["recovered"] == {"committed": 1, "discarded": 1}
    assert store["detail"].endswith("; recovered interrupted writes: 1 committed, 1 discarded")

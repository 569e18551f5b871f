"""The dependency direction that import-linter cannot express: nothing imports ``cli`` or ``tests``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["memory", "prompts", "agents", "scenarios"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_package_imports_cli_or_tests() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if _imports(path) & {"cli", "tests"}
    ]
    assert offenders == []


def test_only_the_store_imports_chromadb() -> None:
    importers = [
        str(path.relative_to(ROOT))
        for package in [*PACKAGES, "benchmarks"]
        for path in (ROOT / package).rglob("*.py")
        if "chromadb" in _imports(path)
    ]
    assert importers == ["memory/store.py"]


def test_memory_never_imports_autogen() -> None:
    assert all(
        not any(name.startswith("autogen") for name in _imports(path)) for path in (ROOT / "memory").rglob("*.py")
    )

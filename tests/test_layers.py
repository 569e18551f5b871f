"""The dependency direction that import-linter cannot express: nothing imports ``cli`` or ``tests``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["mark", "memory", "prompts", "agents", "scenarios", "server", "commands"]


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
        path.relative_to(ROOT).as_posix()
        for package in [*PACKAGES, "benchmarks"]
        for path in (ROOT / package).rglob("*.py")
        if "chromadb" in _imports(path)
    ]
    assert importers and all(path.startswith("memory/store/") for path in importers), importers


def test_memory_never_imports_autogen() -> None:
    assert all(
        not any(name.startswith("autogen") for name in _imports(path)) for path in (ROOT / "memory").rglob("*.py")
    )


def test_the_facade_loads_nothing_and_resolves_every_public_name() -> None:
    """``import mark`` imports none of the other packages; each public name comes from its module."""
    import subprocess
    import sys

    heavy = "{'agents', 'memory', 'scenarios', 'prompts', 'chromadb', 'autogen_core'}"
    probe = f"import sys, mark; print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy}))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
    import mark

    for name in mark.__all__:
        value = getattr(mark, name)
        assert getattr(value, "__name__", name) == name
    assert issubclass(mark.InputError, mark.MarkError) and issubclass(mark.InputError, ValueError)

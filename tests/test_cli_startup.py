"""The command line starts light: help and the memory commands import no model stack they do not use.

The import checks run in a fresh interpreter (``sys.modules`` of the test process already holds
everything) and assert on the set of loaded modules, not on timings (``benchmarks/bench_startup.py``
times them). The groups that load on first use are checked in-process through ``cli.main``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cli

ROOT = Path(__file__).resolve().parent.parent
# what no help screen may load; the memory commands may load chromadb (the store), nothing else here
MODEL_STACK = ("autogen_core", "autogen_agentchat", "autogen_ext", "llama_cpp", "matplotlib", "openai", "tiktoken")
NOT_FOR_HELP = ("chromadb", *MODEL_STACK)

PROBE = """
import contextlib, io, json, sys
import cli
for argv in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    if code != 0:
        raise SystemExit(f"mark {' '.join(argv)} exited {code}")
print(json.dumps(sorted(sys.modules)))
"""


def loaded_after(*argvs: list[str], home: Path) -> set[str]:
    """Every module a fresh interpreter holds after ``import cli`` and running each argv through ``cli.main``."""
    # this checkout's cli first (not another one the venv may point at); no mark.toml from the cwd
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "MARK_HOME": str(home), "MARK_EMBEDDER": "hashing", "PYTHONPATH": path}
    env.pop("MARK_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(argvs))],
        cwd=home.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def top_level(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The packages of ``names`` that ``modules`` holds (a package counts when any of its modules loaded)."""
    return sorted({m.split(".")[0] for m in modules} & set(names))


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["memory", "--help"], ["review", "--help"], ["lifecycle", "--help"], ["scenario", "--help"]],
    ids=lambda argv: " ".join(argv),
)
def test_help_imports_no_store_and_no_model_stack(argv: list[str], tmp_path: Path) -> None:
    assert top_level(loaded_after(argv, home=tmp_path / "home"), NOT_FOR_HELP) == []


def test_top_level_help_lists_the_command_groups_without_importing_them(tmp_path: Path) -> None:
    modules = loaded_after(["--help"], home=tmp_path / "home")
    assert "cli" in modules
    assert {"commands.memory_cmds", "commands.review_cmds"}.isdisjoint(modules)


def test_memory_add_and_search_load_the_store_but_no_model_stack(tmp_path: Path) -> None:
    add = ["memory", "add", "Tropicamide 1% dilates the pupil", "--user", "alice"]
    modules = loaded_after(add, ["memory", "search", "tropicamide", "--user", "alice"], home=tmp_path / "home")
    assert "chromadb" in modules and "commands.memory_cmds" in modules  # the commands really ran
    assert top_level(modules, MODEL_STACK) == []


def test_a_lazy_group_shows_its_help_and_commands_once_loaded(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["memory", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "Add, search, inspect and maintain memories." in shown
    for command in ("add", "search", "show", "list", "feedback", "forget", "export", "import", "maintain", "build"):
        assert f" {command} " in shown
    assert cli.main(["review", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "The human review queue: approve, edit or reject pending memories." in shown
    assert all(f" {command} " in shown for command in ("list", "show", "approve", "edit", "reject"))


def test_a_mistyped_command_of_a_lazy_group_is_one_error_line_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["memory", "serch", "tropicamide"]) == 2
    assert capsys.readouterr().err == "error: No such command 'serch'. Did you mean 'search'?\n"

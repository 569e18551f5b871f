"""End to end on the REAL llama.cpp path with the tiny SmolLM2 GGUF (content meaningless, path real)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.building import BuildState, Turn
from agents.providers import build_client
from agents.team import build_memories
from memory.config import load_settings
from memory.engine import MemoryEngine
from memory.models import Source
from tests.agents.conftest import SMOLLM2_HINT, find_smollm2

SMOLLM2 = find_smollm2()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(SMOLLM2 is None, reason=f"SmolLM2 test model not installed: {SMOLLM2_HINT}"),
]


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "MARK_HOME": str(tmp_path / "home"),
        "MARK_MODEL_PATH": str(SMOLLM2),
        "MARK_MAX_TOKENS": "96",
        "MARK_THREADS": "1",
        "MARK_EMBEDDER": "onnx",
    }


async def test_memory_building_team_on_real_llamacpp(tmp_path: Path) -> None:
    settings = load_settings(env=_env(tmp_path))
    engine = MemoryEngine.open(settings)
    try:
        turns = [
            Turn(role="user", content="Concentration of tropicamide: A) 0.01 B) 0.02 C) 0.03 D) 0.04"),
            Turn(role="assistant", content="None of the options is a typical strength."),
            Turn(role="sme", content="0.5%-1% is 0.005-0.01 as a decimal, so the answer is A) 0.01."),
        ]
        state = BuildState(turns, "sme-1", source=Source.SME, evidence="Tropicamide drops are 0.5% to 1%.")
        await build_memories(engine, build_client(settings), state)
        report = state.report()
        assert report.usage.total.calls >= 4  # three extractors and the fact check really ran
        assert [t.split(":")[0] for t in state.trail][:3] == [
            "extract_residual",
            "extract_user_question",
            "extract_llm_response",
        ]
        stored = {r.id for r in engine.list()}
        for outcome in state.outcomes:  # everything reported as stored is stored, nothing else
            assert (outcome.memory_id in stored) == (outcome.action not in {"rejected", "dropped"})
        assert len(stored) == len({o.memory_id for o in state.outcomes if o.memory_id})
    finally:
        engine.close()


def test_mark_demo_through_the_entry_point(tmp_path: Path) -> None:
    mark = Path(sys.executable).with_name("mark")
    env = {**os.environ, **_env(tmp_path)}
    out = tmp_path / "run"
    proc = subprocess.run(
        [str(mark), "demo", "--out", str(out)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["stages_run"] == [1, 2, 3, 4]
    assert report["model"]["threads"] == "1"  # MARK_THREADS wins over the demo's all-cores default
    assert len(report["stage1"]["records"]) == 4 and "accuracy" in report["stage3"]
    assert "report:" in proc.stdout and (out / "report.md").is_file()

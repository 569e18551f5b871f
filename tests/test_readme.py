"""The README's commands and its AutoGen example are the ones that work."""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _bash_blocks() -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", README, re.S)]


def test_two_commands_and_ci_runs_the_test_one() -> None:
    blocks = _bash_blocks()
    assert blocks[:2] == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert [line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))] == [blocks[1]]
    demo = (ROOT / "scripts" / "demo.sh").read_text(encoding="utf-8").strip().splitlines()
    assert demo[-1] == '.venv/bin/mark demo "$@"' and ".venv/bin/mark doctor" in demo


def test_both_scripts_build_llama_cpp_without_the_amx_kernels() -> None:
    # session 14: on a CPU that reports Intel AMX, llama.cpp built with -march=native crashed at the first
    # generation (segmentation fault in ggml_backend_amx_mul_mat); the flags leave those kernels out
    for script in ("demo.sh", "test.sh"):
        assert ". scripts/llama_build_flags.sh" in (ROOT / "scripts" / script).read_text(encoding="utf-8")
    shown = "; ".join(f'echo "${name}"' for name in ("CMAKE_ARGS", "CFLAGS", "CXXFLAGS"))
    env = {"PATH": "/usr/bin:/bin", "CFLAGS": "-O2"}
    out = subprocess.run(
        ["bash", "-c", f". scripts/llama_build_flags.sh; {shown}"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    cmake, cflags, cxxflags = out.stdout.splitlines()
    assert cmake == "-DLLAVA_BUILD=OFF"
    compiler = subprocess.run(["bash", "-c", "command -v cc"], capture_output=True, text=True).returncode == 0
    if platform.machine() == "x86_64" and compiler:
        assert cflags == "-O2 -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"  # the caller's flags are kept
        assert cxxflags == "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    else:
        assert (cflags, cxxflags) == ("-O2", "")


def test_readme_autogen_example_runs(tmp_path: Path) -> None:
    block = README.split("<!-- readme-example: this block is executed by tests/test_readme.py -->")[1]
    code = re.search(r"```python\n(.*?)```", block, re.S)
    assert code is not None
    (tmp_path / "replies.json").write_text(json.dumps(["Tropicamide drops are 0.5% to 1%."]))
    env = {
        "MARK_HOME": str(tmp_path / "home"),
        "MARK_PROVIDER": "replay",
        "MARK_EMBEDDER": "onnx",
        "MARK_REPLAY_FILE": str(tmp_path / "replies.json"),
        "PATH": str(Path(sys.executable).parent),
    }
    proc = subprocess.run(
        [sys.executable, "-c", code.group(1)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Tropicamide drops are 0.5% to 1%."

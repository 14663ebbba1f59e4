#!/usr/bin/env bash
# Lint, type-check, layering contracts, then the test suite. Run from the repository root
# after installing with `pip install -e '.[dev]'` into .venv.
set -euo pipefail
BIN=${BIN:-.venv/bin}
"$BIN/ruff" check src tests bench scripts examples
"$BIN/ruff" format --check src tests bench scripts examples
"$BIN/mypy"
"$BIN/lint-imports"
"$BIN/python" -m pytest -q "$@"

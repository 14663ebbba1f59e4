#!/usr/bin/env bash
# Lint, type-check, layering contracts, then the test suite. Run from the repository root
# after installing with `pip install -e '.[dev]'` into .venv.
set -euo pipefail
BIN=${BIN:-.venv/bin}
"$BIN/ruff" check src tests bench scripts examples
"$BIN/ruff" format --check src tests bench scripts examples
"$BIN/mypy"
"$BIN/lint-imports"
# The sans-IO core is covered by its own tests, without an event loop: a branch-coverage floor.
"$BIN/python" -m pytest -q -p no:cacheprovider tests/protocol --cov=mcpkit.protocol \
  --cov-branch --cov-fail-under=95 --cov-report=term:skip-covered --no-cov-on-fail
"$BIN/python" -m pytest -q "$@"

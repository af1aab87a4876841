#!/usr/bin/env bash
# Runs every suite (lit, GoogleTest, pytest, the wheel), reports each, fails
# if any fails.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
PY=.venv/bin/python
status=0
echo "== lit"; .venv/bin/lit -sv "$BUILD_DIR/test" || status=1
echo "== GoogleTest"; (cd "$BUILD_DIR" && ctest --output-on-failure) || status=1
echo "== pytest"; $PY -m pytest -q python/tests || status=1
# The self-contained wheel: built (build-wheel/, incremental), checked,
# installed into a fresh venv and run (README, "The wheel").
echo "== wheel"; scripts/wheel_check.sh "$BUILD_DIR/wheel-check" || status=1
exit $status

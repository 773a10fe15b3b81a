#!/usr/bin/env bash
# Static checks the test command runs first (README: `make test`), each one able to fail CI:
# lint, formatting, the one-way import contract (pyproject [tool.importlinter]), types.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "ruff check";          ruff check .
echo "ruff format --check"; ruff format --check .
echo "import contract";     lint-imports --no-cache
echo "mypy";                mypy

#!/usr/bin/env bash
# Command two: install, then the whole test suite (benchmarks included: they print
# their figures), ruff check, ruff format --check, mypy, lint-imports (the layer
# contract) and clang-format. Runs every step, then exits non-zero if any failed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/install.sh" || exit 1
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
cd "$ROOT" || exit 1

failed=()
run() {
  printf '\n== %s\n' "$*"
  "$@" || failed+=("$*")
}

# The tests, then the benchmarks with their output shown (-s): they print figures.
# tests/bench_*.py are named on the command line because pytest's default file
# pattern (test_*.py) leaves them out of a plain `pytest` run while developing.
mapfile -t BENCHES < <(ls tests/bench_*.py 2>/dev/null)
run "$PY" -m pytest -r fEsxX tests
run "$PY" -m pytest -s -r fEsxX "${BENCHES[@]}"
run ruff check .
run ruff format --check .
run "$PY" -m mypy
# the layer contract ([tool.importlinter] in pyproject.toml): no import cycles between
# stages, lower stages never import higher ones, the library never imports the CLI
run lint-imports
# one C style (.clang-format) for the kit's own C and C++; tests/data holds a team's
# sources, in their own style
mapfile -t C_SOURCES < <(git ls-files '*.c' '*.h' '*.cpp' ':!tests/data')
run clang-format-19 --dry-run --Werror "${C_SOURCES[@]}"

if [ "${#failed[@]}" -gt 0 ]; then
  printf '\nFAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
printf '\nall checks passed\n'

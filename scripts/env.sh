# Sourced by the other scripts: use the repository's .venv when install.sh made one
# (Debian's own python3 is "externally managed"), else the python3 on PATH.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -x "$ROOT/.venv/bin/python" ]; then
  PATH="$ROOT/.venv/bin:$PATH"
  PY="$ROOT/.venv/bin/python"
else
  PY="${PYTHON:-python3}"
fi
export PATH

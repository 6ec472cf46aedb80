#!/usr/bin/env bash
# Install everything the kit needs on a Debian 12 machine; idempotent and quiet,
# and fast (a few seconds) when everything is already there.
#
#   scripts/install.sh        apt: cross toolchains, QEMU, CMake, Ninja, bubblewrap
#                             pip: torch 2.13.0 (CPU), executorch[ethos-u] 1.5.1,
#                                  the kit (editable) with its dev, pack and board extras
#                             venv: ethos-u-vela 5.2.0 (and numpy) alone in
#                                  ~/.cache/ethosu-kit/vela-5.2.0 (the tests compile the
#                                  corpora's TOSA with it too; ExecuTorch pins 5.1.0)
#
# torch is installed first, on its own, pinned; every later pip step runs with a
# constraint file that pins it too, so no dependency can pull another torch build
# (several GB of CUDA packages) from the registry.
#
# Environment: PYTHON (default python3). When that Python is Debian's own
# ("externally managed"), a virtual environment .venv is made in the repository and
# used instead; scripts/env.sh points later commands at it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TORCH_VERSION="2.13.0"
EXECUTORCH_VERSION="1.5.1"
APT_PACKAGES=(
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
  qemu-system-arm clang-19 lld-19 clang-format-19 cmake ninja-build
  gdb-multiarch  # run --probe: GDB drives a board's debug probe (or QEMU's gdbstub)
  chromium  # headless, for the report page tests (tests/test_report.py)
  bubblewrap  # bwrap: `run` confines the emulator to the run's folder (firmware/sandbox.py)
)

say() { printf '[install] %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# -- apt -----------------------------------------------------------------------------
missing_apt() {
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
      || printf '%s\n' "$pkg"
  done
}

PY="${PYTHON:-python3}"
if ! command -v "$PY" >/dev/null 2>&1; then
  APT_PACKAGES+=(python3 python3-venv python3-pip)
fi
externally_managed() {
  "$1" - <<'EOF'
import os, sys, sysconfig
inside_venv = sys.prefix != sys.base_prefix
marker = os.path.join(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED")
sys.exit(0 if os.path.exists(marker) and not inside_venv else 1)
EOF
}
if command -v "$PY" >/dev/null 2>&1 && externally_managed "$PY"; then
  APT_PACKAGES+=(python3-venv python3-pip)
fi

mapfile -t MISSING < <(missing_apt "${APT_PACKAGES[@]}")
if [ "${#MISSING[@]}" -gt 0 ]; then
  say "apt: installing ${MISSING[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  as_root apt-get install -y -qq --no-install-recommends "${MISSING[@]}" >/dev/null
else
  say "apt: all ${#APT_PACKAGES[@]} packages present"
fi

# -- Python environment --------------------------------------------------------------
if externally_managed "$PY"; then
  if [ ! -x "$ROOT/.venv/bin/python" ]; then
    say "python: $PY is managed by Debian; making $ROOT/.venv"
    "$PY" -m venv "$ROOT/.venv"
  fi
  PY="$ROOT/.venv/bin/python"
fi
pip_q() { "$PY" -m pip install --quiet --disable-pip-version-check "$@"; }

# -- torch first, on its own ---------------------------------------------------------
have_version() { # have_version <distribution> <version>
  "$PY" - "$1" "$2" <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    found = version(sys.argv[1])
except PackageNotFoundError:
    sys.exit(1)
sys.exit(0 if found.split("+")[0] == sys.argv[2] else 1)
EOF
}

if have_version torch "$TORCH_VERSION"; then
  say "pip: torch $TORCH_VERSION present"
else
  say "pip: installing torch==$TORCH_VERSION (CPU) on its own"
  pip_q "torch==$TORCH_VERSION"
fi
CONSTRAINTS="$(mktemp)"
trap 'rm -f "$CONSTRAINTS"' EXIT
printf 'torch==%s\n' "$(
  "$PY" -c 'from importlib.metadata import version; print(version("torch"))'
)" >"$CONSTRAINTS"

# -- executorch, then the kit --------------------------------------------------------
if have_version executorch "$EXECUTORCH_VERSION"; then
  say "pip: executorch $EXECUTORCH_VERSION present"
else
  say "pip: installing executorch[ethos-u]==$EXECUTORCH_VERSION"
  pip_q -c "$CONSTRAINTS" "executorch[ethos-u]==$EXECUTORCH_VERSION"
fi

kit_ready() {
  "$PY" - "$ROOT" <<'EOF'
import importlib.util, pathlib, shutil, sys
root = pathlib.Path(sys.argv[1]).resolve()
spec = importlib.util.find_spec("ethosu_kit")
if spec is None or spec.origin is None:
    sys.exit(1)
if pathlib.Path(spec.origin).resolve().parents[1] != root / "codegen":
    sys.exit(1)  # another copy of the kit is installed
for module in ("jinja2", "elftools", "flatbuffers", "rich", "numpy", "pytest", "pytest_benchmark",
               "hypothesis", "mypy", "importlinter", "cmsis_pack_manager", "cmsis_svd",
               "lxml", "serial"):
    if importlib.util.find_spec(module) is None:
        sys.exit(1)
bindir = pathlib.Path(sys.executable).parent
if not ((bindir / "ruff").exists() or shutil.which("ruff")):
    sys.exit(1)
if not ((bindir / "ethosu-kit").exists() or shutil.which("ethosu-kit")):
    sys.exit(1)
EOF
}
if kit_ready; then
  say "pip: ethosu-porting-kit (editable) and its dev/pack/board extras present"
else
  say "pip: installing ethosu-porting-kit (editable) with its dev, pack and board extras"
  pip_q -c "$CONSTRAINTS" -e "$ROOT[dev,pack,board]"
fi

# -- the next Vela, in its own environment -------------------------------------------
# ExecuTorch 1.5.1 pins ethos-u-vela 5.1.0; the Vela users install next is 5.2.0. A clean
# venv holds it alone (no system site packages: nothing of the main environment leaks in),
# and the tests run its `vela` CLI on the TOSA graphs ExecuTorch lowered (tests/vela_next.py).
VELA_NEXT_VERSION="5.2.0"
VELA_NEXT="${XDG_CACHE_HOME:-$HOME/.cache}/ethosu-kit/vela-$VELA_NEXT_VERSION"
vela_next_ready() {
  [ -x "$VELA_NEXT/bin/vela" ] && "$VELA_NEXT/bin/python" -s - "$VELA_NEXT_VERSION" <<'EOF'
import sys
from importlib.metadata import version
sys.exit(0 if version("ethos-u-vela") == sys.argv[1] else 1)
EOF
}
if vela_next_ready; then
  say "venv: ethos-u-vela $VELA_NEXT_VERSION present in $VELA_NEXT"
else
  say "venv: installing ethos-u-vela==$VELA_NEXT_VERSION (and numpy) in $VELA_NEXT"
  rm -rf "$VELA_NEXT"
  mkdir -p "$(dirname "$VELA_NEXT")"
  "$PY" -m venv "$VELA_NEXT"
  "$VELA_NEXT/bin/python" -m pip install --quiet --disable-pip-version-check \
    "ethos-u-vela==$VELA_NEXT_VERSION" numpy
fi

# torch must still be the pinned build: a later step must never have replaced it.
have_version torch "$TORCH_VERSION" || {
  echo "install: torch is no longer $TORCH_VERSION after the installs" >&2
  exit 1
}
say "ready ($("$PY" -c 'import sys; print(sys.executable)'))"

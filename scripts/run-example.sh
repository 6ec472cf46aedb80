#!/usr/bin/env bash
# Command one: the kit's main job end to end on the default board.
#   install -> lower the built-in example model (ethos-u55-128, Shared_Sram)
#   -> gen-firmware for Corstone-300 -> build the bring-up app -> run it in QEMU
#   -> simulate the NPU part on the host -> build the NPU self-test with those vectors
#   (virtual NPU) -> run it in QEMU: the model's own command streams, bit-exact.
# Output in $OUT (default out/example).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/install.sh"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
OUT="${OUT:-$ROOT/out/example}"
mkdir -p "$OUT"

step() { printf '\n== %s\n' "$*"; }

step "lower the example model (ethos-u55-128, Shared_Sram)"
ethosu-kit lower-example --accelerator ethos-u55-128 --memory-mode Shared_Sram -o "$OUT/example.pte"

step "generate the firmware project for corstone-300"
gen-firmware --board corstone-300 --mode Shared_Sram --pte "$OUT/example.pte" \
  --app bringup -o "$OUT/fw"

step "build the bring-up app"
ELF="$(ethosu-kit build "$OUT/fw" --app bringup | tail -n 1)"

step "check the ELF against the plan"
ethosu-kit check-elf "$ELF" --plan "$OUT/fw/memory_plan.json"

step "run it in QEMU (mps3-an547)"
ethosu-kit run "$ELF"

step "simulate the NPU part on the host (inputs and expected outputs per delegate)"
ethosu-kit simulate "$OUT/example.pte" -o "$OUT/vectors.npz"

step "build the NPU self-test with those vectors (virtual Ethos-U in the firmware)"
SELFTEST="$(ethosu-kit build "$OUT/fw" --app selftest --npu virtual --vectors "$OUT/vectors.npz" | tail -n 1)"
ethosu-kit check-elf "$SELFTEST" --plan "$OUT/fw/memory_plan.json"

step "run the self-test in QEMU: every delegate's stream on the NPU, every output byte compared"
ethosu-kit run "$SELFTEST"

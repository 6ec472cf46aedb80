"""Regenerate the checked-in .pte fixtures in this folder from tests/models.py.

    PYTHONPATH=codegen python tests/data/pte/regenerate.py   # from the repository root

Each fixture is a byte copy of the test model the session fixture `pte_<name>` lowers
(tests/conftest.py `lowered_pte`, cached under ~/.cache/ethosu-kit/test-models), so a
unit test on `data_pte_<name>` reads the same program a lowering test does, without
torch or ExecuTorch. SOURCES.json records, per file, the lowering cache key it was
made with and its sha256 (tests/test_pte_fixtures.py checks the bytes against it).
Needs torch and executorch (the `lower` extra) for a model not yet in the cache.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parents[1]
sys.path.insert(0, str(TESTS))

from conftest import cache_key, lowered_pte  # noqa: E402
from models import MODELS  # noqa: E402

# the small ones (a few KB each): too_big (96 KiB) and half_mb (525 KiB) stay lowered-only
CHECKED_IN = (
    "u55_shared",
    "u55_sram_only",
    "u65_dedicated",
    "u85_shared",
    "u85_dedicated",
    "cpu_only",
    "cpu_op",
    "cpu_between",
    "two_delegates",
    "two_io",
    "big_input",
)
SOURCES = HERE / "SOURCES.json"
MAX_BYTES = 16 * 1024


def main() -> int:
    sources: dict[str, dict[str, object]] = {}
    for name in CHECKED_IN:
        src = lowered_pte(name)
        data = src.read_bytes()
        if len(data) > MAX_BYTES:
            print(f"error: {name}: {len(data)} bytes, over {MAX_BYTES}", file=sys.stderr)
            return 1
        shutil.copyfile(src, HERE / f"{name}.pte")
        sources[name] = {
            "cache_key": cache_key(MODELS[name]),
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        }
        print(f"{name}.pte: {len(data)} bytes")
    SOURCES.write_text(json.dumps(sources, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

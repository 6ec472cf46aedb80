"""Benchmark: reading a 0.5 MB .pte, the kit vs upstream's scratch-size script.

Run: `pytest -s tests/bench_inspect.py` (prints the figures). Goal: `ethosu-kit
inspect` at most 0.1x the wall time of executorch's
`backends/arm/scripts/get_ethosu_scratch_from_pte.py` on the same file, in the same
run. Both are timed as a user runs them (a fresh process each time, imports
included), then in-process once everything is imported.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ethosu_kit.pte import read_pte

GOAL = 0.10


def _wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, timeout=300)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@contextlib.contextmanager
def _quiet_fds() -> Iterator[None]:
    """Upstream's reader runs flatc, which writes its usage text to fd 2 itself (not
    through sys.stderr): silence the descriptors so the figures stay readable."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with Path(os.devnull).open("w") as null:
            os.dup2(null.fileno(), 1)
            os.dup2(null.fileno(), 2)
            yield
    finally:
        for fd, old in zip((1, 2), saved, strict=True):
            os.dup2(old, fd)
            os.close(old)


def _in_process(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm: imports and caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _upstream_script() -> Path:
    try:
        import executorch
    except ImportError:
        pytest.skip("the baseline is executorch's script: executorch is not installed")
    script = Path(next(iter(executorch.__path__))) / "backends/arm/scripts"
    return script / "get_ethosu_scratch_from_pte.py"


@pytest.mark.benchmark
def test_inspect_vs_upstream_scratch_script(pte_half_mb: Path) -> None:
    script = _upstream_script()
    pte = str(pte_half_mb)
    exe = shutil.which("ethosu-kit")
    kit_cmd = [exe] if exe else [sys.executable, "-m", "ethosu_kit"]

    upstream = _wall([sys.executable, str(script), pte], runs=3)
    inspect = _wall([*kit_cmd, "inspect", pte], runs=5)
    inspect_json = _wall([*kit_cmd, "inspect", "--json", pte], runs=5)
    read_cold = _wall(
        [sys.executable, "-c", f"from ethosu_kit.pte import read_pte; read_pte({pte!r})"], runs=5
    )

    spec = importlib.util.spec_from_file_location("upstream_scratch", script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def upstream_warm() -> None:
        with _quiet_fds():
            module.get_scratch_from_pte(pte)

    read_warm = _in_process(lambda: read_pte(pte_half_mb), runs=50)
    upstream_in = _in_process(upstream_warm, runs=20)

    size = pte_half_mb.stat().st_size
    print(f"\n.pte: {pte_half_mb.name}, {size:,} bytes")
    print(f"  upstream get_ethosu_scratch_from_pte.py  {upstream * 1e3:9.1f} ms  (fresh process)")
    print(
        f"  ethosu-kit inspect                        {inspect * 1e3:9.1f} ms  "
        f"ratio {inspect / upstream:.3f}  (goal <= {GOAL})"
    )
    print(
        f"  ethosu-kit inspect --json                 {inspect_json * 1e3:9.1f} ms  "
        f"ratio {inspect_json / upstream:.3f}"
    )
    print(
        f"  python -c read_pte(...)                   {read_cold * 1e3:9.1f} ms  "
        f"ratio {read_cold / upstream:.3f}"
    )
    print(
        f"  in process, imports done: read_pte {read_warm * 1e3:.2f} ms, upstream "
        f"{upstream_in * 1e3:.2f} ms, ratio {read_warm / upstream_in:.3f}"
    )

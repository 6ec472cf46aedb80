"""The corpora compiled with the next Vela (ethos-u-vela 5.2.0), alongside ExecuTorch's 5.1.0.

ExecuTorch 1.5.1 pins ethos-u-vela 5.1.0; users who upgrade Vela get 5.2.0 streams.
scripts/install.sh makes a clean venv with 5.2.0 alone (~/.cache/ethosu-kit/vela-5.2.0);
this module runs its `vela` CLI on a model's TOSA graph (the one ExecuTorch lowered and
kept) with the flags ExecuTorch passes, packed into the delegate payload by ExecuTorch's
own `vela_compile` (its call of Vela's `main` goes to the 5.2.0 CLI instead), so the
payload differs from the pte's only by what Vela 5.2.0 emits. Cached beside the lowered
model, keyed by the TOSA graph, the flags, the Vela version and the packer's source.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ethosu_kit.core.writer import file_lock
from ethosu_kit.pte import VelaBlocks, read_pte
from vnpu_models import OpModel, lowered

VERSION = "5.2.0"


def venv() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ethosu-kit" / f"vela-{VERSION}"


def vela() -> Path:
    """The 5.2.0 `vela` CLI, or skip naming how to get it."""
    exe = venv() / "bin" / "vela"
    if not exe.is_file():
        pytest.skip(f"ethos-u-vela {VERSION} is not installed in {venv()} (scripts/install.sh)")
    return exe


class _CliVela:
    """Stands in for `ethosu.vela.vela` inside ExecuTorch's vela_compile: runs the CLI."""

    def __init__(self, exe: Path, listing: Path) -> None:
        self.exe = exe
        self.listing = listing

    def main(self, argv: Sequence[str]) -> int:
        args = [a for a in argv if a]
        done = subprocess.run(
            [str(self.exe), *args], capture_output=True, text=True, check=False, timeout=600
        )
        self.listing.write_text(done.stdout)
        if done.returncode != 0:
            raise RuntimeError(f"vela {VERSION} failed ({done.returncode}): {done.stderr[-2000:]}")
        return 0


def flags(model: OpModel) -> list[str]:
    """The Vela flags ExecuTorch compiled the model's delegate with (its compile spec)."""
    (delegate,) = read_pte(lowered(model) / "model.pte").ethosu_delegates
    assert delegate.ethosu is not None
    return list(delegate.ethosu.flags)


def _path(model: OpModel) -> Path:
    from executorch.backends.arm import arm_vela

    folder = lowered(model)
    h = hashlib.sha256()
    for part in (
        (folder / "out.tosa").read_bytes(),
        " ".join(flags(model)).encode(),
        VERSION.encode(),
        inspect.getsource(arm_vela).encode(),
    ):
        h.update(part + b"\0")
    return folder / f"vela-{VERSION}-{h.hexdigest()[:12]}.bin"


def compiled_path(model: OpModel) -> Path:
    """The 5.2.0 delegate payload of the model's TOSA graph (compiled once, then cached)."""
    exe = vela()
    out = _path(model)
    if out.is_file():
        return out
    with file_lock(out.with_suffix(".lock")):
        if out.is_file():
            return out
        from executorch.backends.arm import arm_vela

        folder = out.parent
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".vela-next-")
        os.close(fd)
        listing = Path(tmp + ".lst")
        saved: Any = arm_vela.vela
        arm_vela.vela = _CliVela(exe, listing)
        try:
            tosa = (folder / "out.tosa").read_bytes()
            args = [*flags(model), "--verbose-register-command-stream"]
            result = arm_vela.vela_compile(tosa, args)
            Path(tmp).write_bytes(result.processed_bytes)
            listing.replace(out.with_suffix(".lst"))
            Path(tmp).replace(out)
        finally:
            arm_vela.vela = saved
            Path(tmp).unlink(missing_ok=True)
            listing.unlink(missing_ok=True)
    return out


def compiled(model: OpModel) -> VelaBlocks:
    from ethosu_kit.pte.vela import parse_vela_blocks

    out = compiled_path(model)
    return parse_vela_blocks(out.read_bytes(), str(out), "forward", 0, lambda key: None)


def same_as_pte(model: OpModel) -> bool:
    """Whether 5.2.0 made the same command stream and weights as the pte's 5.1.0."""
    from ethosu_kit.pte import read_vela_streams

    (old,) = read_vela_streams(lowered(model) / "model.pte")
    new = compiled(model)
    return bool(old.cmd_data == new.cmd_data and old.weight_data == new.weight_data)

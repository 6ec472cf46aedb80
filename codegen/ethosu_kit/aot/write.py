"""`lower-example`'s work: the target checked before torch is imported, and the example
model lowered into a .pte written beside its final name and renamed, so a failed
lowering leaves no half file.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

from ethosu_kit.aot.examples import lower_example
from ethosu_kit.aot.lowering import Target
from ethosu_kit.core.errors import KitError
from ethosu_kit.npu.facts import NPU_MACS, Accelerator, MemoryMode, mode_names


def example_target(accelerator: str, system_config: str | None, memory_mode: str | None) -> Target:
    """The Vela target, its accelerator and memory mode checked (Vela's own names)."""
    try:
        Accelerator.parse(accelerator)
    except ValueError:
        configs = [f"{kind}-<{'|'.join(map(str, macs))}>" for kind, macs in NPU_MACS.items()]
        raise KitError(
            f"--accelerator {accelerator!r} is not an Ethos-U configuration",
            hint=f"use {', '.join(configs[:-1])} or {configs[-1]}",
        ) from None
    if memory_mode is not None:
        try:
            MemoryMode.parse(memory_mode)
        except ValueError:
            raise KitError(
                f"--memory-mode {memory_mode!r} is not a Vela memory mode",
                hint=f"use {mode_names()} (or Dedicated_Sram_384KB ...)",
            ) from None
    return Target(accelerator, system_config, memory_mode)


def write_example(out: Path, target: Target) -> bytes:
    """Lower the example model for `target` into `out`; its bytes."""
    if out.is_dir():
        raise KitError(f"{out}: is a directory; -o takes the .pte file to write")
    # torch's deprecation chatter is not the user's business here
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=out.parent, prefix=out.name + ".", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        try:
            data = lower_example(tmp, target)
        except KitError:
            raise
        except Exception as exc:  # Vela/ExecuTorch reject the target: the user's input
            raise KitError(
                f"lowering for {target.accelerator} failed: {type(exc).__name__}: "
                + (str(exc).splitlines() or [""])[0],
                hint="check --accelerator, --memory-mode and --system-config against "
                "Vela's Arm/vela.ini",
            ) from exc
        tmp.chmod(0o644)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return data

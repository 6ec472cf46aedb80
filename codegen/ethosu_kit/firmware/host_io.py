"""The host side of `ethosu-kit run ELF --inputs … -o out.npz` (docs/running.md).

The firmware (the executor_runner) reads `kit_input_<i>.bin` from the semihosting
working directory and writes `kit_output_<o>.bin` there when its semihosting command
line asks for them (`--kit-inputs`, `--kit-outputs`); with `--kit-outputs` alone it
writes back the `kit_input_<i>.bin` it chose itself (compiled in, or ones), so `-o`
always saves what the outputs were computed from. Here: the program's inputs and
outputs (dtype, shape) from the image's project, the user's arrays checked against
them before the emulator starts, the input files written, and the files the firmware
wrote read back and checked after the run.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_INPUT, MAX_PTE, read_bytes
from ethosu_kit.core.names import PTE_NAME, generated
from ethosu_kit.core.writer import sha256, write_file_atomic
from ethosu_kit.firmware.image import KitImage
from ethosu_kit.firmware.project import ProjectDir
from ethosu_kit.inputs.prepare import Array, Tensor
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.ptd import load_external

INPUTS_FLAG = "--kit-inputs"  # on the semihosting command line: read kit_input_<i>.bin
OUTPUTS_FLAG = "--kit-outputs"  # write kit_output_<o>.bin


def input_name(i: int) -> str:
    return f"kit_input_{i}.bin"


def output_name(o: int) -> str:
    return f"kit_output_{o}.bin"


def _project_pte(image: KitImage) -> Path:
    """The generated/model.pte of the image's project.

    The plan is either the project's own (generated/ beside it) or the copy CMake puts
    beside the ELF (build/<toolchain>/memory_plan.json, or a team's build folder): then the
    project is found among the ELF's parents, or at the pte path the plan recorded. A
    candidate counts only when its sha256 is the one the plan was made for.
    """
    assert image.plan_path is not None
    candidates = [ProjectDir(image.plan_path.parent).pte]
    candidates += [ProjectDir(folder).pte for folder in image.elf.resolve().parents[:5]]
    want = image.plan.model_sha256 if image.plan is not None else ""
    if image.plan is not None and image.plan.model_path:
        candidates.append(Path(image.plan.model_path))
    for pte in candidates:
        if pte.is_file() and (not want or _sha256(pte) == want):
            return pte
    raise KitError(
        f"{image.elf}: --inputs/-o need the program the image was built from, and no "
        f"{generated(PTE_NAME)} near {image.plan_path} or the ELF has the sha256 its plan "
        f"records ({want[:12] or 'none'}…)",
        hint="run the ELF from its generated project (build/<toolchain>/ below it)",
    )


def _sha256(path: Path) -> str:
    return sha256(read_bytes(path, MAX_PTE))


def program_tensors(image: KitImage) -> tuple[list[Tensor], list[Tensor]]:
    """(inputs, outputs) of the program's first method, from the image's project."""
    if image.plan_path is None:
        raise KitError(
            f"{image.elf}: --inputs/-o need the image's project (its memory_plan.json and "
            "generated/model.pte beside the build folder) to know the program's tensors",
            hint="run the ELF where ethosu-kit build put it, copy its "
            "<elf name>.memory_plan.json next to it, or pass --plan <project>/memory_plan.json",
        )
    pte = _project_pte(image)
    model = read_pte(pte, load_external(pte, None))  # a project's .ptd files: beside its pte
    if not model.methods:
        raise KitError(f"{pte}: the program has no method")
    method = model.methods[0]

    def tensors(infos: Sequence[Any], what: str) -> list[Tensor]:
        out = []
        for i, t in enumerate(infos):
            try:
                dtype = np.dtype(t.dtype)
            except TypeError:
                raise KitError(
                    f"{pte}: method '{method.name}' {what} {i} has dtype {t.dtype!r}, "
                    "which run --inputs/-o cannot carry"
                ) from None
            out.append(Tensor(dtype, tuple(int(d) for d in t.shape)))
        return out

    return tensors(method.inputs, "input"), tensors(method.outputs, "output")


def write_inputs(folder: Path, arrays: Sequence[Array]) -> None:
    for i, a in enumerate(arrays):
        write_file_atomic(folder / input_name(i), a.tobytes())


def read_outputs(folder: Path, wants: list[Tensor], elf: Path) -> list[Array]:
    """Each kit_output_<o>.bin the firmware wrote, checked against output o."""
    return [_read_tensor(folder, "output", o, want, elf) for o, want in enumerate(wants)]


def read_inputs(folder: Path, wants: list[Tensor], elf: Path) -> list[Array] | None:
    """Each kit_input_<i>.bin the firmware sent back (run -o without --inputs: the inputs
    it chose), checked against input i; None when it sent none (an image from before the
    protocol had it send them)."""
    if wants and not any((folder / input_name(i)).is_file() for i in range(len(wants))):
        return None
    return [_read_tensor(folder, "input", i, want, elf) for i, want in enumerate(wants)]


def _read_tensor(folder: Path, kind: str, index: int, want: Tensor, elf: Path) -> Array:
    name = input_name(index) if kind == "input" else output_name(index)
    path = folder / name
    if not path.is_file():
        raise KitError(
            f"{elf}: the firmware wrote no {name} ({kind} {index}, {want})",
            hint="run --inputs/-o needs an app that follows the file protocol "
            "(the executor_runner; docs/running.md)",
        )
    size = path.stat().st_size
    if size != want.nbytes:
        raise KitError(f"{elf}: {name} has {size} bytes, {kind} {index} ({want}) has {want.nbytes}")
    data = np.frombuffer(read_bytes(path, MAX_INPUT), dtype=want.dtype.newbyteorder("<"))
    return data.astype(want.dtype).reshape(want.shape)


def format_outputs(outputs: Sequence[Array]) -> str:
    """Every value of every output (run --print-outputs)."""
    lines = []
    for o, a in enumerate(outputs):
        body = np.array2string(a, threshold=sys.maxsize, max_line_width=100)
        lines.append(f"output {o}: {a.dtype} {list(a.shape)}\n{body}")
    return "\n".join(lines) + "\n"

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

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_INPUT, MAX_PTE, read_bytes
from ethosu_kit.core.names import PTE_NAME, generated, program_pte
from ethosu_kit.core.writer import sha256, write_file_atomic
from ethosu_kit.firmware.image import KitImage
from ethosu_kit.firmware.project import ProjectDir
from ethosu_kit.inputs.prepare import Array, Tensor
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.ptd import load_external

INPUTS_FLAG = "--kit-inputs"  # on the semihosting command line: read kit_input_<i>.bin
OUTPUTS_FLAG = "--kit-outputs"  # write kit_output_<o>.bin
PROGRAM_FLAG = "--kit-program="  # run that program of an image of several only
METHOD_FLAG = "--kit-method="  # run that method only
# What --program/--method may be: one word of the semihosting command line, which the
# firmware splits at spaces (`--method "x --kit-inputs"` would have added a flag) into a
# bounded buffer. Program names are C identifiers and methods Python ones in practice.
_WORD = re.compile(r"[!-~]{1,128}\Z")


@dataclass(frozen=True)
class Selection:
    """Which program and method of the image `run` asks the firmware for ("" = every one,
    or the one of a single-program image)."""

    program: str = ""
    method: str = ""

    @property
    def words(self) -> tuple[str, ...]:
        """Its words on the semihosting command line."""
        return tuple(
            f"{flag}{value}"
            for flag, value in ((PROGRAM_FLAG, self.program), (METHOD_FLAG, self.method))
            if value
        )


def select(image: KitImage, program: str | None, method: str | None, io: bool) -> Selection:
    """The program and method `run --program/--method` name, checked against the image's
    plan before the emulator starts: an unknown name is one error line naming the ones
    there are; --inputs/-o (`io`) on an image of several programs need one named."""
    for flag, value in (("--program", program), ("--method", method)):
        if value is not None and not _WORD.fullmatch(value):
            raise KitError(
                f"{image.elf}: {flag} {value[:80]!r}: not a name (printable, no spaces, "
                "at most 128 characters)"
            )
    plan = image.plan
    if plan is None or not plan.multi:
        if program is not None:
            raise KitError(
                f"{image.elf}: --program {program}: this image has one program",
                hint="drop --program (--method names a method of it)",
            )
        return Selection("", method or "")
    names = [p.name for p in plan.programs]
    if program is None:
        if io:
            raise KitError(
                f"{image.elf}: --inputs/-o: this image has {len(names)} programs; name one",
                hint=f"--program {names[0]} (its programs: {', '.join(names)})",
            )
        if method is not None:
            raise KitError(
                f"{image.elf}: --method {method}: name its program too",
                hint=f"--program NAME (its programs: {', '.join(names)})",
            )
        return Selection()
    if program not in names:
        raise KitError(
            f"{image.elf}: no program named {program!r} in this image",
            hint=f"its programs are {', '.join(names)}",
        )
    methods = plan.program(program).methods
    if method is not None and method not in methods:
        raise KitError(
            f"{image.elf}: program {program} has no method {method!r}",
            hint=f"its methods are {', '.join(methods)}",
        )
    if io and method is None and len(methods) > 1:
        raise KitError(
            f"{image.elf}: --inputs/-o: program {program} has {len(methods)} methods; name one",
            hint=f"--method {methods[0]} (its methods: {', '.join(methods)})",
        )
    return Selection(program, method or "")


def input_name(i: int) -> str:
    return f"kit_input_{i}.bin"


def output_name(o: int) -> str:
    return f"kit_output_{o}.bin"


def _program_pte(image: KitImage, name: str) -> Path:
    """generated/<name>.pte of an image of several programs, with the sha256 its plan has."""
    assert image.plan is not None
    candidates = [project.generated / program_pte(name) for project in _projects_near(image)]
    want = image.plan.program(name).sha256
    return _pte_with(image, candidates, want, f"program {name}'s .pte", program_pte(name))


def _project_pte(image: KitImage) -> Path:
    """The generated/model.pte of the image's project.

    The plan is either the project's own (generated/ beside it) or the copy CMake puts
    beside the ELF (build/<toolchain>/memory_plan.json, or a team's build folder): then the
    project is found among the ELF's parents, or at the pte path the plan recorded. A
    candidate counts only when its sha256 is the one the plan was made for.
    """
    candidates = [project.pte for project in _projects_near(image)]
    want = image.plan.model_sha256 if image.plan is not None else ""
    if image.plan is not None and image.plan.model_path:
        candidates.append(Path(image.plan.model_path))
    return _pte_with(image, candidates, want, "the program the image was built from", PTE_NAME)


def _projects_near(image: KitImage) -> list[ProjectDir]:
    """Where the image's project may be: its plan's folder, then the ELF's parents (the
    build folder, build/<toolchain>/, lies below the project)."""
    assert image.plan_path is not None
    return [ProjectDir(f) for f in (image.plan_path.parent, *image.elf.resolve().parents[:5])]


def _pte_with(image: KitImage, candidates: Sequence[Path], want: str, what: str, name: str) -> Path:
    """The first of `candidates` whose sha256 is `want` (any file, when the plan records
    none); an error naming `what` --inputs/-o need and generated/`name` otherwise."""
    for pte in candidates:
        if pte.is_file() and (not want or _sha256(pte) == want):
            return pte
    raise KitError(
        f"{image.elf}: --inputs/-o need {what}, and no {generated(name)} near "
        f"{image.plan_path} or the ELF has the sha256 its plan records ({want[:12] or 'none'}…)",
        hint="run the ELF from its generated project (build/<toolchain>/ below it)",
    )


def _sha256(path: Path) -> str:
    return sha256(read_bytes(path, MAX_PTE))


def program_tensors(
    image: KitImage, selection: Selection = Selection()
) -> tuple[list[Tensor], list[Tensor]]:
    """(inputs, outputs) of the selected method (else the program's first), from the
    image's project."""
    if image.plan_path is None:
        raise KitError(
            f"{image.elf}: --inputs/-o need the image's project (its memory_plan.json and "
            "generated/model.pte beside the build folder) to know the program's tensors",
            hint="run the ELF where ethosu-kit build put it, copy its "
            "<elf name>.memory_plan.json next to it, or pass --plan <project>/memory_plan.json",
        )
    pte = _program_pte(image, selection.program) if selection.program else _project_pte(image)
    model = read_pte(pte, load_external(pte, None))  # a project's .ptd files: beside its pte
    if not model.methods:
        raise KitError(f"{pte}: the program has no method")
    method = model.methods[0]
    if selection.method:
        named = [m for m in model.methods if m.name == selection.method]
        if not named:
            raise KitError(
                f"{pte}: no method {selection.method!r}",
                hint=f"its methods are {', '.join(m.name for m in model.methods)}",
            )
        method = named[0]

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

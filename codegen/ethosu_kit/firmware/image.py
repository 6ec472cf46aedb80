"""What a firmware ELF is, before anything runs it: a kit image, and for which board.

`identify(elf)` proves, in this order, each with a one-line reason when it fails:
the path is a regular file (not a FIFO, a device or a folder; files.open_regular),
an ELF, 32-bit, little-endian, for Arm (EM_ARM), an executable; it carries the
kit's `.kit.info` section (sdk/src/kit_info.c: board, mode, NPU, MACs); and its
board is known: the board file recorded in the project's memory_plan.json beside
the image (a board folder of the user's), else a built-in board of that name. An
image for an unknown board is refused, never run on a default machine. The plan is
the image's own (find_plan): .kit.info names the program (the .pte's sha256) and the
memory mode, and a plan for another is never taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ethosu_kit.board.loader import builtin_boards, load_board, stand_in_board
from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_ELF, open_regular
from ethosu_kit.firmware.elf import ELF_ERRORS, HEADER_BYTES, read_elf
from ethosu_kit.firmware.elf import check_header as elf_header
from ethosu_kit.firmware.elf_check import load_plan, plan_candidates, plan_near
from ethosu_kit.npu.facts import Accelerator
from ethosu_kit.plan.types import MemoryPlan

_BUILD_HINT = "run an image built by `ethosu-kit build DIR` (it records its board in .kit.info)"


@dataclass(frozen=True)
class KitImage:
    elf: Path
    info: dict[str, str]  # the key=value lines of .kit.info
    board: Board
    plan_path: Path | None  # the memory_plan.json beside it, when there is one
    plan: MemoryPlan | None = None  # that plan, typed
    # PT_LOAD segments with bytes in memory: (address, bytes in memory, bytes in the file)
    segments: tuple[tuple[int, int, int], ...] = ()

    @property
    def _accelerator(self) -> Accelerator | None:
        return self.plan.accelerator if self.plan is not None else None

    @property
    def npu_kind(self) -> str:
        """ "ethos-u55" … from .kit.info, or the plan's accelerator; "" when neither says."""
        kind = self.info.get("npu", "")
        if not kind and self._accelerator is not None:
            kind = self._accelerator.kind
        return kind.lower()

    @property
    def npu_macs(self) -> int | None:
        """The NPU's MACs per cycle the image was built for (.kit.info, else the plan)."""
        text = self.info.get("macs", "")
        if not text and self._accelerator is not None:
            text = str(self._accelerator.macs)
        return int(text) if text.isdigit() and int(text) > 0 else None

    @property
    def mode(self) -> str:
        return self.info.get("mode", "") or (self.plan.mode.value if self.plan else "")


def check_header(elf: Path, head: bytes) -> None:
    """A KitError saying what `elf` is when it is not a 32-bit little-endian Arm executable."""
    elf_header(elf, head, _BUILD_HINT)


def read_kit_info(elf: Path) -> dict[str, str]:
    """The ELF's `.kit.info` lines; a KitError for anything that is not a kit image."""
    return _read(elf)[0]


def _read(elf: Path) -> tuple[dict[str, str], tuple[tuple[int, int, int], ...]]:
    """(.kit.info lines, loadable segments) of a kit image; a KitError for anything else."""
    with open_regular(elf, MAX_ELF) as (f, _size):
        check_header(elf, f.read(HEADER_BYTES))
        f.seek(0)
        try:
            image = read_elf(f, (".kit.info",), symbols=False)
        except ELF_ERRORS as exc:
            raise KitError(f"{elf}: a damaged ELF ({exc})") from None
    data = image.data.get(".kit.info")
    segments = tuple((s.paddr, s.memsz, s.filesz) for s in image.segments if s.memsz > 0)
    if data is None:
        raise KitError(
            f"{elf}: not a kit image (no .kit.info section says which board it is for)",
            hint=_BUILD_HINT,
        )
    text = data.split(b"\0", 1)[0].decode("utf-8", "replace")
    info: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            info[key.strip()] = value.strip()
    if not info.get("board"):
        raise KitError(f"{elf}: its .kit.info names no board", hint=_BUILD_HINT)
    return info, segments


def _board_of(elf: Path, name: str, plan: MemoryPlan | None, plan_path: Path | None) -> Board:
    source = plan.board.source if plan is not None else ""
    if plan is not None and plan.board.name == name:
        # the board file when it is still there (the user may have fixed it since),
        # else the typed board the plan recorded
        board = load_board(Path(source)) if Path(source).is_file() else plan.board
        if plan.board.qemu_layout and not board.qemu_layout:
            board = stand_in_board(board)  # generated with --qemu-stand-in
        return board
    for board in builtin_boards():
        if name == board.name:
            return board
    if plan is not None and plan_path is not None:
        raise _wrong_plan(elf, name, plan_path, plan.board.name)
    raise KitError(
        f"{elf}: built for board {name!r}, which is not a built-in board, and no "
        f"memory_plan.json of its project is beside it",
        hint=f"{plan_copy_hint(elf)}, or pass --plan <project>/memory_plan.json",
    )


def plan_copy_hint(elf: Path) -> str:
    """How to bring an ELF's plan along. The build leaves it beside the ELF named after
    the ELF as built (build/<toolchain>/<app>.memory_plan.json), and the copy must be named
    after the ELF's name now (`<elf name>.memory_plan.json` is what is looked for): for an
    ELF renamed on the way, those differ. .kit.info's `app` says the name it was built as."""
    try:
        app = read_kit_info(elf).get("app", "")
    except KitError:
        app = ""
    built = f"{app}.memory_plan.json" if app else "<name as built>.memory_plan.json"
    renamed = "" if app == elf.stem else f" as {elf.stem}.memory_plan.json"
    return f"copy the project's build/<toolchain>/{built} next to it{renamed}"


def _wrong_plan(elf: Path, board: str, plan_path: Path, plan_board: str) -> KitError:
    return KitError(
        f"{elf}: built for board {board!r}, and {plan_path} is for board {plan_board!r}: "
        "not this image's plan",
        hint=_plan_hint(elf),
    )


def _plan_hint(elf: Path) -> str:
    """--plan, with the file's name in the project: the build's copy is named after the
    app as built (.kit.info's `app`), which a renamed ELF's name no longer says."""
    try:
        app = read_kit_info(elf).get("app", "")
    except KitError:
        app = ""
    return (
        "pass --plan with the memory_plan.json of the project that built it (or its "
        f"build/<toolchain>/{app or '<app>'}.memory_plan.json)"
    )


def _other_model(elf: Path, info: dict[str, str], plan_path: Path, plan: MemoryPlan) -> str:
    """Why `plan` is not the plan the image was built with, or "" when it is.

    The image names its program (`model_sha256`, the .pte's) and memory mode in
    .kit.info: a plan for another program or mode places other buffers, and check-elf or
    run --inputs/-o would prove or feed the wrong ones. Images from before the kit wrote
    model_sha256 cannot say, and are paired by board alone, as they were."""
    want = info.get("model_sha256", "")
    if want and plan.model_sha256 != want:
        return (
            f"{elf}: built from the program with sha256 {want[:12]}…, and {plan_path} is "
            f"for {Path(plan.model_path).name or 'a program'} with sha256 "
            f"{plan.model_sha256[:12] or 'none'}…: not this image's plan"
        )
    mode = info.get("mode", "")
    if want and mode and plan.mode.value != mode:
        return (
            f"{elf}: built for memory mode {mode}, and {plan_path} is for "
            f"{plan.mode.value}: not this image's plan"
        )
    return ""


def find_plan(
    elf: Path, info: dict[str, str], plan_path: Path | None = None
) -> tuple[Path | None, MemoryPlan | None]:
    """The image's own memory_plan.json (and the plan), or (None, None) when none is near.

    `plan_path` (--plan) is taken as given, but must be the image's. Without it, the
    nearest plan that is the image's: `<elf name>.memory_plan.json` beside it, else a
    memory_plan.json up to three folders above; a plan for another program or board
    there (a neighbouring project's) is never taken: when no candidate is the image's,
    a KitError names the ELF, the nearest plan and how they differ."""
    if plan_path is not None:
        plan = load_plan(plan_path)
        if plan.board.name != info["board"]:
            raise _wrong_plan(elf, info["board"], plan_path, plan.board.name)
        reason = _other_model(elf, info, plan_path, plan)
        if reason:
            raise KitError(reason, hint=_plan_hint(elf))
        return plan_path, plan
    first: tuple[Path, MemoryPlan] | None = None
    for path in plan_candidates(elf):
        plan = load_plan(path)
        if not info.get("model_sha256"):
            return path, plan  # an image without model_sha256: the nearest, as before
        if plan.board.name == info["board"] and not _other_model(elf, info, path, plan):
            return path, plan
        first = first or (path, plan)
    if first is None:
        return None, None
    path, plan = first
    if plan.board.name != info["board"]:
        raise _wrong_plan(elf, info["board"], path, plan.board.name)
    raise KitError(_other_model(elf, info, path, plan), hint=_plan_hint(elf))


def image_plan(elf: Path, plan_path: Path | None) -> Path | None:
    """The plan check-elf proves `elf` against: the image's own (find_plan). An ELF
    without .kit.info (not a kit image, or not an ELF) gets the nearest plan, and
    check-elf's own checks say what is wrong with it."""
    try:
        info = read_kit_info(elf)
    except KitError:
        return plan_path or plan_near(elf)
    return find_plan(elf, info, plan_path)[0]


def identify(elf: Path, plan_path: Path | None = None) -> KitImage:
    """The kit image at `elf` and its board, or a KitError saying why it is not one.

    `plan_path`: the project's memory_plan.json when the ELF was copied away from it
    (`run --plan`); by default the image's own plan near the ELF (find_plan)."""
    info, segments = _read(elf)
    plan_path, plan = find_plan(elf, info, plan_path)
    board = _board_of(elf, info["board"], plan, plan_path)
    return KitImage(elf, info, board, plan_path, plan, segments)


def check_fits(image: KitImage, regions: Sequence[MemoryRegion], where: str, hint: str) -> None:
    """Every loadable segment of the image inside one of `regions` (`where` names that
    memory: "what the stand-in QEMU machine has for this board"): else a KitError naming the first
    one outside."""
    for address, size, _ in image.segments:
        if not any(r.contains(address, size) for r in regions):
            near = ", ".join(f"{r.name} 0x{r.base:08x}+{r.size:#x}" for r in regions)
            raise KitError(
                f"{image.elf}: {size} bytes at 0x{address:08x} are outside the memory {where} "
                f"({near})",
                hint=hint,
            )

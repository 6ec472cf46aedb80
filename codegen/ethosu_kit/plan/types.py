"""The memory plan: which logical buffer goes in which region, how big, and why.

Stage 2 of the data flow. `plan_memory()` (in `ethosu_kit.plan.planner`) is a pure
function of (model info, board, mode, options) that returns a `MemoryPlan`. Every
generator renders from the plan, and `memory_plan.json` (written next to the
generated project) is what `ethosu-kit check-elf` proves the linked ELF against.

The names below are the contract between the planner, the templates, the C code
and the ELF checker: a buffer's `symbol` is the C object the firmware defines, its
`section` the input section the linker script and scatter file place, and its
`region` the board region it must end up in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ethosu_kit.board.checks import check_board
from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.errors import BoardError, KitError
from ethosu_kit.core.files import MAX_PLAN, JsonProblem, parse_json, read_text
from ethosu_kit.core.named import by_name
from ethosu_kit.core.typed_json import ShapeError, decode, encode
from ethosu_kit.npu.facts import Accelerator, MemoryMode, accelerator_text
from ethosu_kit.plan.apps import RUNNER_HEAP, RUNNER_STACK, App
from ethosu_kit.plan.external_types import ExternalPtd

PLAN_FORMAT_VERSION = 2  # 2: board_data (the whole typed Board) added


class NpuLibrary(StrEnum):
    """The NPU library the firmware links (cmake/EthosUKitFirmware.cmake lists the same)."""

    DRIVER = "driver"  # the Arm Ethos-U core driver (ETHOSU_DRIVER_ROOT)
    VIRTUAL = "virtual"  # the kit's virtual NPU (drivers/ethosu_virtual)
    NONE = "none"  # no NPU library: a CPU-only program, or bring-up


class Role(StrEnum):
    """What a logical buffer is for; decides where each memory mode lets it live."""

    NETWORK = "network"  # the .pte (command streams, weights): read by CPU and NPU
    SCRATCH = "scratch"  # temp allocator pool; the delegate takes the NPU scratch (region 1) here
    FAST_SCRATCH = "fast_scratch"  # NPU-only staging SRAM (region 2), Dedicated_Sram
    METHOD_POOL = "method_pool"  # method allocator: runtime structures of the loaded method
    PLANNED = "planned"  # one memory-planned buffer (mem_id) of the method
    INPUT = "input"  # input tensor data set before execute
    OUTPUT = "output"
    STACK = "stack"
    VECTORS = "vectors"  # the NPU self-test's inputs and expected outputs (read-only)
    INPUT_DATA = "input_data"  # a method input compiled into the image (gen --inputs)
    HEAP = "heap"
    VNPU_WORKSPACE = "vnpu_workspace"  # the virtual NPU's working memory (decoded weights)
    # one .ptd (named external data: Vela command streams, weights) read in place by the NPU
    EXTERNAL_DATA = "external_data"
    CODE = "code"  # .text/.rodata: sized by the linker, placed by the plan
    DATA = "data"  # .data/.bss of the firmware itself


@dataclass(frozen=True)
class Buffer:
    name: str  # human name, e.g. "ethosu_scratch"
    role: Role
    symbol: str  # C symbol the firmware defines (or the linker script, for stack/heap)
    section: str  # input section name, e.g. ".kit.scratch"
    region: str  # name of the board region it is placed in
    size: int  # bytes (0 for CODE/DATA, which the linker sizes)
    align: int
    npu: bool  # the NPU reads or writes it: must be NPU-reachable and 16-byte aligned
    initialized: bool  # has contents at reset (needs a non-volatile load address)
    load_region: str | None  # where initial contents are stored, if not `region` itself
    allowed_regions: tuple[str, ...]  # every region this mode permits (for check messages)
    why: str  # the arithmetic that produced `size`, e.g. "scratch 81920 + align 16"

    @property
    def index(self) -> int | None:
        """The mem_id (PLANNED) or input/output number (INPUT, OUTPUT, INPUT_DATA) of an
        indexed buffer, None for the others. It is part of the name by contract
        (`indexed_name`), so memory_plan.json carries it without a key of its own."""
        prefix = INDEXED_PREFIX.get(self.role)
        if prefix is None:
            return None
        # a program's own buffer of an image of several carries its name first
        # (`kws_planned_1`, docs/multi-model.md)
        head, sep, number = self.name.rpartition(f"{prefix}_")
        if not sep or (head and not head.endswith("_")) or not number.isdigit():
            raise ValueError(f"buffer {self.name!r} ({self.role.value}) is not {prefix}_<i>")
        return int(number)


# The roles there is one buffer of per index, and their name's prefix: the buffer is
# `<prefix>_<i>`, its symbol `kit_<prefix>_<i>` (the contract with the C side).
INDEXED_PREFIX: dict[Role, str] = {
    Role.PLANNED: "planned",
    Role.INPUT: "input",
    Role.OUTPUT: "output",
    Role.INPUT_DATA: "input_data",
}


def indexed_name(role: Role, index: int) -> str:
    """The name of buffer `index` of `role` (`Buffer.index` reads it back)."""
    return f"{INDEXED_PREFIX[role]}_{index}"


@dataclass(frozen=True)
class RegionUse:
    region: MemoryRegion
    buffers: tuple[str, ...]  # Buffer.name in placement order
    used: int  # bytes the planner counted as taken (plan.fill.region_fill)

    @property
    def free(self) -> int:
        return self.region.size - self.used


@dataclass(frozen=True)
class PlanOptions:
    fast_scratch: int | None = None  # --fast-scratch; else from the Vela config
    stack: int = RUNNER_STACK
    heap: int = RUNNER_HEAP
    # where stack/heap came from when not the option's number ("--stack auto: measured …")
    stack_why: str = ""
    heap_why: str = ""
    # --stack auto on a plan for the Arm driver: the stack the same image needs with the
    # virtual NPU (its own frames on the CPU's stack); `ethosu-kit build --npu virtual`
    # plans it when it re-plans for the virtual NPU
    stack_virtual: int | None = None
    stack_virtual_why: str = ""
    # the stack a driver plan had before `build --npu virtual` re-planned it with
    # stack_virtual: `build --npu driver` plans it again (None: the stack was not swapped)
    stack_driver: int | None = None
    stack_driver_why: str = ""
    # the method allocator's pool: None = the planner's estimate from the program
    method_pool: int | None = None
    method_pool_why: str = ""
    # bytes of each method input compiled into the image (gen --inputs), by input index
    input_data: tuple[int, ...] = ()
    app: App = App.EXECUTOR_RUNNER
    # plan a program with no Ethos-U delegate (everything on the CPU) instead of refusing it
    allow_cpu_only: bool = False
    # bytes to keep free for the linker-sized .text/.rodata and .data/.bss; None = the
    # planner's estimate for `app` (App.code_estimate / data_estimate)
    code_reserve: int | None = None
    data_reserve: int | None = None
    # the NPU library the firmware links: the Ethos-U core driver, the kit's virtual NPU
    # (drivers/ethosu_virtual) or none
    npu: NpuLibrary = NpuLibrary.DRIVER
    # bytes of working memory the virtual NPU needs (measured on the host by
    # ethosu_kit.vnpu.workspace); planned as buffer vnpu_workspace when npu is "virtual"
    vnpu_workspace: int | None = None
    # the .ptd files of a program lowered with VelaExternalBlockPlacements, where each goes
    # (plan.external); memory_plan.json carries the key only when there are some
    external_data: tuple[ExternalPtd, ...] = ()

    def __post_init__(self) -> None:
        # a library caller may name them as plain strings ("selftest"): typed from here on
        # (ValueError for a name that is neither)
        object.__setattr__(self, "app", App(self.app))
        object.__setattr__(self, "npu", NpuLibrary(self.npu))


@dataclass(frozen=True)
class OwnerNeed:
    """What one program needs of a buffer it shares (or owns alone)."""

    program: str
    need: int  # bytes this program alone would need of it


@dataclass(frozen=True)
class Sharing:
    """A buffer of an image of several programs and who uses it: one owner, or every
    program of a lane for what lives only during one execute (the size is the largest
    need, not the sum)."""

    buffer: str  # Buffer.name
    owners: tuple[OwnerNeed, ...]

    @property
    def shared(self) -> bool:
        return len(self.owners) > 1


@dataclass(frozen=True)
class ProgramEntry:
    """One program of an image of several: its .pte, methods and buffers by name."""

    name: str  # the program's name in the firmware (a C identifier)
    path: str
    sha256: str
    methods: tuple[str, ...]
    network: str  # Buffer.name of its .pte
    temp_pool: str
    fast_scratch: str  # "" when the mode has none
    method_pool: str  # "" when the app has no runner pools
    planned: tuple[str, ...]  # Buffer.name by mem_id (1, 2, ...)
    inputs: tuple[str, ...]  # Buffer.name of its unplanned inputs ("" for planned ones)
    outputs: tuple[str, ...]
    lane: int  # programs of one lane never run at the same time and share per-execute buffers
    persistent: bool  # its planned arenas keep state between executes: never shared


@dataclass(frozen=True)
class MemoryPlan:
    board: Board
    mode: MemoryMode
    accelerator: Accelerator | None  # e.g. ethos-u55-128; None: a CPU-only program
    model_path: str
    model_sha256: str
    buffers: tuple[Buffer, ...]
    options: PlanOptions = field(default_factory=PlanOptions)
    notes: tuple[str, ...] = ()  # decisions worth telling the user (defaults taken, etc.)
    # an image of several programs (docs/multi-model.md); empty for one program, whose
    # memory_plan.json has neither key
    programs: tuple[ProgramEntry, ...] = ()
    sharing: tuple[Sharing, ...] = ()

    @property
    def accelerator_name(self) -> str:
        """The accelerator as memory_plan.json and the generated files spell it ("none")."""
        return accelerator_text(self.accelerator)

    def buffer(self, name: str) -> Buffer:
        return by_name(self.buffers, name)

    def by_role(self, role: Role) -> tuple[Buffer, ...]:
        return tuple(b for b in self.buffers if b.role == role)

    @property
    def multi(self) -> bool:
        """An image of several programs (each named; buffers per program and shared)."""
        return bool(self.programs)

    def program(self, name: str) -> ProgramEntry:
        return by_name(self.programs, name)

    def _in_ram(self, buffer: str) -> bool:
        return self.board.region(self.buffer(buffer).region).volatile

    def alone_bytes(self, program: str, *, ram: bool = False) -> int:
        """Bytes `program`'s buffers take in an image of its own (`ram`: in RAM only)."""
        return sum(
            o.need
            for s in self.sharing
            for o in s.owners
            if o.program == program and (not ram or self._in_ram(s.buffer))
        )

    def shared_bytes(self, *, ram: bool = False) -> int:
        """Bytes the programs' buffers take in this image (a shared buffer counted once)."""
        return sum(
            self.buffer(s.buffer).size for s in self.sharing if not ram or self._in_ram(s.buffer)
        )

    @property
    def shared_total(self) -> int:
        return self.shared_bytes()

    def to_json_dict(self) -> dict[str, Any]:
        """The form check-elf and run read: self-contained (the whole board included).

        `board`, `regions` and `buffers` stay at the top for readers of the file;
        `board_data` is the typed Board that `from_json` rebuilds.
        """
        return {
            "format": PLAN_FORMAT_VERSION,
            "board": self.board.name,
            "board_source": self.board.source,
            "mode": self.mode.value,
            "accelerator": self.accelerator_name,
            "model": {"path": self.model_path, "sha256": self.model_sha256},
            "regions": encode(self.board.regions),
            "buffers": encode(self.buffers),
            "options": _options_json(self.options),
            "notes": list(self.notes),
            **self._programs_json(),
            "board_data": _board_json(self.board),
        }

    def _programs_json(self) -> dict[str, Any]:
        """The programs, who owns each buffer and the bytes saved against one image per
        program; nothing for an image of one program."""
        if not self.programs:
            return {}
        alone = {p.name: self.alone_bytes(p.name) for p in self.programs}
        total_alone = sum(alone.values())
        return {
            "programs": encode(self.programs),
            "sharing": encode(self.sharing),
            "sharing_summary": {
                "each_program_alone": alone,
                "sum_alone": total_alone,
                "shared_total": self.shared_total,
                "saved": total_alone - self.shared_total,
                "ram_sum_alone": sum(self.alone_bytes(p.name, ram=True) for p in self.programs),
                "ram_shared_total": self.shared_bytes(ram=True),
            },
        }

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), indent=2) + "\n"

    @classmethod
    def from_json_dict(cls, data: Any) -> MemoryPlan:
        """The typed plan of `to_json_dict`'s form; ShapeError names the key of a bad shape."""
        if not isinstance(data, dict):
            raise ShapeError("", "expected a JSON object")
        for key in ("format", "mode", "accelerator", "model", "buffers", "board_data"):
            if key not in data:
                raise ShapeError(key, "missing")
        if data["format"] != PLAN_FORMAT_VERSION:
            raise ShapeError(
                "format", f"version {data['format']!r}, this kit reads {PLAN_FORMAT_VERSION}"
            )
        model = decode(_ModelRef, data["model"], "model")
        board = decode(Board, data["board_data"], "board_data")
        try:
            check_board(board)  # a plan read back is data from anywhere: a board file's rules
        except BoardError as exc:
            raise ShapeError("board_data", exc.message.removeprefix(f"{board.source}: ")) from None
        return cls(
            board=board,
            mode=decode(MemoryMode, data["mode"], "mode"),
            accelerator=_accelerator(data["accelerator"]),
            model_path=model.path,
            model_sha256=model.sha256,
            buffers=decode(tuple[Buffer, ...], data["buffers"], "buffers"),
            options=decode(PlanOptions, data.get("options", {}), "options"),
            notes=decode(tuple[str, ...], data.get("notes", []), "notes"),
            programs=decode(tuple[ProgramEntry, ...], data.get("programs", []), "programs"),
            sharing=decode(tuple[Sharing, ...], data.get("sharing", []), "sharing"),
        )

    @classmethod
    def from_json(cls, path: Path) -> MemoryPlan:
        """Read memory_plan.json; a one-line KitError naming the file (and the key)."""
        hint = "pass the memory_plan.json gen-firmware wrote next to the project, or regenerate it"
        text = read_text(path, MAX_PLAN)  # a regular file, bounded: one error line otherwise
        try:
            data = parse_json(text)
        except JsonProblem as exc:
            raise KitError(f"{path}: {exc}", hint=hint) from None
        try:
            return cls.from_json_dict(data)
        except ShapeError as exc:
            where = f"key '{exc.key}'" if exc.key else "the top level"
            raise KitError(
                f"{path}: {where}: {exc.problem}, so not a memory plan this kit wrote", hint=hint
            ) from exc


def _accelerator(value: Any) -> Accelerator | None:
    text = decode(str, value, "accelerator")
    try:
        return Accelerator.parse_optional(text)
    except ValueError:
        raise ShapeError(
            "accelerator", f"expected 'none' or an Ethos-U configuration, got {text!r}"
        ) from None


def _board_json(board: Board) -> Any:
    """The board as JSON, without an empty `external_data` (as plans read before it)."""
    data = encode(board)
    if not board.external_data:
        del data["external_data"]
    return data


def _options_json(options: PlanOptions) -> Any:
    """The options as JSON, without `external_data` when the program has none (the plans
    of programs without .ptd files read as they did before)."""
    data = encode(options)
    if not options.external_data:
        del data["external_data"]
    return data


@dataclass(frozen=True)
class _ModelRef:
    path: str
    sha256: str

"""Stack and heap sized from a measurement, not guessed.

The firmware paints its stack at start and reports, before it exits, one line per
measured quantity (sdk/include/kit/usage.h):

    usage: stack used 1552 of 16384 bytes
    usage: heap used 0 of 32768 bytes
    usage: method_pool used 976 of 2048 bytes

`measure_project` builds a generated project's app, runs it in QEMU and records those
lines in `<project>/measured_usage.json`, with a fingerprint of the firmware that made
the image (ethosu_kit.firmware.fingerprint); `gen --stack auto --heap auto` plans the stack and
heap from that record plus a stated margin (`sized`), and the memory plan's "why" of
each says where its number came from. A record is reused only for the same app,
compiler, pte bytes and firmware (`reuse`); anything else is measured again.

Why a QEMU run and not a static bound from -fstack-usage: the runner's deepest paths go
through function pointers (ExecuTorch's kernel registry, the delegate interface,
virtual calls), where a call graph has no edges, so a static bound would be either
wrong or the whole program's sum. A run of the same image on the same model takes the
same paths (the control flow of a fixed program does not depend on the input values);
what it cannot see — an interrupt at the deepest point — is what the margin is for (an
error path that went deeper ends the run anyway: at worst as a named stack overflow).
With the virtual NPU the mark includes the NPU model's own frames (it runs on the CPU's
stack), which the Arm driver does not have: the run also reports the mark outside the
virtual NPU's jobs (`stack_cpu`) and the depth at the driver's entry (`npu_entry`), and a
plan for the driver is sized from those plus the driver's own path (a static bound).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ethosu_kit.board.cores import CORES
from ethosu_kit.board.toolchain import MEASURE_TOOLCHAINS, Toolchain
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_PLAN, read_text
from ethosu_kit.core.names import MEASURED_USAGE
from ethosu_kit.core.sizes import align_up
from ethosu_kit.core.typed_json import decode
from ethosu_kit.core.writer import write_file_atomic
from ethosu_kit.firmware.build import build_project
from ethosu_kit.firmware.fingerprint import changed, firmware_fingerprint
from ethosu_kit.firmware.project import ProjectDir
from ethosu_kit.firmware.qemu import run_elf
from ethosu_kit.npu.facts import NPU_ALIGN
from ethosu_kit.plan.apps import App
from ethosu_kit.plan.planner import STACK_ALIGN
from ethosu_kit.plan.types import NpuLibrary, PlanOptions

MEASURE_FILE = MEASURED_USAGE  # the name, for messages; ProjectDir.measured_usage the path
# 2: the record holds the firmware's fingerprint; a record of format 1 does not, so it
# is measured again (never reused for firmware that may have changed since)
MEASURE_FORMAT = 2
USAGE_LINE = re.compile(r"^usage: (\w+) used (\d+) of (\d+) bytes", re.M)
# The margins: what one QEMU run of the image cannot see (docs/memory.md).
# Stack: an interrupt at the deepest point. The run with the virtual NPU takes no
# exception there (the model calls the IRQ handler itself), so room for one: the
# exception frame with the FP state (26 words, 104 B, + 4 B of 8-byte alignment) and
# the handler's frames (the kit's NPU IRQ path, kit_irq_dispatch -> ethosu_irq_handler,
# is 24 B by -fstack-usage with GCC 12 -O2/-O3; the rest is for a port's own handler).
# One frame: the kit's interrupts (NPU, SysTick wraps) keep the reset priority, no nesting.
# Not cut to the kit's own 132 B: a port's handlers are registered at run time (through
# kit_irq_register's table, where -fstack-usage has no call graph) and the measuring run
# never takes one at the deepest point, so the 124 B left are the only room for them.
# The Arm driver's path is not in the run: the virtual NPU reports the stack depth where
# the delegate enters the driver (`usage: npu_entry`), and the driver's own deepest chain
# from ethosu_invoke_v3 is a static bound: by GCC 12 -O3 -fcallgraph-info=su 340 B on
# the U55, 356 B on the U85 (invoke_v3 32, invoke_async 48, verify_optimizer_config
# 56/72, its error print kit_fprintf 28 + the formatter kit_format 112, whose libgcc
# division counts 64), with room for a port's own console putc and cache hooks =
# DRIVER_PATH_BYTES.
# tests/test_driver_stack_path.py takes that chain from the real driver build and fails
# when it outgrows this. A documented figure, not one computed per build: the build
# measured runs the virtual NPU (no driver in it), newlib and libgcc have no frame data,
# and a bound taken wrong would undersize the stack on the board, where the run cannot
# catch it. The stack covers the larger of the measured mark and that path (today the
# virtual NPU's own frames, a 1.3 KiB convolution, make the measured mark the larger).
DRIVER_PATH_BYTES = 512
# Faults need none: the fault handler lifts the stack limit and the image ends there.
STACK_INTERRUPT_BYTES = 256
# Heap and method pool: no margin. Both are handed out in the same order and sizes on
# every run of the same program (static shapes; the Ethos-U delegate's handles, the
# runtime's method objects), and the driver build allocates what the virtual-NPU build
# does (the kit's NPU semaphores are static). Too small fails by name, never silently.
HEAP_MARGIN_PERCENT = 0
ROUND = 8  # the stack's and the heap's alignment (AAPCS)


@dataclass(frozen=True)
class Measurement:
    app: str
    npu: str
    model_sha256: str
    board: str
    stack_used: int
    stack_size: int
    heap_used: int
    heap_size: int
    pools: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (used, size)
    exit_code: int = 0
    # stack depth where the NPU driver was entered (virtual NPU runs; 0: not reported)
    npu_entry: int = 0
    # deepest stack outside the virtual NPU's jobs (virtual NPU runs; 0: not reported)
    stack_cpu: int = 0
    # the compiler of the measured build: frames differ between compilers (a clang-19
    # self-test needs 2.5x the stack of the GCC 12 one), so a record is for one of them
    toolchain: str = Toolchain.GCC
    # what made the measured image, part -> digest (ethosu_kit.firmware.fingerprint): the frames
    # change with the kit's sources, the board's code, the compiler or the ExecuTorch
    # checkout, so a record is for the firmware it measured
    firmware: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"format": MEASURE_FORMAT, **asdict(self)}, indent=2) + "\n"


def parse_usage(uart: str) -> dict[str, tuple[int, int]]:
    """Every `usage:` line of a run: name -> (used, size); the last line of a name wins."""
    return {m.group(1): (int(m.group(2)), int(m.group(3))) for m in USAGE_LINE.finditer(uart)}


def _round(n: int, to: int = ROUND) -> int:
    return max(to, align_up(n, to))


def _driver_sized(m: Measurement, npu: str) -> bool:
    """Size for the Arm driver from the run's CPU part: a driver image measured apart."""
    return npu == NpuLibrary.DRIVER and m.stack_cpu > 0 and m.npu_entry > 0


def stack_need(m: Measurement, npu: str = NpuLibrary.VIRTUAL) -> int:
    """The stack an image with `npu` needs: with the virtual NPU the whole measured mark;
    with the Arm driver the deeper of the mark outside the virtual NPU's jobs and the
    driver's own path from where it is entered."""
    driver_path = m.npu_entry + DRIVER_PATH_BYTES
    if _driver_sized(m, npu):
        return max(m.stack_cpu, driver_path)
    if npu == NpuLibrary.VIRTUAL:
        return m.stack_used  # the image measured: the driver's path is in no such image
    return max(m.stack_used, driver_path) if m.npu_entry else m.stack_used


def stack_guard_bytes(core: str) -> int:
    """Bytes at the stack's bottom no frame may use on `core`: on Armv7-M (no stack limit
    register) the start-up makes the lowest STACK_ALIGN bytes a no-access MPU region, the
    overflow guard (sdk/src/startup.c), and the painted mark counts from above it; an
    Armv8-M core's limit is MSPLIM, no bytes taken. An unknown core counts as Armv7-M:
    32 B too many is safe, too few is not."""
    known = CORES.get(core)
    return 0 if known is not None and known.armv8m else STACK_ALIGN


def sized_stack(m: Measurement, npu: str = NpuLibrary.VIRTUAL, guard: int = 0) -> int:
    return _round(stack_need(m, npu) + STACK_INTERRUPT_BYTES + guard)


def sized_heap(used: int) -> int:
    return _round(used + used * HEAP_MARGIN_PERCENT // 100)


def sized_method_pool(used: int) -> int:
    return _round(used, NPU_ALIGN)


def _source(m: Measurement) -> str:
    return f"{m.app} built with {m.toolchain}, NPU {m.npu}, in QEMU, {MEASURE_FILE}"


def stack_why(m: Measurement, size: int, npu: str = NpuLibrary.VIRTUAL, guard: int = 0) -> str:
    path = m.npu_entry + DRIVER_PATH_BYTES
    driver = (
        f"the Arm driver's path {m.npu_entry} B at its entry + {DRIVER_PATH_BYTES} B "
        f"(-fstack-usage) = {path} B"
    )
    if _driver_sized(m, npu):
        what = (
            f"for the Arm driver: the deeper of {m.stack_cpu} B high-water mark outside the "
            f"virtual NPU's jobs (painted stack, {_source(m)}) and {driver}"
        )
    elif m.npu_entry and npu != NpuLibrary.VIRTUAL:  # a virtual NPU plan takes the mark alone
        what = (
            f"the deeper of {m.stack_used} B high-water mark measured (painted stack, "
            f"{_source(m)}) and {driver}"
        )
    else:
        what = f"{m.stack_used} B high-water mark measured (painted stack, {_source(m)})"
    guarded = f", + {guard} B of MPU stack guard (Armv7-M)" if guard else ""
    return (
        f"--stack auto: {what}, + {STACK_INTERRUPT_BYTES} B for an interrupt at the deepest "
        f"point (FP exception frame and handler){guarded}, rounded to {ROUND} = {size}"
    )


def heap_why(m: Measurement, size: int) -> str:
    return (
        f"--heap auto: {m.heap_used} B measured (sbrk high-water, {_source(m)}; the same "
        f"allocations on every run), rounded to {ROUND} = {size}"
    )


def method_pool_why(m: Measurement, used: int, size: int) -> str:
    return (
        f"--method-pool auto: {used} B measured (the method allocator, {_source(m)}; the "
        f"same allocations on every load of this program), rounded to {NPU_ALIGN} = {size}"
    )


def sized_options(
    options: PlanOptions,
    m: Measurement,
    note: str,
    *,
    core: str,
    npu: str,
    stack: bool,
    heap: bool,
    method_pool: int | str | None,
) -> PlanOptions:
    """`options` with the stack (`stack`) and/or heap (`heap`) sized from `m`, and the
    method pool too unless given in bytes (`method_pool`: bytes, "auto" or None); each
    "why" says where its number came from and `note` (the record reused, or why it was
    measured). A driver plan also gets the virtual NPU's stack, for `build --npu virtual`."""

    def said(why: str) -> str:
        return f"{why} ({note})"

    if stack:
        guard = stack_guard_bytes(core)
        size = sized_stack(m, npu, guard)
        options = replace(options, stack=size, stack_why=said(stack_why(m, size, npu, guard)))
        if npu == NpuLibrary.DRIVER:
            size = sized_stack(m, NpuLibrary.VIRTUAL, guard)
            why = said(stack_why(m, size, NpuLibrary.VIRTUAL, guard))
            options = replace(options, stack_virtual=size, stack_virtual_why=why)
    if heap:
        size = sized_heap(m.heap_used)
        options = replace(options, heap=size, heap_why=said(heap_why(m, size)))
    # the method pool too, unless given in bytes: the same run measured it
    pool = m.pools.get("method_pool")
    if method_pool == "auto" and pool is None:
        raise KitError(
            f"--method-pool auto: the {m.app} app has no method pool to measure",
            hint="measure the executor_runner (--app executor_runner), or leave --method-pool out",
        )
    if pool is not None and not isinstance(method_pool, int):
        size = sized_method_pool(pool[0])
        why = said(method_pool_why(m, pool[0], size))
        options = replace(options, method_pool=size, method_pool_why=why)
    return options


def read_measurement(project: Path) -> Measurement | None:
    """The project's record; None when there is none or it is of another format (an
    older kit's: not reused); a KitError when the file is not a record."""
    path = ProjectDir(project).measured_usage
    if not path.is_file():
        return None
    try:
        data: Any = json.loads(read_text(path, MAX_PLAN))
        if isinstance(data, dict) and data.get("format") != MEASURE_FORMAT:
            return None
        # typed: a field of the wrong shape is named here, not a traceback in the sizing
        m = decode(Measurement, data)
        numbers = [m.stack_used, m.stack_size, m.heap_used, m.heap_size, m.npu_entry, m.stack_cpu]
        if min(numbers + [n for pool in m.pools.values() for n in pool]) < 0:
            raise ValueError("a negative size")
        if m.npu not in tuple(NpuLibrary):  # the why names it, in C comments
            raise ValueError("npu: not virtual, none or driver")
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        raise KitError(
            f"{path}: not a measurement ({exc})", hint="delete it and measure again"
        ) from None
    return m


def reuse(
    project: Path, model_sha256: str, app: str, toolchain: str, firmware: dict[str, str]
) -> tuple[Measurement | None, str]:
    """The project's record when it measured `app` built with `toolchain` from the same
    firmware (`firmware`: ethosu_kit.firmware.fingerprint) on these pte bytes, else None; and
    what the plan's "why" says of it (reused, or why it is measured again)."""
    if not ProjectDir(project).measured_usage.is_file():
        return None, f"measured now: no {MEASURE_FILE} yet"
    m = read_measurement(project)
    if m is None:
        return None, f"measured again: {MEASURE_FILE} is an older kit's (no firmware fingerprint)"
    if m.model_sha256 != model_sha256:
        return None, "measured again: the record is of other pte bytes"
    if m.app != app:
        return None, f"measured again: the record is of the {_known(m.app)} app"
    if m.toolchain != toolchain:
        return None, f"measured again: the record is of a {_known(m.toolchain)} build"
    parts = changed(m.firmware, firmware)
    if parts:
        return None, f"measured again: {', '.join(parts)} changed since the record"
    return m, f"{MEASURE_FILE} reused: the same app, compiler, firmware and pte bytes"


def _known(name: str) -> str:
    """A name read from the record, for a message: only one of the kit's own."""
    return name if name in (*App, *MEASURE_TOOLCHAINS) else "another"


def load_measurement(
    project: Path,
    model_sha256: str,
    app: str,
    toolchain: str = Toolchain.GCC,
    firmware: dict[str, str] | None = None,
) -> Measurement | None:
    """The project's record, if it is one of `app` built with `toolchain` on these pte
    bytes (and, given `firmware`, from that firmware); else None."""
    m = read_measurement(project)
    if m is None or (m.model_sha256, m.app, m.toolchain) != (model_sha256, app, toolchain):
        return None
    return m if firmware is None or m.firmware == firmware else None


def measurement_from_run(
    uart: str,
    exit_code: int | None,
    *,
    app: str,
    npu: str,
    model_sha256: str,
    board: str,
    toolchain: str = Toolchain.GCC,
    firmware: dict[str, str] | None = None,
) -> Measurement:
    usage = parse_usage(uart)
    if exit_code != 0 or "stack" not in usage or "heap" not in usage:
        # one error line: the last few UART lines joined (a newline would be escaped)
        tail = " | ".join(line.strip() for line in uart.rstrip().splitlines()[-3:])
        raise KitError(
            f"measuring {app}: the run ended with exit code {exit_code} and "
            f"{'no' if 'stack' not in usage else 'its'} usage lines; its last UART lines: {tail}",
            hint="the image must run to its end in QEMU to be measured; give --stack/--heap "
            "in bytes instead",
        )
    pools = {k: v for k, v in usage.items() if k not in ("stack", "heap", "npu_entry", "stack_cpu")}
    return Measurement(
        app=app,
        npu=npu,
        model_sha256=model_sha256,
        board=board,
        stack_used=usage["stack"][0],
        stack_size=usage["stack"][1],
        heap_used=usage["heap"][0],
        heap_size=usage["heap"][1],
        pools=pools,
        exit_code=exit_code,
        npu_entry=usage["npu_entry"][0] if "npu_entry" in usage else 0,
        stack_cpu=usage["stack_cpu"][0] if "stack_cpu" in usage else 0,
        toolchain=toolchain,
        firmware=dict(firmware or {}),
    )


def measure_project(
    project: Path,
    app: str,
    npu: str = NpuLibrary.VIRTUAL,
    toolchain: str = Toolchain.GCC,
    firmware: dict[str, str] | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> Measurement:
    """Build `app` of the generated `project`, run it in QEMU, record and return its
    usage with `firmware`, the fingerprint of what the build reads (default: taken now,
    before the build, for the board of the project's plan). `progress` is told each
    step as it starts (gen prints it: the runner's first build takes minutes)."""
    plan = ProjectDir(project).read_plan()
    if firmware is None:
        firmware = firmware_fingerprint(plan.board, app, toolchain, project)
    say = progress or (lambda _line: None)
    say(f"building {app} ({toolchain}, NPU {npu}) in {project} …")
    try:
        elf = build_project(project, app, toolchain, npu)
    except KitError as exc:
        # the project is gen's work in progress, gone after the error: no "rerun in it" hint
        raise KitError(
            f"--stack/--heap auto: building {app} to measure it failed: {exc.message}",
            hint="fix what the build says (the executor_runner needs EXECUTORCH_ROOT, "
            "ETHOSU_DRIVER_ROOT, CMSIS_ROOT: docs/executorch.md), or give --stack/--heap "
            "in bytes",
        ) from None
    say(f"running {app} in QEMU …")
    try:
        result = run_elf(elf, timeout=120)
    except KitError as exc:
        # the ELF is in gen's work in progress, gone after the error: say what failed
        raise KitError(
            f"--stack/--heap auto: running {app} in QEMU to measure it failed: {exc.message}",
            hint="measure on the board and give --stack/--heap in bytes (docs/memory.md)",
        ) from None
    if result.timed_out:
        raise KitError(f"measuring {app}: {elf} did not exit in QEMU within 120 s")
    m = measurement_from_run(
        result.output,
        result.exit_code,
        app=app,
        npu=npu,
        model_sha256=plan.model_sha256,
        board=plan.board.name,
        toolchain=toolchain,
        firmware=firmware,
    )
    write_file_atomic(ProjectDir(project).measured_usage, m.to_json().encode())
    return m

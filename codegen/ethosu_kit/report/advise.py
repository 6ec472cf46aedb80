"""`ethosu-kit advise`: which NPU configuration, memory mode, fast-scratch size and Vela
system configuration to lower a model for, on the boards given.

For every candidate, the model's TOSA graph(s) are compiled with Vela (in parallel: a
process per local core), the delegate payloads Vela makes become a `ModelInfo` as a
lowered .pte of them would read, and the kit's planner places it on each board exactly
as `ethosu-kit gen` would: fits, or which region is short and by how many bytes. The
speed is Vela's estimate (its summary: cycles and bytes per memory), labelled so
everywhere; the recommendation per board is the candidate with the shortest estimated
inference time that fits.

The network size is exact when a .pte lowered from the same graph is given (its program
around the delegates is kept, the delegates' payloads swapped for the candidate's);
without one it is the payloads plus `PROGRAM_OVERHEAD`, and the plan says so.

Layer: report (reads boards, plans with plan, builds models with pte); the CLI drives it.
"""

from __future__ import annotations

import configparser
import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ethosu_kit.board.model import Board
from ethosu_kit.core.errors import FitError, KitError, PlanError
from ethosu_kit.core.sizes import align_up, size_text
from ethosu_kit.core.typed_json import encode
from ethosu_kit.npu.facts import NPU_ALIGN, Accelerator, MemoryMode, NpuKind, mode_refusal
from ethosu_kit.plan.fill import region_fill
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.types import MemoryPlan
from ethosu_kit.pte.compile_spec import ETHOSU_BACKEND_ID
from ethosu_kit.pte.model import Delegate, MethodInfo, ModelInfo, TensorInfo, VelaTensor
from ethosu_kit.pte.vela_compile import (
    DEFAULT_SYSTEM_CONFIG,
    Compiled,
    CompiledTosa,
    VelaEstimate,
    VelaTarget,
    compile_partitions,
    preload_vela,
)
from ethosu_kit.pte.vela_config import vela_ini_path

KIB = 1024
# Without a .pte: the ExecuTorch program around the delegates (its tables, the delegate
# call, IO tensor metadata). The kit's example CNN's is 2,304 B; rounded up generously.
PROGRAM_OVERHEAD = 4 * KIB
# ExecuTorch's default mode name for Dedicated_Sram (EthosUCompileSpec for a U65)
DEFAULT_DEDICATED = "Dedicated_Sram_384KB"
ESTIMATE_LABEL = "Vela's estimate"
_ELEM_DTYPE = {1: "int8", 2: "int16", 4: "int32"}


# -- candidates ------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """One way to lower the model: what ExecuTorch's EthosUCompileSpec is given."""

    target: VelaTarget

    @property
    def name(self) -> str:
        t = self.target
        fast = f" fast {size_text(t.arena_cache_size)}" if t.arena_cache_size is not None else ""
        return f"{t.accelerator} {t.memory_mode}{fast} ({t.system_config})"

    @property
    def compile_spec_text(self) -> str:
        """The ExecuTorch compile spec that lowers the model this way (Python)."""
        t = self.target
        args = [
            f'"{t.accelerator}"',
            f'system_config="{t.system_config}"',
            f'memory_mode="{t.memory_mode}"',
        ]
        if t.extra_flags:
            args.append("extra_flags=[" + ", ".join(f'"{f}"' for f in t.extra_flags) + "]")
        return f"EthosUCompileSpec({', '.join(args)})"


def _vela_ini_names(kind: str) -> frozenset[str]:
    """The `[<kind>.<name>]` section names of the installed Arm/vela.ini (System_Config,
    Memory_Mode); empty when it cannot be read (then Vela itself judges the names)."""
    path = vela_ini_path()
    if path is None:
        return frozenset()
    ini = configparser.ConfigParser()
    try:
        ini.read(path, encoding="utf-8")
    except (OSError, configparser.Error):
        return frozenset()
    prefix = f"{kind}."
    return frozenset(s[len(prefix) :] for s in ini.sections() if s.startswith(prefix))


def _for_kind(system_config: str, kind: NpuKind) -> bool:
    """Does a vela.ini system config belong to `kind` (Ethos_U55_... to ethos-u55)? A name
    that names no product (a custom one) goes with every kind."""
    named = {k for k in NpuKind if f"_U{k.value[-2:]}_" in f"_{system_config}_"}
    return not named or kind in named


def choose_candidates(
    boards: Sequence[Board],
    accelerators: Sequence[str] = (),
    modes: Sequence[str] = (),
    fast_scratch: Sequence[int] = (),
    system_configs: Sequence[str] = (),
) -> tuple[Candidate, ...]:
    """The candidates the user names, the rest from what the boards allow.

    Accelerators: the given ones, else every NPU kind and MAC configuration of the
    boards. Modes: the given ones, else those a board has NPU registers for. A
    Dedicated_Sram candidate per `fast_scratch` size (Vela --arena-cache-size), else
    ExecuTorch's Dedicated_Sram_384KB. System configs: the given ones that fit the
    product, else ExecuTorch's default for it. KitError for a name none of those know.
    """
    accels: list[Accelerator] = []
    for text in accelerators:
        try:
            accels.append(Accelerator.parse(text))
        except ValueError:
            raise KitError(
                f"unknown candidate: --accelerator {text!r} is not an Ethos-U configuration",
                hint="use e.g. ethos-u55-128, ethos-u65-256 or ethos-u85-256",
            ) from None
    if not accels:
        accels = [
            Accelerator(NpuKind(kind), macs)
            for b in boards
            for kind in b.npu.kinds
            for macs in b.npu.macs.get(kind, ())
        ]
    known_modes = _vela_ini_names("Memory_Mode")
    for text in modes:
        try:
            MemoryMode.parse(text)
            if known_modes and text not in known_modes:
                raise ValueError(text)
        except ValueError:
            raise KitError(
                f"unknown candidate: --mode {text!r} is not a memory mode of Vela's Arm/vela.ini",
                hint="use "
                + (", ".join(sorted(known_modes)) or "Sram_Only, Shared_Sram or Dedicated_Sram")
                + " (--fast-scratch SIZE for other Dedicated_Sram sizes)",
            ) from None
    known = _vela_ini_names("System_Config")
    for name in system_configs:
        if known and name not in known:
            raise KitError(
                f"unknown candidate: --system-config {name!r} is not in Vela's Arm/vela.ini",
                hint="use one of " + ", ".join(sorted(known)),
            )
    out: dict[VelaTarget, None] = {}
    refused: list[str] = []
    for accel in dict.fromkeys(accels):
        kind = accel.kind
        names = list(modes) or [
            m.value
            for m in MemoryMode
            if any((kind.value, m.value) in b.npu.registers for b in boards)
        ]
        configs = [c for c in system_configs if _for_kind(c, kind)] or [
            DEFAULT_SYSTEM_CONFIG[kind.value]
        ]
        for name in names:
            mode = MemoryMode.parse(name)
            refusal = mode_refusal(kind, mode)
            if refusal:
                refused.append(refusal)
                continue
            variants: list[tuple[str, int | None]] = [(name, None)]
            if mode == MemoryMode.DEDICATED_SRAM:
                if fast_scratch:
                    variants = [(MemoryMode.DEDICATED_SRAM.value, s) for s in fast_scratch]
                elif name == MemoryMode.DEDICATED_SRAM.value and not modes:
                    variants = [(DEFAULT_DEDICATED, None)]
            for mode_name, arena in variants:
                for config in configs:
                    out[VelaTarget(accel, config, mode_name, arena)] = None
    if fast_scratch and not any(t.arena_cache_size is not None for t in out):
        raise KitError(
            "--fast-scratch sizes a Dedicated_Sram fast scratch, and no candidate runs "
            "Dedicated_Sram",
            hint="add --mode Dedicated_Sram with an Ethos-U65/U85 --accelerator",
        )
    if not out:
        why = f": {refused[0]}" if refused else ""
        raise KitError(
            f"no candidate to compile{why}", hint="name others with --accelerator/--mode"
        )
    return tuple(Candidate(t) for t in out)


# -- compiling ---------------------------------------------------------------------------


def compile_candidates(
    jobs: Sequence[tuple[tuple[Path, ...], VelaTarget]],
    *,
    workers: int | None = None,
    on_done: Callable[[int], None] | None = None,
) -> list[Compiled]:
    """Each (TOSA graphs, target) compiled with Vela, in a pool of processes bounded by
    the local cores; `on_done(i)` as job i finishes (a progress bar). In job order."""
    results: list[Compiled | None] = [None] * len(jobs)
    n = max(1, min(len(jobs), workers or os.cpu_count() or 1))
    if n == 1:  # one job or one core: a pool would only add its start-up
        for i, (tosas, target) in enumerate(jobs):
            results[i] = compile_partitions(tosas, target)
            if on_done:
                on_done(i)
    else:
        # A fork starts at once; but a process that has run torch (the --module path
        # lowered with it first) holds its thread pools, which a fork does not carry
        # safely: then the workers come from a fork server.
        forked = "torch" not in sys.modules
        context = multiprocessing.get_context("fork" if forked else "forkserver")
        if forked:
            preload_vela()  # once here, not once per worker
        with ProcessPoolExecutor(max_workers=n, mp_context=context) as pool:
            futures = {
                pool.submit(compile_partitions, tosas, target): i
                for i, (tosas, target) in enumerate(jobs)
            }
            for future in as_completed(futures):
                i = futures[future]
                results[i] = future.result()
                if on_done:
                    on_done(i)
    return [r for r in results if r is not None]


# -- the model a candidate makes ---------------------------------------------------------


def _tensor(v: VelaTensor) -> TensorInfo:
    shape = v.shape
    while len(shape) > 1 and shape[0] == 1:  # Vela pads to 6-D with leading 1s
        shape = shape[1:]
    return TensorInfo(_ELEM_DTYPE.get(v.elem_size, "int8"), shape, v.nbytes, planned=True)


def _delegate(c: CompiledTosa, target: VelaTarget) -> Delegate:
    specs = (
        ("compile_flags", " ".join(target.flags).encode()),
        ("target", str(target.accelerator).encode()),
    )
    return Delegate(ETHOSU_BACKEND_ID, specs, c.stream_bytes, target.compile_spec(), c.stream)


def candidate_model(
    name: str, compiled: Compiled, reference: ModelInfo | None
) -> tuple[ModelInfo, str]:
    """The ModelInfo a .pte lowered for `compiled.target` would give, and how its size
    was found. With `reference` (a .pte of the same graph, any target) its program is
    kept and its Ethos-U delegates become the candidate's; else a one-method program of
    the delegates with `PROGRAM_OVERHEAD` bytes around them."""
    delegates = tuple(_delegate(c, compiled.target) for c in compiled.partitions)
    payload = sum(d.processed_bytes for d in delegates)
    if reference is not None:
        old = reference.ethosu_delegates
        if len(old) != len(delegates):
            raise KitError(
                f"{reference.path}: {len(old)} Ethos-U delegate(s), but {len(delegates)} "
                "TOSA graph(s) given",
                hint="give one TOSA file per delegate partition, in order, with the .pte "
                "lowered from them",
            )
        swap = iter(delegates)
        methods = tuple(
            replace(m, delegates=tuple(next(swap) if d.is_ethosu else d for d in m.delegates))
            for m in reference.methods
        )
        size = reference.file_bytes - sum(d.processed_bytes for d in old) + payload
        how = (
            f"network {size:,} B: {Path(reference.path).name}'s program with this "
            f"candidate's Vela payloads ({payload:,} B)"
        )
        return replace(reference, path=name, file_bytes=size, methods=methods, sha256=""), how
    first, last = compiled.partitions[0].stream, compiled.partitions[-1].stream
    inputs = tuple(_tensor(t) for t in first.inputs)
    outputs = tuple(_tensor(t) for t in last.outputs)
    planned = sum(align_up(t.nbytes, NPU_ALIGN) for t in (*inputs, *outputs))
    method = MethodInfo(
        name="forward",
        inputs=inputs,
        outputs=outputs,
        planned_buffers=(max(planned, NPU_ALIGN),),
        cpu_operators=(),
        delegates=delegates,
        num_values=len(inputs) + len(outputs) + 2 * len(delegates),
        num_instructions=len(delegates),
        num_tensors=len(inputs) + len(outputs),
    )
    size = payload + PROGRAM_OVERHEAD
    model = ModelInfo(path=name, file_bytes=size, constant_bytes=0, methods=(method,))
    how = (
        f"network {size:,} B: Vela payloads {payload:,} B + {PROGRAM_OVERHEAD:,} B "
        "estimated for the program around them (give --pte for the exact size)"
    )
    return model, how


# -- fitting -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Room:
    """A region's bytes in a candidate's plan: `used` of `size`; when the plan does not
    fit, `used` is what the region would need."""

    region: str
    size: int
    used: int

    @property
    def free(self) -> int:
        return self.size - self.used  # negative: the bytes short


@dataclass(frozen=True)
class Fit:
    """One candidate on one board."""

    board: str
    fits: bool
    # fits: every region the plan uses, least room first; the NPU buffers' regions first
    rooms: tuple[Room, ...] = ()
    short: Room | None = None  # does not fit: the region that overflows
    refusal: str = ""  # the plan's refusal when it is not about room (NPU, mode)
    plan: MemoryPlan | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        """One line: 'fits: SRAM 1.98 MiB free' (the NPU's tightest region) or
        'no: SRAM short by 1,234 B'."""
        if self.fits:
            if not self.rooms:
                return "fits"
            r = self.rooms[0]
            return f"fits: {r.region} {size_text(r.free)} free"
        if self.short is not None:
            return f"no: {self.short.region} short by {-self.short.free:,} B"
        return f"no: {self.refusal}"


def fit(model: ModelInfo, board: Board) -> Fit:
    """`model` planned on `board` as `gen` would (the pte's own mode, default options)."""
    spec = model.compile_spec
    if spec is not None and not board.npu.supports(spec.npu_kind, spec.macs):
        return Fit(board.name, False, refusal=f"the board's NPU cannot be {spec.accelerator}")
    try:
        plan = plan_memory(model, board, None)
    except FitError as exc:
        if exc.region:
            room = Room(exc.region, exc.available, exc.needed)
            return Fit(board.name, False, short=room)
        return Fit(board.name, False, refusal=_unnamed(exc.message, model))
    except PlanError as exc:
        return Fit(board.name, False, refusal=_unnamed(exc.message, model))
    # the regions the NPU's buffers are in come first: where the candidates differ
    npu_regions = {b.region for b in plan.buffers if b.npu}
    rooms = sorted(
        (Room(u.region.name, u.region.size, u.used) for u in region_fill(plan) if u.used),
        key=lambda r: (r.region not in npu_regions, r.free),
    )
    return Fit(board.name, True, rooms=tuple(rooms), plan=plan)


def _unnamed(message: str, model: ModelInfo) -> str:
    """A planner's message without the model's name in front (the row names it)."""
    return message.removeprefix(f"{model.path}: ")


# -- the advice ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One candidate: Vela's payload sizes and estimate, and its fit on each board."""

    candidate: str
    compile_spec: str  # ExecuTorch's EthosUCompileSpec(...) that lowers the model this way
    vela_flags: tuple[str, ...]
    error: str = ""  # Vela refused this candidate (then nothing else is set)
    estimate: VelaEstimate | None = None  # Vela's estimate, summed over the partitions
    network: int = 0  # bytes of the .pte the plan places
    network_how: str = ""
    scratch: int = 0  # Vela region 1, the largest partition's
    fast_scratch: int = 0  # Vela region 2 (Dedicated_Sram), the largest partition's
    fits: tuple[Fit, ...] = ()  # one per board, in board order

    @property
    def seconds(self) -> float:
        """Vela's estimated inference time (infinite when Vela refused the candidate)."""
        return self.estimate.inference_time if self.estimate else float("inf")

    @property
    def cycles(self) -> int:
        return self.estimate.cycles_total if self.estimate else 0


@dataclass(frozen=True)
class Pick:
    """The recommendation for one board: the fastest candidate (Vela's estimate) that fits."""

    board: str
    candidate: str  # "" when none fits
    index: int  # into Advice.outcomes; -1 when none fits
    compile_spec: str
    lower_command: str  # the kit's command that lowers it, when there is one
    why: str


@dataclass(frozen=True)
class Advice:
    model: str  # what was compiled: the TOSA file(s) or the module
    boards: tuple[str, ...]
    outcomes: tuple[Outcome, ...]
    picks: tuple[Pick, ...]
    notes: tuple[str, ...]
    estimate_label: str = ESTIMATE_LABEL

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = encode(self)
        for o, out in zip(data["outcomes"], self.outcomes, strict=True):
            for f in o["fits"]:
                f.pop("plan", None)
            o["seconds"] = out.seconds if out.estimate else None
        return data


def outcome(
    candidate: Candidate,
    compiled: Compiled,
    boards: Sequence[Board],
    reference: ModelInfo | None,
) -> Outcome:
    """A compiled candidate planned on every board."""
    base = Outcome(
        candidate=candidate.name,
        compile_spec=candidate.compile_spec_text,
        vela_flags=candidate.target.flags,
    )
    if compiled.error:
        return replace(base, error=compiled.error)
    model, how = candidate_model(candidate.name, compiled, reference)
    estimate = compiled.partitions[0].estimate
    for p in compiled.partitions[1:]:
        estimate = estimate + p.estimate
    return replace(
        base,
        estimate=estimate,
        network=model.file_bytes,
        network_how=how,
        scratch=max(p.stream.scratch_size for p in compiled.partitions),
        fast_scratch=max(p.fast_scratch_size for p in compiled.partitions),
        fits=tuple(fit(model, b) for b in boards),
    )


def pick(
    outcomes: Sequence[Outcome],
    boards: Sequence[Board],
    lower_command: Callable[[Candidate], str] | None,
    candidates: Sequence[Candidate],
) -> tuple[Pick, ...]:
    """Per board, the candidate with the shortest estimated inference time that fits
    (ties: fewer cycles, then the order given)."""
    picks = []
    for bi, board in enumerate(boards):
        fitting = [i for i, o in enumerate(outcomes) if o.fits and o.fits[bi].fits]
        if not fitting:
            picks.append(
                Pick(board.name, "", -1, "", "", "no candidate fits: see each one's region")
            )
            continue
        best = min(
            fitting,
            key=lambda i: (outcomes[i].seconds, outcomes[i].cycles, i),
        )
        o = outcomes[best]
        assert o.estimate is not None
        why = (
            f"fastest of the {len(fitting)} candidate(s) that fit ({ESTIMATE_LABEL}: "
            f"{o.estimate.cycles_total:,} cycles, {o.seconds * 1e6:,.1f} us at "
            f"{o.estimate.clock_hz / 1e6:,.0f} MHz)"
        )
        command = lower_command(candidates[best]) if lower_command else ""
        picks.append(Pick(board.name, o.candidate, best, o.compile_spec, command, why))
    return tuple(picks)


def advise(
    model: str,
    candidates: Sequence[Candidate],
    compiled: Sequence[Compiled],
    boards: Sequence[Board],
    *,
    reference: ModelInfo | dict[str, ModelInfo] | None = None,
    lower_command: Callable[[Candidate], str] | None = None,
    notes: Sequence[str] = (),
) -> Advice:
    """The advice from the compiled candidates (same order). `reference` is the .pte of
    the same graph (or one per NPU kind, keyed by kind) for exact network sizes."""

    def ref(c: Candidate) -> ModelInfo | None:
        if isinstance(reference, dict):
            return reference.get(tosa_family(c.target.accelerator.kind))
        return reference

    outcomes = tuple(
        outcome(c, r, boards, ref(c)) for c, r in zip(candidates, compiled, strict=True)
    )
    return Advice(
        model=model,
        boards=tuple(b.name for b in boards),
        outcomes=outcomes,
        picks=pick(outcomes, boards, lower_command, candidates),
        notes=tuple(notes),
    )


def tosa_family(kind: NpuKind) -> str:
    """The TOSA profile ExecuTorch lowers for `kind` (EthosUCompileSpec._tosa_spec_for_target):
    the U55 and U65 share the "+u55" subset, the U85 has its own."""
    return "u85" if kind == NpuKind.U85 else "u55"

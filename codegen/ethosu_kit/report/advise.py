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

This module owns the fit, the outcome per candidate and board, and the pick; the
candidates are report.advise_candidates', the Vela compile and the candidate's
`ModelInfo` report.advise_compile's.

Layer: report (reads boards, plans with plan, builds models with pte); the CLI drives it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ethosu_kit.board.model import Board
from ethosu_kit.core.errors import FitError, PlanError
from ethosu_kit.core.sizes import size_text
from ethosu_kit.core.typed_json import encode
from ethosu_kit.plan.fill import region_fill
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.types import MemoryPlan
from ethosu_kit.pte.model import ModelInfo
from ethosu_kit.pte.vela_compile import Compiled, VelaEstimate
from ethosu_kit.report.advise_candidates import Candidate, tosa_family
from ethosu_kit.report.advise_compile import candidate_model

ESTIMATE_LABEL = "Vela's estimate"


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
    if spec is not None and not board.npu.supports(spec.accelerator.kind, spec.accelerator.macs):
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

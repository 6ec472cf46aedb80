"""Compile a TOSA flatbuffer with Vela's Python API for one target, the way ExecuTorch's
Ethos-U backend does (`backends/arm/arm_vela.py`), and keep what the kit needs: the
delegate payload's sizes (`VelaStream`, the block stream's length) and Vela's own
performance estimate (its summary CSV), for `ethosu-kit advise`.

The flags are ExecuTorch's (`EthosUCompileSpec._build_compiler_flags`): extra flags
first, then accelerator, config, raw output, system config and memory mode, so the
compile spec the kit reads back is the one a lowering with these settings would carry.
Vela is imported inside `compile_tosa`: importing this module stays cheap.
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import io
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_PTE, read_bytes
from ethosu_kit.core.sizes import align_up
from ethosu_kit.npu.facts import NPU_ALIGN, Accelerator, MemoryMode
from ethosu_kit.pte.compile_spec import parse_ethosu_compile_spec
from ethosu_kit.pte.model import EthosUCompileSpec, VelaStream, VelaTensor
from ethosu_kit.pte.vela import parse_cop_header

# A TOSA flatbuffer names itself with the file identifier "TOSA" at bytes 4..8.
TOSA_IDENTIFIER = b"TOSA"
_BLOCK_HEADER = 32  # arm_vela.py: name[16], u32 size, u8 external, 11 reserved
_IO_RECORD = 36  # i32 shape[6], elem_size, offset, region
# ExecuTorch's defaults per product (EthosUCompileSpec._default_system_config_and_memory_mode)
DEFAULT_SYSTEM_CONFIG = {
    "ethos-u55": "Ethos_U55_High_End_Embedded",
    "ethos-u65": "Ethos_U65_High_End",
    "ethos-u85": "Ethos_U85_SYS_DRAM_Mid",
}
# the memories Vela's summary reports, as its CSV columns name them
VELA_MEMORIES = ("sram", "dram", "on_chip_flash", "off_chip_flash")


class VelaCompileError(KitError):
    """Vela refused the TOSA graph for a target (its last line of output says why)."""


@dataclass(frozen=True)
class VelaTarget:
    """One Vela configuration: what ExecuTorch's EthosUCompileSpec would be given."""

    accelerator: Accelerator
    system_config: str
    memory_mode: str  # the vela.ini name, e.g. "Dedicated_Sram_384KB"
    arena_cache_size: int | None = None  # --arena-cache-size: the fast scratch bound
    config_ini: str = "Arm/vela.ini"

    @property
    def mode(self) -> MemoryMode:
        return MemoryMode.parse(self.memory_mode)

    @property
    def extra_flags(self) -> tuple[str, ...]:
        if self.arena_cache_size is None:
            return ()
        return (f"--arena-cache-size={self.arena_cache_size}",)

    @property
    def flags(self) -> tuple[str, ...]:
        return (
            *self.extra_flags,
            f"--accelerator-config={self.accelerator}",
            f"--config={self.config_ini}",
            "--output-format=raw",
            f"--system-config={self.system_config}",
            f"--memory-mode={self.memory_mode}",
        )

    def compile_spec(self) -> EthosUCompileSpec:
        """The compile spec a .pte lowered with these settings carries (as pte reads it)."""
        specs = (
            ("compile_flags", " ".join(self.flags).encode()),
            ("target", str(self.accelerator).encode()),
        )
        return parse_ethosu_compile_spec(specs, str(self.accelerator))


@dataclass(frozen=True)
class VelaEstimate:
    """Vela's performance estimate of one compiled graph (its summary CSV), per memory
    (`VELA_MEMORIES`): an estimate from Vela's model, not a measurement."""

    cycles_total: int
    cycles_npu: int
    cycles_access: dict[str, int]  # per memory: cycles spent on its accesses
    bytes_total: dict[str, int]  # per memory: bytes read and written per inference
    memory_used: dict[str, int]  # per memory: bytes Vela placed there (its "Total ... used")
    clock_hz: float
    inference_time: float  # seconds
    macs: int
    cpu_operators: int  # operators Vela left to the CPU (0 when all run on the NPU)

    def __add__(self, other: VelaEstimate) -> VelaEstimate:
        """Two partitions run one after the other: their cycles and bytes add up."""

        def add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
            return {k: a.get(k, 0) + b.get(k, 0) for k in {**a, **b}}

        return VelaEstimate(
            cycles_total=self.cycles_total + other.cycles_total,
            cycles_npu=self.cycles_npu + other.cycles_npu,
            cycles_access=add(self.cycles_access, other.cycles_access),
            bytes_total=add(self.bytes_total, other.bytes_total),
            memory_used={
                k: max(self.memory_used.get(k, 0), other.memory_used.get(k, 0))
                for k in {**self.memory_used, **other.memory_used}
            },
            clock_hz=self.clock_hz,
            inference_time=self.inference_time + other.inference_time,
            macs=self.macs + other.macs,
            cpu_operators=self.cpu_operators + other.cpu_operators,
        )


@dataclass(frozen=True)
class CompiledTosa:
    """One TOSA graph compiled for one target: the delegate payload it makes and Vela's
    estimate."""

    stream: VelaStream
    stream_bytes: int  # the delegate's processed bytes (the block stream arm_vela.py packs)
    fast_scratch_size: int  # Vela's region 2 need (0 unless Dedicated_Sram)
    estimate: VelaEstimate


def require_vela() -> None:
    """A KitError when Vela is not installed (advise's one optional dependency)."""
    try:
        found = importlib.util.find_spec("ethosu.vela") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise KitError(
            "advise compiles with Vela, which is not installed",
            hint="pip install ethos-u-vela (executorch[ethos-u] installs it too)",
        )


def preload_vela() -> None:
    """Import Vela now (0.7 s): workers forked after this start with it loaded."""
    import numpy  # noqa: F401, PLC0415 - only advise compiles
    from ethosu.vela import vela  # noqa: F401, PLC0415 - slow, only advise compiles


# A TOSA graph holds the weights a .pte would: the .pte's limit, named for the message
MAX_TOSA = replace(MAX_PTE, what="a .tosa")


def check_tosa(path: Path) -> bytes:
    """The bytes of `path` when it is a TOSA flatbuffer; a KitError naming it otherwise.
    Read as a regular file of bounded size: a FIFO given to advise blocked forever and
    /dev/zero was read until the kernel killed the process."""
    data = read_bytes(path, MAX_TOSA, KitError)
    if data[4:8] != TOSA_IDENTIFIER:
        raise KitError(
            f"{path}: not a TOSA flatbuffer (no 'TOSA' identifier at byte 4)",
            hint="give the .tosa file ExecuTorch's Ethos-U lowering writes with "
            "compile_spec.dump_intermediate_artifacts_to(DIR) (output_tag*_TOSA-*.tosa)",
        )
    return data


def tosa_files(folder: Path) -> tuple[Path, ...]:
    """The TOSA graphs ExecuTorch's Arm backend dumps into an intermediate-artifacts
    folder (`dump_intermediate_artifacts_to`): `output_tag<N>_TOSA-<profile>.tosa`, one
    per delegate partition, in partition order. (Its `out.tosa` is Vela's working copy of
    the last one compiled, so it is not taken.)"""

    def order(path: Path) -> tuple[int, str]:
        tag = path.name.removeprefix("output_tag").split("_", 1)[0]
        return (int(tag) if tag.isdigit() else 1 << 30, path.name)

    return tuple(sorted(folder.glob("output*_TOSA-*.tosa"), key=order))


def stream_bytes(cmd: int, weights: int, n_inputs: int, n_outputs: int) -> int:
    """Bytes of the block stream arm_vela.py packs: header, cmd_data, weight_data,
    scratch_size, inputs, outputs, footer, each a 32-byte header and 16-padded data."""
    sizes = (0, cmd, weights, 4, 4 + _IO_RECORD * n_inputs, 4 + _IO_RECORD * n_outputs, 0)
    return sum(_BLOCK_HEADER + align_up(s, NPU_ALIGN) for s in sizes)


def _io(npz: Any, prefix: str) -> tuple[VelaTensor, ...]:
    """The `input`/`output` records of Vela's npz (numpy's NpzFile) as VelaTensors."""
    shapes = npz[f"{prefix}_shape"]
    return tuple(
        VelaTensor(
            tuple(int(d) for d in shapes[i]),
            int(npz[f"{prefix}_elem_size"][i]),
            int(npz[f"{prefix}_offset"][i]),
            int(npz[f"{prefix}_region"][i]),
        )
        for i in range(len(shapes))
    )


def _estimate(summary: Path) -> VelaEstimate:
    with summary.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise VelaCompileError(f"{summary.name}: Vela wrote an empty summary")
    row = rows[0]

    def num(key: str) -> float:
        try:
            return float(row.get(key) or 0)
        except ValueError:
            return 0.0

    return VelaEstimate(
        cycles_total=round(num("cycles_total")),
        cycles_npu=round(num("cycles_npu")),
        cycles_access={m: round(num(f"cycles_{m}_access")) for m in VELA_MEMORIES},
        bytes_total={m: round(num(f"{m}_total_bytes")) for m in VELA_MEMORIES},
        memory_used={m: round(num(f"{m}_memory_used") * 1024) for m in VELA_MEMORIES},
        clock_hz=num("core_clock"),
        inference_time=num("inference_time"),
        macs=round(num("nn_macs")),
        cpu_operators=0,
    )


def _cpu_operators(output: str) -> int:
    for line in output.splitlines():
        if line.startswith("CPU operators ="):
            try:
                return int(line.split("=", 1)[1].split()[0])
            except (IndexError, ValueError):
                return 0
    return 0


def compile_tosa(tosa: Path, target: VelaTarget) -> CompiledTosa:
    """Compile `tosa` with Vela for `target` in a temporary folder; what it made.

    Vela's printout is kept off the caller's stdout; its last line is the message of the
    VelaCompileError when Vela refuses the graph or the target.
    """
    import numpy as np  # noqa: PLC0415 - only advise compiles
    from ethosu.vela import vela  # noqa: PLC0415 - slow, only advise compiles

    check_tosa(tosa)
    output = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="ethosu-kit-vela-") as tmp:
        out_dir = Path(tmp) / "output"
        args = [*target.flags, f"--output-dir={out_dir}", str(tosa)]
        try:
            with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
                rc = vela.main(args)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except Exception as exc:  # Vela's own refusal of this graph or target
            raise VelaCompileError(f"Vela: {type(exc).__name__}: {_first_line(str(exc))}") from None
        npz_path = out_dir / f"{tosa.stem}_vela.npz"
        if rc or not npz_path.is_file():
            lines = [ln for ln in output.getvalue().splitlines() if ln.strip()]
            raise VelaCompileError(f"Vela: {lines[-1] if lines else f'exit {rc}'}")
        with np.load(npz_path, allow_pickle=False) as npz:
            cmd = npz["cmd_data"].tobytes()
            weights = npz["weight_data"].tobytes()
            scratch = int(npz["scratch_shape"][0])
            fast = int(npz["scratch_fast_shape"][0]) if "scratch_fast_shape" in npz else 0
            inputs, outputs = _io(npz, "input"), _io(npz, "output")
        summaries = sorted(out_dir.glob(f"{tosa.stem}_summary_*.csv"))
        if not summaries:
            raise VelaCompileError(f"Vela wrote no summary CSV for {tosa.name}")
        estimate = _estimate(summaries[0])
    estimate = replace(estimate, cpu_operators=_cpu_operators(output.getvalue()))
    stream = VelaStream(
        cmd_bytes=len(cmd),
        weight_bytes=len(weights),
        scratch_size=scratch,
        inputs=inputs,
        outputs=outputs,
        cop=parse_cop_header(cmd, str(tosa)),
        external=False,
    )
    return CompiledTosa(
        stream=stream,
        stream_bytes=stream_bytes(len(cmd), len(weights), len(inputs), len(outputs)),
        fast_scratch_size=fast,
        estimate=estimate,
    )


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]


@dataclass(frozen=True)
class Compiled:
    """Every partition of a model compiled for one target, or why Vela refused one."""

    target: VelaTarget
    partitions: tuple[CompiledTosa, ...] = ()
    error: str = ""


def compile_partitions(tosas: tuple[Path, ...], target: VelaTarget) -> Compiled:
    """Each TOSA graph (one per delegate partition, in order) compiled for `target`.

    A process-pool job: its result is plain data and a refusal is a result, not an
    exception, so one candidate Vela cannot compile does not end the others.
    """
    try:
        return Compiled(target, tuple(compile_tosa(t, target) for t in tosas))
    except KitError as exc:
        return Compiled(target, error=exc.message)

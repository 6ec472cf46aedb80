"""What a lowered .pte holds, as the rest of the kit needs it.

Stage 1 of the data flow (pte -> model info -> memory plan -> generated files -> ELF -> check).
`ethosu_kit.pte` fills these types from the file; nothing here reads bytes.
All sizes are in bytes. The types are frozen so a plan or a generator cannot
change what the model said.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ethosu_kit.npu.facts import PRODUCT_IDS, VELA_REGION_SCRATCH, Accelerator, MemoryMode


@dataclass(frozen=True)
class TensorInfo:
    """A method input or output as the ExecuTorch program declares it."""

    dtype: str  # torch-style name: "int8", "float32", ...
    shape: tuple[int, ...]
    nbytes: int
    # memory-planned into a mem_id: its bytes live inside a planned buffer, so the
    # firmware needs no buffer of its own for it
    planned: bool = True


@dataclass(frozen=True)
class VelaTensor:
    """An entry of the Vela `inputs` / `outputs` block: where the NPU reads or writes it."""

    shape: tuple[int, ...]  # always 6-D, padded with leading 1s
    elem_size: int
    offset: int  # byte offset inside `region`
    region: int  # Vela region index: 1 = scratch

    @property
    def nbytes(self) -> int:
        n = self.elem_size
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class CopHeader:
    """The driver-action header at the start of `cmd_data` (see command-stream reference 2.2)."""

    config: int  # NPU CONFIG register value the stream was compiled for
    id: int  # NPU ID register value (architecture version)
    command_words: int  # length of the register command stream in 32-bit words
    command_offset: int  # byte offset of the register command stream inside cmd_data

    @property
    def product(self) -> str:
        """ "ethos-u55" / "ethos-u65" / "ethos-u85" from CONFIG.product (bits 31:28)."""
        product = (self.config >> 28) & 0xF
        return PRODUCT_IDS.get(product, f"unknown-product-{product}")

    @property
    def macs_per_cc(self) -> int:
        return 1 << (self.config & 0xF)


# What Vela writes in an IO record: int8/int16/int32 tensors in region 1, the scratch
# arena the delegate copies inputs into and outputs out of.
VELA_ELEM_SIZES = (1, 2, 4)


def vela_io_problems(
    inputs: tuple[VelaTensor, ...], outputs: tuple[VelaTensor, ...], scratch_size: int
) -> tuple[str, ...]:
    """What is wrong with a delegate's IO records, one phrase per record ("input 0: ...").

    A record the delegate cannot honour: a dimension that is not positive, an element
    size Vela never writes, a region other than the scratch, or bytes that lie outside
    the `scratch_size`-byte scratch arena (the NPU would write outside the memory the
    plan gives it). Empty when every record is sound.
    """
    problems = []
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, t in enumerate(tensors):
            what = f"{kind} {i} (shape {list(t.shape)}, element size {t.elem_size})"
            if any(d <= 0 for d in t.shape):
                problems.append(f"{what}: dimensions must be positive")
            elif t.elem_size not in VELA_ELEM_SIZES:
                problems.append(f"{what}: element size must be 1, 2 or 4 bytes")
            elif t.region != VELA_REGION_SCRATCH:
                problems.append(
                    f"{what}: lives in region {t.region}, not the scratch "
                    f"(region {VELA_REGION_SCRATCH})"
                )
            elif t.offset < 0 or t.offset + t.nbytes > scratch_size:
                problems.append(
                    f"{what}: bytes {t.offset}..{t.offset + t.nbytes} lie outside the "
                    f"{scratch_size}-byte scratch arena"
                )
    return tuple(problems)


@dataclass(frozen=True)
class VelaStream:
    """One Ethos-U delegate's compiled payload (the Vela block stream)."""

    cmd_bytes: int  # size of the cmd_data block (COP1 header + command stream)
    weight_bytes: int
    scratch_size: int  # region 1 (scratch arena) bytes the delegate allocates per execute
    inputs: tuple[VelaTensor, ...]
    outputs: tuple[VelaTensor, ...]
    cop: CopHeader
    external: bool  # data blocks are keys into the named-data map instead of inline bytes

    @property
    def io_problems(self) -> tuple[str, ...]:
        """`vela_io_problems` of this delegate (empty when its IO fits its scratch)."""
        return vela_io_problems(self.inputs, self.outputs, self.scratch_size)


@dataclass(frozen=True)
class EthosUCompileSpec:
    """What the Ethos-U compile specs say the delegate was compiled for."""

    accelerator: Accelerator  # e.g. ethos-u85-256, parsed once from the compile specs
    system_config: str  # e.g. "Ethos_U85_SYS_DRAM_Mid"
    memory_mode: MemoryMode
    memory_mode_name: str  # as written, e.g. "Dedicated_Sram_384KB"
    config_ini: str  # e.g. "Arm/vela.ini"
    flags: tuple[str, ...]  # every vela flag, verbatim
    arena_cache_size: int | None  # explicit --arena-cache-size, if any


@dataclass(frozen=True)
class Delegate:
    """A delegate call of a method, whatever its backend."""

    backend_id: str
    compile_specs: tuple[tuple[str, bytes], ...]
    processed_bytes: int  # size of the processed blob
    ethosu: EthosUCompileSpec | None = None  # set for EthosUBackend
    vela: VelaStream | None = None  # set for EthosUBackend

    @property
    def is_ethosu(self) -> bool:
        return self.vela is not None


@dataclass(frozen=True)
class MethodInfo:
    """One execution plan of the program."""

    name: str
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    # non_const_buffer_sizes[1:]: one size per mem_id (index 0 of the program's list is reserved)
    planned_buffers: tuple[int, ...]
    cpu_operators: tuple[str, ...]  # "ns::name.overload" the firmware must register
    delegates: tuple[Delegate, ...]
    num_values: int  # EValues the runtime allocates for the method
    num_instructions: int
    num_tensors: int  # of the values, how many are tensors


@dataclass(frozen=True)
class ModelInfo:
    """Everything the kit learns from one .pte."""

    path: str
    file_bytes: int
    constant_bytes: int  # constant buffers + constant segment data
    methods: tuple[MethodInfo, ...]
    segments: tuple[int, ...] = field(default=())  # sizes of the extended-header data segments
    sha256: str = ""  # of the whole file: ties a plan and a generated project to these bytes

    # -- derived views used by the planner and reports ---------------------------------

    @property
    def ethosu_delegates(self) -> tuple[Delegate, ...]:
        return tuple(d for m in self.methods for d in m.delegates if d.is_ethosu)

    @property
    def compile_spec(self) -> EthosUCompileSpec | None:
        """The Ethos-U target the model was compiled for (all delegates agree, checked by pte)."""
        for d in self.ethosu_delegates:
            return d.ethosu
        return None

    @property
    def peak_scratch(self) -> int:
        """The temp allocator is reset per instruction, so the largest delegate sets the need."""
        return max((d.vela.scratch_size for d in self.ethosu_delegates if d.vela), default=0)

    @property
    def cpu_operators(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for m in self.methods:
            for op in m.cpu_operators:
                seen[op] = None
        return tuple(seen)

    def to_dict(self) -> dict[str, Any]:
        def convert(obj: Any) -> Any:
            if isinstance(obj, bytes):
                return obj.decode("utf-8", "replace")
            if isinstance(obj, dict):
                return {k: convert(v) for k, v in obj.items()}
            if isinstance(obj, list | tuple):
                return [convert(v) for v in obj]
            return obj

        d: dict[str, Any] = convert(asdict(self))
        d["peak_scratch"] = self.peak_scratch
        for method, m in zip(d["methods"], self.methods, strict=True):
            for dd, delegate in zip(method["delegates"], m.delegates, strict=True):
                if delegate.ethosu is not None:  # its Vela name, as model_info.json always had
                    dd["ethosu"]["accelerator"] = str(delegate.ethosu.accelerator)
                if delegate.vela is not None and dd.get("vela") is not None:
                    dd["vela"]["io_problems"] = list(delegate.vela.io_problems)
        d["cpu_operators"] = list(self.cpu_operators)
        return d

"""From a checked .pte to ModelInfo (and to the raw Vela payloads)."""

from __future__ import annotations

import hashlib
import re
import struct
from dataclasses import replace
from pathlib import Path

from ethosu_kit.core.errors import PteError
from ethosu_kit.core.files import MAX_PTE, read_bytes
from ethosu_kit.pte._flatbuffer import Malformed
from ethosu_kit.pte.compile_spec import ETHOSU_BACKEND_ID, parse_ethosu_compile_spec
from ethosu_kit.pte.container import PteFile, open_pte
from ethosu_kit.pte.model import Delegate, EthosUCompileSpec, MethodInfo, ModelInfo, TensorInfo
from ethosu_kit.pte.program import (
    DELEGATE_CALL,
    INLINE,
    KERNEL_CALL,
    SEGMENT,
    RawDelegate,
    RawPlan,
    RawValue,
)
from ethosu_kit.pte.ptd import ExternalData
from ethosu_kit.pte.vela import VelaBlocks, parse_vela_blocks

# executorch ScalarType (schema/scalar_type.fbs) -> (torch dtype name, element bytes)
SCALAR_TYPES: dict[int, tuple[str, int]] = {
    0: ("uint8", 1),
    1: ("int8", 1),
    2: ("int16", 2),
    3: ("int32", 4),
    4: ("int64", 8),
    5: ("float16", 2),
    6: ("float32", 4),
    7: ("float64", 8),
    11: ("bool", 1),
    12: ("qint8", 1),
    13: ("quint8", 1),
    14: ("qint32", 4),
    15: ("bfloat16", 2),
    16: ("quint4x2", 1),
    17: ("quint2x4", 1),
    22: ("bits16", 2),
    23: ("float8_e5m2", 1),
    24: ("float8_e4m3fn", 1),
    25: ("float8_e5m2fnuz", 1),
    26: ("float8_e4m3fnuz", 1),
    27: ("uint16", 2),
    28: ("uint32", 4),
    29: ("uint64", 8),
}


# ExecuTorch's kTensorDimensionLimit: the runtime refuses more dimensions
MAX_RANK = 16


def _value(plan: RawPlan, index: int, what: str) -> RawValue:
    if not 0 <= index < len(plan.values):
        raise Malformed(f"{what} refers to value {index}, the method has {len(plan.values)}")
    return plan.values[index]


def _tensor_info(plan: RawPlan, index: int, what: str) -> TensorInfo:
    value = _value(plan, index, what)
    t = value.tensor
    if t is None:  # a scalar or list input (e.g. an int argument): no buffer to place
        return TensorInfo(dtype=value.kind.lower(), shape=(), nbytes=0)
    if t.scalar_type not in SCALAR_TYPES:
        raise Malformed(f"{what} has unknown scalar type {t.scalar_type}")
    if any(d < 0 for d in t.sizes):
        raise Malformed(f"{what} has a negative dimension {t.sizes}")
    if len(t.sizes) > MAX_RANK:
        raise Malformed(f"{what} has {len(t.sizes)} dimensions, ExecuTorch allows {MAX_RANK}")
    dtype, elem = SCALAR_TYPES[t.scalar_type]
    nbytes = elem
    for d in t.sizes:
        nbytes *= d
    if nbytes >= 1 << 32:
        raise Malformed(
            f"{what} of shape {list(t.sizes)} {dtype} is {nbytes} bytes: more than a 32-bit "
            "address space holds"
        )
    return TensorInfo(dtype=dtype, shape=t.sizes, nbytes=nbytes, planned=t.planned)


def _cpu_operators(plan: RawPlan, what: str) -> tuple[str, ...]:
    """The kernels the runtime resolves: one per operator a KernelCall uses, in table order."""
    used: set[int] = set()
    for ins in plan.instructions:
        if ins.tag == KERNEL_CALL:
            if not 0 <= ins.index < len(plan.operators):
                raise Malformed(
                    f"{what}: a kernel call uses operator {ins.index}, "
                    f"the method has {len(plan.operators)}"
                )
            used.add(ins.index)
        elif ins.tag == DELEGATE_CALL and not 0 <= ins.index < len(plan.delegates):
            raise Malformed(
                f"{what}: a delegate call uses delegate {ins.index}, "
                f"the method has {len(plan.delegates)}"
            )
    names = []
    for i in sorted(used):
        name, overload = plan.operators[i]
        if not _OPERATOR.fullmatch(name) or not _OVERLOAD.fullmatch(overload):
            raise Malformed(
                f"{what}: operator {i} has a name that is not an operator name: "
                f"{(name + '.' + overload)[:80]!r}"
            )
        names.append(f"{name}.{overload}" if overload else name)
    return tuple(names)


# An operator is `namespace::name` and an overload `out` / `Tensor_out`: identifiers.
# They are written into the generated C, CMake and kit_operators.txt, so nothing else.
_OPERATOR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*")
_OVERLOAD = re.compile(r"[A-Za-z0-9_]*")
# A method name goes into C strings and comments: printable, without comment ends.
_METHOD = re.compile(r"[!-~]{1,256}")


def _processed(pte: PteFile, d: RawDelegate, what: str) -> tuple[int, int]:
    """(absolute offset, size) of a delegate's processed blob inside the file."""
    if d.location == INLINE:
        inline = pte.program.inline_delegate_data
        if not 0 <= d.index < len(inline):
            raise Malformed(
                f"{what} refers to inline delegate data {d.index}, the program has {len(inline)}"
            )
        return inline[d.index]
    if d.location == SEGMENT:
        return pte.segment_span(d.index, what)
    raise Malformed(f"{what} has unknown data location {d.location}")


def _named_segments(pte: PteFile) -> dict[str, int]:
    """Named-data key -> segment index (for external Vela blocks)."""
    return {key: index for key, index in pte.program.named_data}


def _vela(
    pte: PteFile, plan: RawPlan, i: int, d: RawDelegate, what: str, *, external: ExternalData
) -> VelaBlocks:
    start, size = _processed(pte, d, what)
    named = _named_segments(pte)

    def resolve(key: str) -> tuple[int, bytes, str] | None:
        if key not in named:
            ptd = external.find(key)
            if ptd is None:
                return None
            return ptd.entries[key].offset, ptd.payload(key), ptd.tag
        at, length = pte.segment_span(named[key], f"named data {key[:16]}…")
        return at, pte.data[at : at + length], ""

    blocks = parse_vela_blocks(
        pte.data[start : start + size], what, plan.name, i, resolve, base=start
    )
    inputs, outputs = _delegate_ranks(plan, i, len(blocks.inputs), len(blocks.outputs))
    return replace(blocks, input_ranks=inputs, output_ranks=outputs)


def _delegate_ranks(
    plan: RawPlan, index: int, n_in: int, n_out: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Ranks of the tensors a delegate call passes (inputs, then outputs), or () when the
    call's arguments do not line up with the delegate's Vela IO."""
    for ins in plan.instructions:
        if ins.tag != DELEGATE_CALL or ins.index != index:
            continue
        ranks = [
            len(t.sizes)
            for v in ins.args
            if 0 <= v < len(plan.values) and (t := plan.values[v].tensor) is not None
        ]  # scalar and list arguments carry no tensor
        if len(ranks) == n_in + n_out:
            return tuple(ranks[:n_in]), tuple(ranks[n_in:])
        break
    return (), ()


def _delegates(
    pte: PteFile, plan: RawPlan, what: str, external: ExternalData
) -> tuple[Delegate, ...]:
    out = []
    for i, d in enumerate(plan.delegates):
        dwhat = f"{what} delegate {i} ({d.id})"
        _, size = _processed(pte, d, dwhat)
        if d.id == ETHOSU_BACKEND_ID:
            spec = parse_ethosu_compile_spec(d.compile_specs, dwhat)
            stream = _vela(pte, plan, i, d, dwhat, external=external).to_stream()
            out.append(Delegate(d.id, d.compile_specs, size, spec, stream))
        else:
            out.append(Delegate(d.id, d.compile_specs, size))
    return tuple(out)


def _method(pte: PteFile, plan: RawPlan, external: ExternalData) -> MethodInfo:
    if not _METHOD.fullmatch(plan.name) or "*/" in plan.name or "/*" in plan.name:
        raise Malformed(f"method name {plan.name[:80]!r} is not a plain printable name")
    what = f"method '{plan.name}'"
    return MethodInfo(
        name=plan.name,
        inputs=tuple(_tensor_info(plan, v, f"{what} input {n}") for n, v in enumerate(plan.inputs)),
        outputs=tuple(
            _tensor_info(plan, v, f"{what} output {n}") for n, v in enumerate(plan.outputs)
        ),
        planned_buffers=plan.non_const_buffer_sizes[1:],
        cpu_operators=_cpu_operators(plan, what),
        delegates=_delegates(pte, plan, what, external),
        num_values=len(plan.values),
        num_instructions=len(plan.instructions),
        num_tensors=sum(1 for v in plan.values if v.tensor is not None),
    )


def _constant_bytes(pte: PteFile) -> int:
    total = sum(pte.program.constant_buffer_sizes)
    seg = pte.program.constant_segment
    if seg is not None and seg[1]:
        total += pte.segment_span(seg[0], "the constant segment")[1]
    return total


def _check_one_target(methods: tuple[MethodInfo, ...]) -> None:
    first: tuple[str, EthosUCompileSpec] | None = None
    for m in methods:
        for i, d in enumerate(m.delegates):
            if d.ethosu is None:
                continue
            if first is None:
                first = (f"method '{m.name}' delegate {i}", d.ethosu)
                continue
            where, spec = first
            if (spec.accelerator, spec.memory_mode) != (d.ethosu.accelerator, d.ethosu.memory_mode):
                raise Malformed(
                    f"Ethos-U delegates disagree: {where} is {spec.accelerator} "
                    f"{spec.memory_mode_name}, method '{m.name}' delegate {i} is "
                    f"{d.ethosu.accelerator} {d.ethosu.memory_mode_name}"
                )


def parse_pte(data: bytes, path: str, external: ExternalData | None = None) -> ModelInfo:
    """ModelInfo of .pte bytes (external Vela blocks resolved through `external`, the
    .ptd files given); raises PteError naming `path` (no safety net: fuzzed)."""
    external = external or ExternalData()
    try:
        pte = open_pte(data)
        if any(n < 0 for p in pte.program.plans for n in p.non_const_buffer_sizes):
            raise Malformed("a planned buffer has a negative size")
        methods = tuple(_method(pte, p, external) for p in pte.program.plans)
        if not methods:
            raise Malformed("the program has no methods")
        _check_one_target(methods)
        return ModelInfo(
            path=path,
            file_bytes=len(data),
            constant_bytes=_constant_bytes(pte),
            methods=methods,
            segments=tuple(size for _, size in pte.program.segments),
            sha256=hashlib.sha256(data).hexdigest(),
        )
    except Malformed as exc:
        raise PteError(_missing(path, str(exc), external), hint=_hint(str(exc))) from None


def _missing(path: str, message: str, external: ExternalData) -> str:
    """A key no .ptd holds: name the files looked in (or that none was given)."""
    if "separate .ptd" not in message:
        return f"{path}: {message}"
    if not external.files:
        return f"{path}: {message}; no .ptd file given (--ptd FILE) or beside the pte"
    return f"{path}: {message}; not in {external.names}"


def _hint(message: str) -> str | None:
    if message.startswith("truncated"):
        return "the file is cut short; copy or export the .pte again"
    if "separate .ptd" in message:
        return (
            "give the .ptd files ExecuTorch wrote with this pte (--ptd FILE, repeatable, "
            "or put them beside the pte); a .ptd of another lowering holds other keys"
        )
    if message.startswith("is "):  # the file as a whole: not a pte at all
        return "give the .pte written by ExecuTorch's to_executorch() (program.buffer)"
    return None


def read_pte_bytes(path: Path | str) -> bytes:
    """The bytes of a .pte file: a regular file, at most `files.MAX_PTE` (else PteError)."""
    return read_bytes(path, MAX_PTE, PteError)


def read_named(path: Path | str) -> tuple[bytes, str]:
    """A .pte's bytes and the name errors give it."""
    return read_pte_bytes(path), str(Path(path))


def _guarded(path: str, err: Exception) -> PteError:
    # A check we missed must still reach the user as one line, not a traceback.
    return PteError(f"{path}: malformed .pte ({type(err).__name__}: {err})")


def read_pte(path: Path | str, external: ExternalData | None = None) -> ModelInfo:
    """Read a .pte file into ModelInfo. Raises PteError with a one-line message."""
    data, name = read_named(path)
    return model_from_bytes(data, name, external)


def model_from_bytes(data: bytes, name: str, external: ExternalData | None = None) -> ModelInfo:
    """`parse_pte` behind the last-resort net of `read_pte` (for bytes already read)."""
    try:
        return parse_pte(data, name, external)
    except (IndexError, ValueError, struct.error, OverflowError, RecursionError) as exc:
        raise _guarded(name, exc) from exc


def vela_streams(data: bytes, path: str, external: ExternalData | None = None) -> list[VelaBlocks]:
    """Every Ethos-U delegate's VelaBlocks, in method then delegate order (no safety net)."""
    external = external or ExternalData()
    try:
        pte = open_pte(data)
        out = []
        for plan in pte.program.plans:
            for i, d in enumerate(plan.delegates):
                if d.id == ETHOSU_BACKEND_ID:
                    what = f"method '{plan.name}' delegate {i} ({d.id})"
                    out.append(_vela(pte, plan, i, d, what, external=external))
        return out
    except Malformed as exc:
        raise PteError(_missing(path, str(exc), external), hint=_hint(str(exc))) from None


def read_vela_streams(path: Path | str, external: ExternalData | None = None) -> list[VelaBlocks]:
    """The raw Vela payload of every Ethos-U delegate of a .pte file."""
    data, name = read_named(path)
    return vela_streams_from_bytes(data, name, external)


def vela_streams_from_bytes(
    data: bytes, name: str, external: ExternalData | None = None
) -> list[VelaBlocks]:
    """`vela_streams` behind the last-resort net of `read_vela_streams`."""
    try:
        return vela_streams(data, name, external)
    except (IndexError, ValueError, struct.error, OverflowError, RecursionError) as exc:
        raise _guarded(name, exc) from exc

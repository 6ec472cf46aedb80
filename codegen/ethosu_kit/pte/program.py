"""Typed accessors for the ExecuTorch program schema (`schema/program.fbs`, file id ET12).

Only the fields the kit uses are read. Field ids are the declaration order of each
table in program.fbs (a union field takes two ids: its `_type` tag, then the value).
The result is a plain record tree (`RawProgram`) that mirrors the schema, so tests
can compare it field by field with executorch's own deserializer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ethosu_kit.pte._flatbuffer import FbTable, Malformed, root


# -- field ids, from program.fbs --------------------------------------------------------
class _Program:
    VERSION, EXECUTION_PLAN, CONSTANT_BUFFER, BACKEND_DELEGATE_DATA = 0, 1, 2, 3
    SEGMENTS, CONSTANT_SEGMENT, MUTABLE_DATA_SEGMENTS, NAMED_DATA = 4, 5, 6, 7


class _Plan:
    NAME, CONTAINER_META_TYPE, VALUES, INPUTS, OUTPUTS, CHAINS = 0, 1, 2, 3, 4, 5
    OPERATORS, DELEGATES, NON_CONST_BUFFER_SIZES = 6, 7, 8


class _Tensor:
    SCALAR_TYPE, STORAGE_OFFSET, SIZES, DIM_ORDER, REQUIRES_GRAD = 0, 1, 2, 3, 4
    DATA_BUFFER_IDX, ALLOCATION_INFO, LAYOUT, SHAPE_DYNAMISM = 5, 6, 7, 8


class _Chain:
    INPUTS, OUTPUTS, INSTRUCTIONS = 0, 1, 2


# EValue.val (KernelTypes union) tags: NONE=0 then the union's members in order
KERNEL_TYPES = (
    "None", "Null", "Int", "Bool", "Double", "Tensor", "String",
    "IntList", "DoubleList", "BoolList", "TensorList", "OptionalTensorList",
)  # fmt: skip
TENSOR_TAG = KERNEL_TYPES.index("Tensor")
INT_TAG = KERNEL_TYPES.index("Int")
DOUBLE_TAG = KERNEL_TYPES.index("Double")

# Instruction.instr_args (InstructionArguments union) tags
KERNEL_CALL, DELEGATE_CALL = 1, 2
INSTRUCTION_TYPES = ("None", "KernelCall", "DelegateCall", "MoveCall", "JumpFalseCall", "FreeCall")

# BackendDelegateDataReference.location (DataLocation)
INLINE, SEGMENT = 0, 1


@dataclass(frozen=True)
class RawTensor:
    scalar_type: int
    sizes: tuple[int, ...]
    data_buffer_idx: int
    planned: bool  # allocation_info present: memory-planned into a mem_id
    mem_id: int  # allocation_info.memory_id (0 when not planned)


@dataclass(frozen=True)
class RawValue:
    tag: int  # KernelTypes index
    tensor: RawTensor | None
    number: float | None = None  # an Int's or a Double's value (quantization arguments)

    @property
    def kind(self) -> str:
        return KERNEL_TYPES[self.tag] if self.tag < len(KERNEL_TYPES) else f"Unknown{self.tag}"


@dataclass(frozen=True)
class RawInstruction:
    tag: int  # InstructionArguments index
    index: int  # KernelCall.op_index / DelegateCall.delegate_index, else -1
    args: tuple[int, ...] = ()  # KernelCall/DelegateCall.args: value indices


@dataclass(frozen=True)
class RawDelegate:
    id: str
    location: int  # INLINE or SEGMENT
    index: int
    compile_specs: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class RawPlan:
    name: str
    values: tuple[RawValue, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    instructions: tuple[RawInstruction, ...]  # every chain's, in order
    operators: tuple[tuple[str, str], ...]  # (name, overload)
    delegates: tuple[RawDelegate, ...]
    non_const_buffer_sizes: tuple[int, ...]


@dataclass(frozen=True)
class RawProgram:
    version: int
    plans: tuple[RawPlan, ...]
    constant_buffer_sizes: tuple[int, ...]  # deprecated inline constants, one per buffer
    inline_delegate_data: tuple[tuple[int, int], ...]  # (offset, length) in the flatbuffer
    segments: tuple[tuple[int, int], ...]  # (offset from segment base, size)
    constant_segment: tuple[int, tuple[int, ...]] | None  # (segment index, offsets)
    mutable_data_segments: tuple[tuple[int, tuple[int, ...]], ...]
    named_data: tuple[tuple[str, int], ...]  # (key, segment index)


def _tensor(t: FbTable) -> RawTensor:
    alloc = t.table(_Tensor.ALLOCATION_INFO, "AllocationDetails")
    return RawTensor(
        scalar_type=t.i8(_Tensor.SCALAR_TYPE),
        sizes=t.i32s(_Tensor.SIZES),
        data_buffer_idx=t.u32(_Tensor.DATA_BUFFER_IDX),
        planned=alloc is not None,
        mem_id=alloc.u32(0) if alloc is not None else 0,
    )


def _value(v: FbTable) -> RawValue:
    tag, val = v.union(0, f"{v.what}.val")
    if tag == TENSOR_TAG:
        if val is None:
            raise Malformed(f"{v.what} is a Tensor without its table")
        return RawValue(tag, _tensor(val))
    if tag in (INT_TAG, DOUBLE_TAG) and val is not None:
        return RawValue(tag, None, float(val.i64(0)) if tag == INT_TAG else val.f64(0))
    return RawValue(tag, None)


def _instructions(plan: FbTable) -> tuple[RawInstruction, ...]:
    out: list[RawInstruction] = []
    for chain in plan.tables(_Plan.CHAINS, "Chain"):
        for ins in chain.tables(_Chain.INSTRUCTIONS, f"{chain.what}.instructions"):
            tag, args = ins.union(0, f"{ins.what}.instr_args")
            index = -1
            values: tuple[int, ...] = ()
            if tag in (KERNEL_CALL, DELEGATE_CALL):
                if args is None:
                    raise Malformed(f"{ins.what} has no arguments table")
                index = args.i32(0)
                values = args.i32s(1)
            out.append(RawInstruction(tag, index, values))
    return tuple(out)


def _delegate(d: FbTable) -> RawDelegate:
    ref = d.table(1, f"{d.what}.processed")
    specs = tuple((s.string(0), s.bytes_(1)) for s in d.tables(2, f"{d.what}.compile_specs"))
    return RawDelegate(
        id=d.string(0),
        location=ref.i8(0) if ref is not None else INLINE,
        index=ref.u32(1) if ref is not None else 0,
        compile_specs=specs,
    )


def _plan(p: FbTable) -> RawPlan:
    return RawPlan(
        name=p.string(_Plan.NAME),
        values=tuple(_value(v) for v in p.tables(_Plan.VALUES, "EValue")),
        inputs=p.i32s(_Plan.INPUTS),
        outputs=p.i32s(_Plan.OUTPUTS),
        instructions=_instructions(p),
        operators=tuple((o.string(0), o.string(1)) for o in p.tables(_Plan.OPERATORS, "Operator")),
        delegates=tuple(_delegate(d) for d in p.tables(_Plan.DELEGATES, "BackendDelegate")),
        non_const_buffer_sizes=p.i64s(_Plan.NON_CONST_BUFFER_SIZES),
    )


def _subsegment(s: FbTable) -> tuple[int, tuple[int, ...]]:
    return s.u32(0), s.u64s(1)


def parse_program(flatbuffer: bytes) -> RawProgram:
    """Read the Program table tree of a flatbuffer (the file up to `program_size`)."""
    prog = root(flatbuffer)
    const_seg = prog.table(_Program.CONSTANT_SEGMENT, "constant_segment")
    return RawProgram(
        version=prog.u32(_Program.VERSION),
        plans=tuple(_plan(p) for p in prog.tables(_Program.EXECUTION_PLAN, "ExecutionPlan")),
        constant_buffer_sizes=tuple(
            b.bytes_span(0)[1] for b in prog.tables(_Program.CONSTANT_BUFFER, "Buffer")
        ),
        inline_delegate_data=tuple(
            b.bytes_span(0)
            for b in prog.tables(_Program.BACKEND_DELEGATE_DATA, "BackendDelegateInlineData")
        ),
        segments=tuple((s.u64(0), s.u64(1)) for s in prog.tables(_Program.SEGMENTS, "DataSegment")),
        constant_segment=_subsegment(const_seg) if const_seg is not None else None,
        mutable_data_segments=tuple(
            _subsegment(s) for s in prog.tables(_Program.MUTABLE_DATA_SEGMENTS, "SubsegmentOffsets")
        ),
        named_data=tuple(
            (n.string(0), n.u32(1)) for n in prog.tables(_Program.NAMED_DATA, "NamedData")
        ),
    )

"""Every number read_pte reports, checked against executorch's own reading of the same file.

Oracles: executorch's deserializer (`exir._serialize._program`), its Vela block
writer's header struct and upstream's scratch-size script (`backends/arm/scripts`),
torch's element sizes, and the test model itself run in PyTorch (IO shapes, dtypes).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ethosu_kit.pte import read_pte, read_vela_streams
from ethosu_kit.pte.container import open_pte
from ethosu_kit.pte.model import ModelInfo
from models import MODELS

et_program = pytest.importorskip(
    "executorch.exir._serialize._program", reason="cross-checks need executorch"
)
torch = pytest.importorskip("torch", reason="cross-checks need torch")


def _upstream_script() -> ModuleType:
    import executorch

    script = (
        Path(next(iter(executorch.__path__)))
        / "backends/arm/scripts/get_ethosu_scratch_from_pte.py"
    )
    spec = importlib.util.spec_from_file_location("get_ethosu_scratch_from_pte", script)
    assert spec and spec.loader, script
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _raw_program(data: bytes) -> tuple[Any, Any]:
    """executorch's Program with segments as written (not moved back inline)."""
    eh = et_program._get_extended_header(data)
    size = eh.program_size if eh is not None and eh.is_valid() else len(data)
    return eh, et_program._flatbuffer_to_program(data[:size])


def _name(path: Path) -> str:
    return path.name.split("-")[0]


def _torch_dtype_names() -> dict[int, tuple[str, int]]:
    from executorch.exir.tensor import scalar_type_enum

    out = {}
    names = ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
             "bool", "bfloat16")  # fmt: skip
    for dtype in (getattr(torch, n) for n in names):
        out[int(scalar_type_enum(dtype))] = (str(dtype).removeprefix("torch."), dtype.itemsize)
    return out


def test_container_matches_executorch(any_pte: Path) -> None:
    data = any_pte.read_bytes()
    eh, program = _raw_program(data)
    pte = open_pte(data)
    assert eh is not None and eh.is_valid(), "executorch 1.5.1 always writes an extended header"
    assert (pte.program_size, pte.segment_base, pte.segment_data_size) == (
        eh.program_size,
        eh.segment_base_offset,
        eh.segment_data_size,
    )
    raw = pte.program
    assert raw.version == program.version
    assert raw.segments == tuple((s.offset, s.size) for s in program.segments)
    cs = program.constant_segment
    assert raw.constant_segment == (cs.segment_index, tuple(cs.offsets))
    assert raw.constant_buffer_sizes == tuple(len(b.storage) for b in program.constant_buffer)
    assert tuple(n for _, n in raw.inline_delegate_data) == tuple(
        len(d.data) for d in program.backend_delegate_data
    )
    assert raw.named_data == tuple((n.key, n.segment_index) for n in program.named_data or ())
    assert raw.mutable_data_segments == tuple(
        (s.segment_index, tuple(s.offsets)) for s in program.mutable_data_segments or ()
    )


def test_plans_match_executorch(any_pte: Path) -> None:
    data = any_pte.read_bytes()
    _, program = _raw_program(data)
    raw = open_pte(data).program
    assert len(raw.plans) == len(program.execution_plan)
    for mine, theirs in zip(raw.plans, program.execution_plan, strict=True):
        assert mine.name == theirs.name
        assert mine.inputs == tuple(theirs.inputs)
        assert mine.outputs == tuple(theirs.outputs)
        assert mine.non_const_buffer_sizes == tuple(theirs.non_const_buffer_sizes)
        assert mine.operators == tuple((o.name, o.overload) for o in theirs.operators)
        assert len(mine.values) == len(theirs.values)
        for v, ev in zip(mine.values, theirs.values, strict=True):
            assert v.kind == type(ev.val).__name__
            if v.tensor is not None:
                t = ev.val
                assert v.tensor.scalar_type == int(t.scalar_type)
                assert v.tensor.sizes == tuple(t.sizes)
                assert v.tensor.data_buffer_idx == t.data_buffer_idx
                assert v.tensor.planned == (t.allocation_info is not None)
                if t.allocation_info is not None:
                    assert v.tensor.mem_id == t.allocation_info.memory_id
        instructions = [i for c in theirs.chains for i in c.instructions]
        assert len(mine.instructions) == len(instructions)
        for ins, ei in zip(mine.instructions, instructions, strict=True):
            kind = type(ei.instr_args).__name__
            assert ("None", "KernelCall", "DelegateCall", "MoveCall", "JumpFalseCall",
                    "FreeCall")[ins.tag] == kind  # fmt: skip
            if kind == "KernelCall":
                assert ins.index == ei.instr_args.op_index
            if kind == "DelegateCall":
                assert ins.index == ei.instr_args.delegate_index
        for d, ed in zip(mine.delegates, theirs.delegates, strict=True):
            assert d.id == ed.id
            assert (d.location, d.index) == (int(ed.processed.location), ed.processed.index)
            assert d.compile_specs == tuple((c.key, bytes(c.value)) for c in ed.compile_specs)


def _check_model_info(info: ModelInfo, data: bytes, name: str) -> None:
    pte = et_program.deserialize_pte_binary(data)  # segments moved back inline
    program = pte.program
    _, raw = _raw_program(data)
    assert info.file_bytes == len(data)
    assert info.segments == tuple(s.size for s in raw.segments)
    assert info.constant_bytes == sum(len(b.storage) for b in program.constant_buffer)
    dtypes = _torch_dtype_names()
    for m, plan in zip(info.methods, program.execution_plan, strict=True):
        assert m.name == plan.name
        assert m.planned_buffers == tuple(plan.non_const_buffer_sizes[1:])
        assert m.num_values == len(plan.values)
        assert m.num_instructions == sum(len(c.instructions) for c in plan.chains)
        assert m.num_tensors == sum(type(v.val).__name__ == "Tensor" for v in plan.values)
        for infos, indices in ((m.inputs, plan.inputs), (m.outputs, plan.outputs)):
            for ti, index in zip(infos, indices, strict=True):
                t = plan.values[index].val
                dtype, size = dtypes[int(t.scalar_type)]
                assert ti.dtype == dtype
                assert ti.shape == tuple(t.sizes)
                assert ti.nbytes == size * int(torch.Size(t.sizes).numel())
        called = {
            i.instr_args.op_index
            for c in plan.chains
            for i in c.instructions
            if type(i.instr_args).__name__ == "KernelCall"
        }
        expect = [
            f"{o.name}.{o.overload}" if o.overload else o.name
            for k, o in enumerate(plan.operators)
            if k in called
        ]
        assert list(m.cpu_operators) == expect
        assert len(m.delegates) == len(plan.delegates)
        for d, ed in zip(m.delegates, plan.delegates, strict=True):
            assert d.backend_id == ed.id
            assert d.processed_bytes == len(program.backend_delegate_data[ed.processed.index].data)
            assert d.compile_specs == tuple((c.key, bytes(c.value)) for c in ed.compile_specs)
            assert d.is_ethosu == (ed.id == "EthosUBackend")


def test_model_info_matches_executorch(any_pte: Path) -> None:
    data = any_pte.read_bytes()
    _check_model_info(read_pte(any_pte), data, _name(any_pte))


def test_io_matches_the_pytorch_model(any_pte: Path) -> None:
    """The IO read from the file is what the model takes and returns in PyTorch."""
    module, inputs, _ = MODELS[_name(any_pte)].build()
    with torch.no_grad():
        outputs = module.eval()(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    (m,) = read_pte(any_pte).methods
    for ti, t in zip(m.inputs + m.outputs, inputs + outputs, strict=True):
        assert ti.dtype == str(t.dtype).removeprefix("torch.")
        assert ti.shape == tuple(t.shape)
        assert ti.nbytes == t.numel() * t.element_size()


def test_vela_blocks_match_upstream_parser(any_pte: Path) -> None:
    upstream = _upstream_script()
    from executorch.backends.arm.arm_vela import _BLOCK_HEADER

    data = any_pte.read_bytes()
    program = et_program.deserialize_pte_binary(data).program
    blobs = [
        program.backend_delegate_data[d.processed.index].data
        for plan in program.execution_plan
        for d in plan.delegates
        if d.id == "EthosUBackend"
    ]
    streams = read_vela_streams(any_pte)
    assert len(streams) == len(blobs)
    for vb, blob in zip(streams, blobs, strict=True):
        theirs = list(upstream.iter_vela_blocks(blob))
        assert [(b.name, b.data) for b in vb.blocks] == theirs
        offset = 0
        for b in vb.blocks:
            _, size, external, reserved = _BLOCK_HEADER.unpack_from(blob, offset)
            assert (b.size, b.external, reserved) == (size, bool(external), bytes(11))
            offset += _BLOCK_HEADER.size + (size + 15) // 16 * 16
        assert vb.scratch_size == upstream.get_scratch_size_from_delegate(blob)
        named = dict(theirs)
        assert vb.cmd_data == named["cmd_data"] and vb.weight_data == named["weight_data"]
        for block, tensors in (("inputs", vb.inputs), ("outputs", vb.outputs)):
            raw = named[block]
            (count,) = struct.unpack_from("<i", raw)
            assert count == len(tensors)
            for k, t in enumerate(tensors):
                fields = struct.unpack_from("<9i", raw, 4 + 36 * k)
                assert (*t.shape, t.elem_size, t.offset, t.region) == fields


def test_peak_scratch_matches_upstream_script(any_pte: Path) -> None:
    upstream = _upstream_script()
    with contextlib.redirect_stdout(io.StringIO()):
        scratch = upstream.get_scratch_from_pte(str(any_pte))
    assert read_pte(any_pte).peak_scratch == (scratch or 0)


def test_vela_stream_matches_target(any_pte: Path) -> None:
    """The COP1 header's CONFIG names the NPU and MACs the compile specs asked for."""
    info = read_pte(any_pte)
    model = MODELS[_name(any_pte)]
    if not model.delegate:
        assert info.ethosu_delegates == () and info.compile_spec is None
        return
    spec = info.compile_spec
    assert spec is not None
    assert str(spec.accelerator) == model.target.accelerator
    assert spec.memory_mode_name == model.target.memory_mode
    assert f"--memory-mode={model.target.memory_mode}" in spec.flags
    for d, blocks in zip(info.ethosu_delegates, read_vela_streams(any_pte), strict=True):
        assert d.vela is not None and d.vela == blocks.to_stream()
        assert d.vela.cop.product == spec.accelerator.kind
        assert d.vela.cop.macs_per_cc == spec.accelerator.macs
        words = struct.unpack_from("<4I", blocks.cmd_data)
        assert words[0] == 0x31504F43 and (words[2], words[3]) == (d.vela.cop.config, d.vela.cop.id)
        assert d.vela.cmd_bytes >= d.vela.cop.command_offset + 4 * d.vela.cop.command_words
        assert d.vela.external is False


def test_fixture_models_hold_what_their_names_say(
    pte_cpu_op: Path,
    pte_cpu_only: Path,
    pte_too_big: Path,
    pte_half_mb: Path,
    pte_two_delegates: Path,
) -> None:
    assert "aten::argmax.out" in read_pte(pte_cpu_op).cpu_operators
    cpu_only = read_pte(pte_cpu_only)
    assert cpu_only.ethosu_delegates == () and cpu_only.methods[0].delegates == ()
    assert read_pte(pte_too_big).peak_scratch > 2 * 1024 * 1024  # Corstone-300 SRAM
    assert 400_000 < read_pte(pte_half_mb).file_bytes < 700_000

    two = read_pte(pte_two_delegates)
    scratch = [d.vela.scratch_size for d in two.ethosu_delegates if d.vela]
    assert len(scratch) == 2 and scratch[0] != scratch[1]
    assert two.peak_scratch == max(scratch)
    assert "aten::sort.values" in two.cpu_operators
    assert [v.delegate_index for v in read_vela_streams(pte_two_delegates)] == [0, 1]


@pytest.mark.parametrize("extract", [False, True], ids=["inline-delegates", "segments"])
def test_reserialized_layouts_read_the_same(any_pte: Path, extract: bool) -> None:
    """Delegate blobs inline in the flatbuffer (no extended header) or in segments."""
    from ethosu_kit.pte import parse_pte, vela_streams

    data = any_pte.read_bytes()
    pte_file = et_program.deserialize_pte_binary(data)
    out = bytes(et_program.serialize_pte_binary(pte_file, extract_delegate_segments=extract))
    locations = {d.location for p in open_pte(out).program.plans for d in p.delegates}
    assert locations <= ({1} if extract else {0})  # DataLocation SEGMENT / INLINE
    info = parse_pte(out, "re.pte")
    _check_model_info(info, out, _name(any_pte))
    assert info.methods == read_pte(any_pte).methods
    assert vela_streams(out, "re.pte") == read_vela_streams(any_pte)

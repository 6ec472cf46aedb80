"""Shared helpers of the virtual NPU tests: the TOSA reference run and the comparison."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from ethosu_kit.cli.app import main
from ethosu_kit.pte import VelaBlocks, read_vela_streams
from vnpu_models import OpModel, lowered

if TYPE_CHECKING:
    from runner_build import RunResult


def op_model(model: OpModel) -> tuple[VelaBlocks, bytes]:
    """The single Ethos-U delegate of a lowered one-op model and its TOSA graph."""
    try:
        folder = lowered(model)
    except ImportError as exc:
        pytest.skip(f"lowering needs torch and executorch: {exc.name} is missing")
    streams = read_vela_streams(folder / "model.pte")
    assert len(streams) == 1, f"{model.name}: expected one delegate, got {len(streams)}"
    return streams[0], (folder / "out.tosa").read_bytes()


def tosa_run(tosa: bytes, inputs: list[Any]) -> list[Any]:
    trm = pytest.importorskip("tosa_reference_model", reason="tosa-tools is not installed")
    outputs, status = trm.run(tosa, inputs)
    assert str(status).endswith("TOSA_VALID"), f"tosa_reference_model: {status}"
    return [np.asarray(o) for o in outputs]


def mismatches(ours: list[Any], reference: list[Any]) -> int:
    """Number of output values that differ (shapes must agree in element count)."""
    assert len(ours) == len(reference)
    bad = 0
    for a, ref in zip(ours, reference, strict=True):
        r = np.asarray(ref).reshape(a.shape).astype(np.int64)
        bad += int(np.count_nonzero(a.astype(np.int64) != r))
    return bad


def quant_params(pte: Path) -> dict[str, tuple[float, int, int, int]]:
    """(scale, zero point, qmin, qmax) of the method's CPU quantize and dequantize calls,
    read with ExecuTorch's own deserializer (the kit's reader does not decode scalars)."""
    serialize = pytest.importorskip("executorch.exir._serialize._program")
    pte_file = serialize.deserialize_pte_binary(pte.read_bytes())
    program = getattr(pte_file, "program", pte_file)
    plan = program.execution_plan[0]
    found: dict[str, tuple[float, int, int, int]] = {}
    for ins in plan.chains[0].instructions:
        args = ins.instr_args
        if type(args).__name__ != "KernelCall":
            continue
        name = plan.operators[args.op_index].name.split("::")[-1]
        vals: list[Any] = [plan.values[i].val for i in args.args[1:5]]
        found[name] = (
            float(vals[0].double_val),
            int(vals[1].int_val),
            int(vals[2].int_val),
            int(vals[3].int_val),
        )
    assert set(found) == {"quantize_per_tensor", "dequantize_per_tensor"}, found
    return found


def runner_equals_simulation(pte: Path, project: Path, run: RunResult, tmp: Path) -> list[int]:
    """Assert the executor_runner's printed outputs (default inputs: every float 1.0,
    quantized by the program's quantize_per_tensor on the CPU) equal `ethosu-kit simulate`
    fed the same integers; returns the compared output integers."""
    q = quant_params(pte)
    scale, zp, qmin, qmax = q["quantize_per_tensor"]
    info = json.loads((project / "model_info.json").read_text())
    shape = info["methods"][0]["inputs"][0]["shape"]
    # ExecuTorch's quantize kernel: zp + nearbyint(value * (float)(1 / scale)), clamped
    inv = np.float32(1.0 / scale)
    ones = np.clip(np.rint(np.float32(1.0) * inv) + zp, qmin, qmax).astype(np.int8)
    np.save(tmp / "ones.npy", np.full(shape, ones, dtype=np.int8))
    assert main(["simulate", str(pte), "--inputs", str(tmp / "ones.npy"),
                 "-o", str(tmp / "host.npz")]) == 0  # fmt: skip
    with np.load(tmp / "host.npz") as saved:
        host = saved["delegate0_output0"].reshape(-1).astype(np.int64)

    (out,) = run.outputs()
    assert out.count == host.size
    o_scale, o_zp, _, _ = q["dequantize_per_tensor"]
    printed = np.array(out.values)
    # the runner prints dequantized floats with 6 decimals: back to the integers exactly
    as_ints = np.rint(printed / o_scale).astype(np.int64) + o_zp
    assert as_ints.tolist() == host[: len(printed)].tolist(), run.uart
    expected = (host[: len(printed)] - o_zp).astype(np.float32) * np.float32(o_scale)
    assert np.allclose(printed, expected, atol=1.5e-6, rtol=0), run.uart
    assert len(set(as_ints.tolist())) > 2, "a constant output would agree for the wrong reasons"
    return [int(x) for x in as_ints]


# One command of Vela's --verbose-register-command-stream, or of the library's disassembly:
# (byte offset, code, name, {field: value})
Command = tuple[int, str, str, dict[str, int | str]]
LISTING_LINE = re.compile(
    r"^0x(?P<off>[0-9a-f]+):\s+(?:(?P<payload>[0-9a-f]{8})\s+)?(?P<param>[0-9a-f]{4})\s+"
    r"(?P<code>[0-9a-f]{4})\s+-\s+(?P<name>\S+)\s+\d+(?:,\s*(?P<fields>.*))?$"
)


def listing_value(text: str) -> int | str:
    try:
        return int(text, 0)
    except ValueError:
        return text


def parse_listing(listing: str) -> list[Command]:
    """The commands of a Vela register listing."""
    commands = []
    for line in listing.splitlines():
        m = LISTING_LINE.match(line.strip())
        if not m:
            continue
        fields: dict[str, int | str] = {}
        for part in (m["fields"] or "").split(","):
            if "=" in part:
                key, val = part.split("=", 1)
                fields[key.strip()] = listing_value(val.strip())
        if m["name"] == "NPU_SET_OP_SCALAR":
            # regor prints the scalar one less than its payload; the payload is authoritative
            fields["scalar"] = int(m["payload"], 16)
        commands.append((int(m["off"], 16), m["code"], m["name"], fields))
    return commands


def parse_disassembly(lines: list[str]) -> list[Command]:
    """The commands of the library's disassembly (ethosu_kit.vnpu.npu.disassemble)."""
    commands = []
    for line in lines:
        off, code, name, *rest = line.split(" ")
        fields = {k: listing_value(v) for k, v in (f.split("=", 1) for f in rest)}
        commands.append((int(off, 16), code, name, fields))
    return commands


def assert_same_commands(
    name: str, theirs: list[Command], mine: list[Command], unprinted: frozenset[str] = frozenset()
) -> int:
    """Every command of Vela's listing equals ours: byte offset, code, name and every field
    regor prints, with the same value; ours has no other field but the `unprinted` ones.
    Returns how many fields were compared."""
    assert len(theirs) == len(mine), (
        f"{name}: Vela lists {len(theirs)} commands, we decode {len(mine)}"
    )
    fields_checked = 0
    for t, m in zip(theirs, mine, strict=True):
        assert t[:3] == m[:3], f"{name}: command {t[:3]} decoded as {m[:3]}"
        for key, value in t[3].items():
            assert m[3].get(key) == value, (
                f"{name} {t[2]} at 0x{t[0]:x}: {key} = {value}, ours {m[3].get(key)}"
            )
            fields_checked += 1
        extra = set(m[3]) - set(t[3])
        assert extra <= unprinted, f"{name} {t[2]}: fields {extra} not in Vela's listing"
    return fields_checked

"""The program around an Ethos-U delegate, as the NPU's integers meet the method's
floats: each method input's and output's quantization (`io_quantization`: from the
quantize/dequantize_per_tensor calls) and how each delegate argument meets the method
(`delegate_args`), read from the .pte's program without torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ethosu_kit.core.errors import PteError
from ethosu_kit.pte._flatbuffer import Malformed
from ethosu_kit.pte.container import open_pte
from ethosu_kit.pte.program import DELEGATE_CALL, KERNEL_CALL, RawPlan
from ethosu_kit.pte.reader import read_named


@dataclass(frozen=True)
class Quantization:
    """How a float tensor of the method maps to the integers the NPU sees."""

    scale: float
    zero_point: int


def io_quantization(
    path: Path | str, method: str | None = None
) -> tuple[list[Quantization | None], list[Quantization | None]]:
    """(inputs, outputs) quantization of the first method (or of `method`): an input's
    from the quantize_per_tensor that takes it, an output's from the dequantize_per_tensor
    that makes it; None for a tensor without one (already integer, or quantized otherwise)."""
    data, name = read_named(path)
    try:
        plans = open_pte(data).program.plans
        plan = plans[0] if method is None else next(p for p in plans if p.name == method)
    except (Malformed, IndexError) as exc:
        raise PteError(f"{name}: {exc}") from None
    except StopIteration:
        raise PteError(
            f"{name}: no method {method!r} (its methods are {', '.join(p.name for p in plans)})"
        ) from None

    def number(index: int) -> float | None:
        return plan.values[index].number if 0 <= index < len(plan.values) else None

    def quant(args: tuple[int, ...]) -> Quantization | None:
        scale, zp = (number(args[1]), number(args[2])) if len(args) > 2 else (None, None)
        return Quantization(scale, int(zp)) if scale is not None and zp is not None else None

    inputs: list[Quantization | None] = [None] * len(plan.inputs)
    outputs: list[Quantization | None] = [None] * len(plan.outputs)
    for ins in plan.instructions:
        if ins.tag != KERNEL_CALL or not 0 <= ins.index < len(plan.operators) or not ins.args:
            continue
        op = plan.operators[ins.index][0]
        if op == "quantized_decomposed::quantize_per_tensor":
            for i, v in enumerate(plan.inputs):
                if ins.args[0] == v:
                    inputs[i] = quant(ins.args)
        elif op == "quantized_decomposed::dequantize_per_tensor":
            for o, v in enumerate(plan.outputs):
                if ins.args[-1] == v:
                    outputs[o] = quant(ins.args)
    return inputs, outputs


@dataclass(frozen=True)
class DelegateArg:
    """How a delegate call's tensor argument meets the method: made by the program's
    quantize_per_tensor (`quant`) of method input `method_input`, or turned by a
    dequantize_per_tensor (or as it is) into method output `method_output`."""

    quant: Quantization | None
    method_input: int | None
    method_inputs: int  # how many inputs the method has
    method_output: int | None = None


def delegate_args(data: bytes, name: str) -> dict[tuple[str, int], list[DelegateArg]]:
    """For each delegate call, (method, delegate index) -> each tensor argument in order
    (inputs first, then outputs). `simulate` quantizes a float input as the program's own
    quantize does, and `compare` pairs a method output with the delegate output it is:
    the delegate may order both differently from the method."""
    try:
        plans = open_pte(data).program.plans
    except Malformed as exc:
        raise PteError(f"{name}: {exc}") from None
    out: dict[tuple[str, int], list[DelegateArg]] = {}
    for plan in plans:

        def number(index: int, plan: RawPlan = plan) -> float | None:
            return plan.values[index].number if 0 <= index < len(plan.values) else None

        made: dict[int, tuple[Quantization, int | None]] = {}
        shown: dict[int, int] = {v: o for o, v in enumerate(plan.outputs)}
        for ins in plan.instructions:
            if ins.tag != KERNEL_CALL or not 0 <= ins.index < len(plan.operators):
                continue
            op = plan.operators[ins.index][0]
            if op == "quantized_decomposed::quantize_per_tensor" and len(ins.args) > 3:
                scale, zp = number(ins.args[1]), number(ins.args[2])
                if scale is not None and zp is not None and scale > 0:
                    src = ins.args[0]
                    j = plan.inputs.index(src) if src in plan.inputs else None
                    made[ins.args[-1]] = (Quantization(scale, int(zp)), j)
            elif (
                op == "quantized_decomposed::dequantize_per_tensor"
                and len(ins.args) > 1
                and ins.args[-1] in plan.outputs
            ):
                shown.setdefault(ins.args[0], plan.outputs.index(ins.args[-1]))
        for ins in plan.instructions:
            if ins.tag != DELEGATE_CALL:
                continue
            args = []
            for v in ins.args:
                if not 0 <= v < len(plan.values) or plan.values[v].tensor is None:
                    continue
                quant, j = made.get(v, (None, None))
                if j is None and v in plan.inputs:
                    j = plan.inputs.index(v)
                args.append(DelegateArg(quant, j, len(plan.inputs), shown.get(v)))
            out[(plan.name, ins.index)] = args
    return out

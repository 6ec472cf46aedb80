"""[qemu] and [fvp]: the machines that run a board's images (`ethosu-kit run`)."""

from __future__ import annotations

from ethosu_kit.board.checks import FVP_NAME_RE, FVP_PARAM_RE, QEMU_NAME_RE
from ethosu_kit.board.model import Fvp, MemoryRegion, Npu, Qemu
from ethosu_kit.board.reader import Table
from ethosu_kit.board.stand_in import qemu_layout_table


def qemu_table(t: Table, core: str, regions: tuple[MemoryRegion, ...] = ()) -> Qemu:
    t.only_schema()
    machine = t.value("machine")
    cpu = t.value("cpu", core)
    for key, value in (("machine", machine), ("cpu", cpu)):
        if not QEMU_NAME_RE.fullmatch(value):
            raise t.fail(key, f"{value!r} is not a QEMU {key} name")
    stand_in = t.value("stand_in")
    layout = None
    if "layout" in t.data:
        if not stand_in:
            raise t.fail("layout", "a layout is for a stand-in machine: say what it is in stand_in")
        layout = qemu_layout_table(t.table("layout", schema_table="qemu.layout"), regions)
    return Qemu(machine=machine, cpu=cpu, stand_in=stand_in, layout=layout)


def fvp_table(t: Table, npu: Npu) -> Fvp:
    """[fvp]: the Arm FVP per NPU kind and the model's instance names."""
    t.only_schema()
    models_t = t.table("models")
    models = {}
    for kind in models_t.data:
        if kind not in npu.kinds:
            raise models_t.fail(kind, f"not an NPU of this board ({', '.join(npu.kinds)})")
        models[kind] = models_t.str_(kind)
    values = {key: t.value(key) for key in ("board", "cpu", "npu", "uart")}
    for key, value in (*models.items(), *values.items()):
        if value and not FVP_NAME_RE.fullmatch(value):
            raise t.fail(key, f"{value!r} is not an FVP or instance name")
    params = tuple(t.value("params"))
    for param in params:
        if not FVP_PARAM_RE.fullmatch(param):
            raise t.fail("params", f"{param!r} is not an FVP parameter 'instance.name=value'")
    return Fvp(models=models, **values, params=params)

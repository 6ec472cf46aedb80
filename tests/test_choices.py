"""The kit's choices are enums, written once: the CMake side, the CLI and the plan's JSON
agree with them (issue 16 item 3). No torch, no lowered model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ethosu_kit.board.toolchain import TOOLCHAINS, Toolchain
from ethosu_kit.core.typed_json import decode, encode
from ethosu_kit.firmware.pipeline import APPS, NPU_LIBRARIES
from ethosu_kit.npu.facts import NPU_MACS, Accelerator, MemoryMode, NpuKind, mode_names
from ethosu_kit.plan.apps import App
from ethosu_kit.plan.types import Buffer, NpuLibrary, PlanOptions, Role, indexed_name

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE_CMAKE = ROOT / "cmake" / "EthosuKitFirmware.cmake"


def _cmake_alternatives(variable: str) -> list[str]:
    """The `^(a|b|c)$` list CMake checks `variable` against."""
    text = FIRMWARE_CMAKE.read_text()
    m = re.search(rf'{re.escape(variable)} MATCHES "\^\(([a-z_|]+)\)\$"', text)
    assert m, f"{FIRMWARE_CMAKE.name}: no MATCHES list for {variable}"
    return m.group(1).split("|")


def test_cmake_app_list_is_the_enum() -> None:
    assert sorted(_cmake_alternatives("ARG_APP")) == sorted(a.value for a in App)


def test_cmake_npu_list_is_the_enum() -> None:
    assert _cmake_alternatives("ARG_NPU") == [n.value for n in NpuLibrary]


def test_toolchain_files_exist_for_every_toolchain() -> None:
    for t in Toolchain:
        assert (ROOT / "cmake" / "toolchain" / t.cmake_file).is_file(), t
    assert TOOLCHAINS == ("gcc", "clang", "armclang")


def test_cli_choices_come_from_the_enums() -> None:
    assert APPS == ("executor_runner", "bringup", "selftest")
    assert NPU_LIBRARIES == ("driver", "virtual", "none")


def test_plan_options_round_trip_typed() -> None:
    options = PlanOptions(app=App.SELFTEST, npu=NpuLibrary.VIRTUAL)
    data = encode(options)
    assert data["app"] == "selftest" and data["npu"] == "virtual"
    back = decode(PlanOptions, data)
    assert back == options and type(back.app) is App and type(back.npu) is NpuLibrary


@pytest.mark.parametrize("kind", list(NpuKind))
def test_accelerator_parses_every_vela_name(kind: NpuKind) -> None:
    for macs in NPU_MACS[kind]:
        acc = Accelerator.parse(f"{kind.value}-{macs}")
        assert acc == Accelerator(kind, macs) and str(acc) == f"{kind.value}-{macs}"


@pytest.mark.parametrize("text", ["ethos-u99-128", "ethos-u55", "ethos-u55-x", "none", ""])
def test_accelerator_refuses_unknown(text: str) -> None:
    with pytest.raises(ValueError):
        Accelerator.parse(text)
    assert Accelerator.parse_optional("none") is None


def test_memory_mode_names() -> None:
    assert mode_names() == "Sram_Only, Shared_Sram or Dedicated_Sram"
    assert [m.value for m in MemoryMode] == ["Sram_Only", "Shared_Sram", "Dedicated_Sram"]


def test_buffer_index_is_the_name_contract() -> None:
    def buf(name: str, role: Role) -> Buffer:
        return Buffer(name, role, f"kit_{name}", f".kit.{name}", "SRAM", 16, 16, False,
                      False, None, ("SRAM",), "test")  # fmt: skip

    for role in (Role.PLANNED, Role.INPUT, Role.OUTPUT, Role.INPUT_DATA):
        assert buf(indexed_name(role, 3), role).index == 3
    assert indexed_name(Role.INPUT_DATA, 0) == "input_data_0"
    assert buf("method_pool", Role.METHOD_POOL).index is None
    with pytest.raises(ValueError):
        _ = buf("input_x", Role.INPUT).index


def test_plan_options_take_plain_names() -> None:
    options = PlanOptions(app="bringup", npu="virtual")  # type: ignore[arg-type]
    assert options.app is App.BRINGUP and options.npu is NpuLibrary.VIRTUAL
    with pytest.raises(ValueError):
        PlanOptions(app="nope")  # type: ignore[arg-type]

"""The virtual NPU's driver API: the checks the real driver makes, and errors that name the cause.

Uses the real stream of a lowered model and breaks one thing at a time. Also proves the
library builds for the firmware: arm-none-eabi-gcc for Cortex-M55 with -Wall -Wextra
-Werror, linked into a small program that calls the driver API.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.pte import VelaBlocks
from ethosu_kit.vnpu import PreparedDelegate, VirtualNpu, VnpuError, run_delegate
from ethosu_kit.vnpu.build import source_dir
from ethosu_kit.vnpu.delegate import random_inputs
from ethosu_kit.vnpu.npu import aligned_bytes
from vnpu_models import BY_NAME
from vnpu_support import op_model


def _regions(blocks: VelaBlocks) -> list[np.ndarray]:
    return [
        aligned_bytes(max(len(blocks.weight_data), 16), blocks.weight_data),
        aligned_bytes(blocks.scratch_size),
    ]


def _patched(blocks: VelaBlocks, word: int, value: int) -> bytes:
    data = bytearray(blocks.cmd_data)
    struct.pack_into("<I", data, 4 * word, value)
    return bytes(data)


@pytest.fixture(scope="module")
def conv() -> VelaBlocks:
    return op_model(BY_NAME["conv3x3_pad"])[0]


@pytest.mark.lowering
def test_rejects_non_cop1_payload(conv: VelaBlocks) -> None:
    with VirtualNpu() as npu, pytest.raises(VnpuError, match="not a COP1 stream"):
        npu.invoke(_patched(conv, 0, 0x32504F43), _regions(conv))


@pytest.mark.lowering
def test_rejects_stream_for_another_npu(conv: VelaBlocks) -> None:
    u55_256 = 0x00003008  # 256 MACs, 48 KiB SHRAM
    with VirtualNpu(config=u55_256) as npu, pytest.raises(VnpuError, match="OPTIMIZER_CONFIG"):
        npu.invoke(conv.cmd_data, _regions(conv))


@pytest.mark.lowering
def test_rejects_unaligned_base_address(conv: VelaBlocks) -> None:
    regions = _regions(conv)
    raw = aligned_bytes(conv.scratch_size + 16)
    regions[1] = raw[4 : 4 + conv.scratch_size]
    with VirtualNpu() as npu, pytest.raises(VnpuError, match=r"base_addr\[1\].*16-byte aligned"):
        npu.invoke(conv.cmd_data, regions)


@pytest.mark.lowering
def test_unknown_command_names_its_code(conv: VelaBlocks) -> None:
    first = conv.cop.command_offset // 4
    with VirtualNpu() as npu, pytest.raises(VnpuError, match=r"unknown command code 0x03ff"):
        npu.invoke(_patched(conv, first, 0x000003FF), _regions(conv))


@pytest.mark.lowering
def test_out_of_region_access_is_a_bus_error_not_a_crash(conv: VelaBlocks) -> None:
    regions = _regions(conv)
    regions[1] = regions[1][:64]
    with VirtualNpu() as npu, pytest.raises(VnpuError, match="outside"):
        npu.invoke(conv.cmd_data, regions)


@pytest.mark.lowering
def test_missing_region_is_named(conv: VelaBlocks) -> None:
    with VirtualNpu() as npu, pytest.raises(VnpuError, match="region 1 but only 1 base address"):
        npu.invoke(conv.cmd_data, _regions(conv)[:1])


@pytest.mark.lowering
def test_builtin_tanh_activation_is_refused(conv: VelaBlocks) -> None:
    """An activation outside the modelled scope stops with its value, never a wrong result."""
    words = np.frombuffer(conv.cmd_data, dtype="<u4").copy()
    start = conv.cop.command_offset // 4
    act = next(i for i in range(start, len(words)) if words[i] & 0xFFFF == 0x0125)
    words[act] = 0x0125 | (3 << 16)  # NPU_SET_ACTIVATION TANH
    with VirtualNpu() as npu, pytest.raises(VnpuError, match="activation_function 3"):
        npu.invoke(words.tobytes(), _regions(conv))


@pytest.mark.lowering
def test_driver_is_reusable_after_an_error(conv: VelaBlocks) -> None:
    rng = np.random.default_rng(0)
    inputs = random_inputs(conv, rng)
    with VirtualNpu() as npu:
        with pytest.raises(VnpuError):
            npu.invoke(_patched(conv, 0, 0), _regions(conv))
        first = run_delegate(conv, inputs, npu)
        again = run_delegate(conv, inputs, npu)
    assert np.array_equal(first[0], again[0])


@pytest.mark.lowering
def test_prepared_delegate_reads_what_the_caller_holds_at_each_run(conv: VelaBlocks) -> None:
    """PreparedDelegate reads an array passed again directly: what it holds at the next
    run counts (changed in place or not), a new array or another dtype is taken as it
    comes, and run() without arguments uses inputs[i] again; always run_delegate's answer."""
    rng = np.random.default_rng(3)
    x = random_inputs(conv, rng)
    with VirtualNpu() as npu:
        prepared = PreparedDelegate(conv, npu)
        for step in range(5):
            if step == 2:
                x[0][...] = random_inputs(conv, rng)[0]  # the same array, new values
            if step == 4:
                x = random_inputs(conv, rng)
            assert np.array_equal(prepared(x)[0], run_delegate(conv, x, npu)[0])
        wide = [x[0].astype(np.int64)]  # converted, as run_delegate converts it
        assert np.array_equal(prepared(wide)[0], run_delegate(conv, x, npu)[0])
        # an input in the NPU's own memory (as an output fed back): each run zeroes it first
        fed = prepared._plan.scratch[: x[0].nbytes].view(x[0].dtype).reshape(x[0].shape)
        for _ in range(3):
            want = run_delegate(conv, [fed.copy()], npu)[0]
            assert np.array_equal(prepared([fed])[0], want)
        prepared(x)
        prepared(x)
        prepared.inputs[0][...] = 0
        prepared.run()
        zero = run_delegate(conv, [np.zeros_like(x[0])], npu)
        assert np.array_equal(prepared.outputs[0], zero[0])


@pytest.mark.lowering
def test_weights_stay_only_while_the_stream_cannot_write_them(conv: VelaBlocks) -> None:
    """A job copies the weights into region 0 once and keeps them while no operation names
    region 0 as its output; a stream whose OFM is region 0 gets them copied every run."""
    inputs = random_inputs(conv, np.random.default_rng(4))
    with VirtualNpu() as npu:
        prepared = PreparedDelegate(conv, npu)
        first = prepared(inputs)
        assert prepared._plan.job.native.weights_kept == 1
        assert np.array_equal(prepared(inputs)[0], first[0])
    # a stream of copies (no weight stream to break) whose OFMs are region 0
    other = op_model(BY_NAME["permute"])[0]
    words = np.frombuffer(other.cmd_data, dtype="<u4").copy()
    words[words == 0x0001011F] = 0x0000011F  # NPU_SET_OFM_REGION region=1 -> 0
    big = max(len(other.weight_data), other.scratch_size)
    regions = [aligned_bytes(big), aligned_bytes(other.scratch_size)]
    weights = np.frombuffer(other.weight_data, dtype=np.uint8)
    with VirtualNpu() as npu:
        job = npu.prepare(words.tobytes(), regions, weights, zero_regions=0b10)
        npu.run(job)
        once = regions[0].copy()
        assert job.native.weights_kept == 0
        npu.run(job)  # the weights copied in again: the same result
        assert np.array_equal(regions[0], once)


FIRMWARE_MAIN = r"""
#include "ethosu_driver.h"
#include "ethosu_virtual.h"

static struct ethosu_driver drv;
static uint32_t cmd[8] __attribute__((aligned(16))) = {
    0x31504f43u, 0x00100001u, ETHOSU_VIRTUAL_U55_128_CONFIG, ETHOSU_VIRTUAL_U55_ID,
    0x00000005u, 0x00000005u, 0x00010002u, 0xffff0000u, /* COMMAND_STREAM of 1 word: STOP */
};
static uint8_t scratch[64] __attribute__((aligned(16)));

int main(void)
{
    struct ethosu_hw_info hw;
    uint64_t base[2] = {(uint64_t)(uintptr_t)scratch, (uint64_t)(uintptr_t)scratch};
    size_t size[2] = {sizeof(scratch), sizeof(scratch)};
    if (ethosu_init(&drv, (void *)0x48102000, 0, 0, 1, 1) != 0)
        return 1;
    ethosu_get_hw_info(&drv, &hw);
    struct ethosu_driver *d = ethosu_reserve_driver();
    int rc = ethosu_invoke_v3(d, cmd, sizeof(cmd), base, size, 2, 0);
    ethosu_release_driver(d);
    return rc != 0 || hw.cfg.macs_per_cc != 7;
}
"""


@pytest.mark.firmware
def test_builds_and_links_for_cortex_m55(tmp_path: Path) -> None:
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    root = source_dir()
    main = tmp_path / "main.c"
    main.write_text(FIRMWARE_MAIN)
    cmd = [
        gcc,
        "-mcpu=cortex-m55",
        "-mthumb",
        "-std=c99",
        "-O2",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-DETHOSU_VIRTUAL_WORKSPACE_SIZE=(64u*1024u)",
        f"-I{root / 'include'}",
        f"-I{root / 'src'}",
        *(str(p) for p in sorted(root.glob("src/**/*.c"))),
        str(main),
        "--specs=nosys.specs",
        "-o",
        str(tmp_path / "vnpu.elf"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "vnpu.elf").stat().st_size > 0
    # the test mutations are the host test library's only (ETHOSU_VIRTUAL_MUTATIONS)
    nm = shutil.which("arm-none-eabi-nm")
    if nm is not None:
        elf = str(tmp_path / "vnpu.elf")
        symbols = subprocess.run([nm, elf], capture_output=True, text=True, check=True).stdout
        assert " ethosu_invoke_v3" in symbols
        assert "mutation" not in symbols, "the firmware build has the test mutations"


DELEGATE_STYLE_CPP = r"""
// How the ExecuTorch Ethos-U delegate uses the driver header: C++17, weak fallbacks
// for the multi-variant entry points, the driver API called with its own argument types.
#include <ethosu_driver.h>

#include <cstdint>

extern "C" __attribute__((weak)) int ethosu_get_product_config_from_cop_data(
    const void*, const int, uint32_t* product_out, uint32_t* log2_macs_out) {
  *product_out = 0;
  *log2_macs_out = 0;
  return 0;
}

extern "C" __attribute__((weak)) struct ethosu_driver* ethosu_reserve_driver_ex(
    uint32_t, uint32_t) {
  return ethosu_reserve_driver();
}

int execute(const char* cmd, int size, uint64_t* bases, const size_t* sizes) {
  uint32_t product = 0, macs = 0;
  if (ethosu_get_product_config_from_cop_data(cmd, size, &product, &macs) != 0) return -1;
  ethosu_driver* drv = ethosu_reserve_driver_ex(product, macs);
  if (drv == nullptr) return -1;
  int rc = ethosu_invoke_v3(drv, cmd, size, bases, sizes, 3, nullptr);
  ethosu_release_driver(drv);
  return rc;
}

extern "C" void ethosu_inference_begin(struct ethosu_driver*, void*) {}
"""


def test_header_compiles_as_the_delegate_uses_it(tmp_path: Path) -> None:
    cxx = shutil.which("arm-none-eabi-g++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler (arm-none-eabi-g++ or g++)")
    src = tmp_path / "delegate_style.cpp"
    src.write_text(DELEGATE_STYLE_CPP)
    flags = ["-mcpu=cortex-m55", "-mthumb"] if "arm-none-eabi" in cxx else []
    proc = subprocess.run(
        [
            cxx,
            *flags,
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
            str(src),
            f"-I{source_dir() / 'include'}",
            "-o",
            str(tmp_path / "d.o"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_host_cmake_build(tmp_path: Path) -> None:
    """The CMake project builds the static library with the host compiler, warnings as errors."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    build = tmp_path / "build"
    for step in (
        [cmake, "-S", str(source_dir()), "-B", str(build), "-G", "Ninja"]
        if shutil.which("ninja")
        else [cmake, "-S", str(source_dir()), "-B", str(build)],
        [cmake, "--build", str(build), "-j2"],
    ):
        proc = subprocess.run(step, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert list(build.glob("libethosu_virtual.a"))

"""`ethosu-kit run ELF --inputs … -o out.npz`: the host side of the file protocol.

Every array is checked against the program (count, dtype, shape) before the emulator
starts, with one error line naming the file and the input; `-o` naming a folder is
refused up front; an app that does not follow the protocol (the bring-up) is named
after its run. The firmware side (the executor_runner reading kit_input_<i>.bin)
is tested with the ExecuTorch checkouts in test_vnpu_firmware.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fw_helpers import Built, built, need_qemu, without_app_line
from hostile import assert_refused, run_kit

pytestmark = pytest.mark.firmware


@pytest.fixture(scope="module")
def bringup(pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The bring-up image as `run` sees an app that may follow the protocol (its .kit.info
    without the `app` line), so the host-side checks are reached; `run` refuses the kit's
    bring-up by name up front."""
    return without_app_line(
        built(pte_u55_shared, "cs300", "Shared_Sram", tmp_path_factory.mktemp("run_io"))
    )


def test_wrong_arrays_are_refused_before_the_run(bringup: Built, tmp_path: Path) -> None:
    wrong_dtype = tmp_path / "int8.npy"
    np.save(wrong_dtype, np.zeros((1, 3, 16, 16), np.int8))
    wrong_shape = tmp_path / "shape.npy"
    np.save(wrong_shape, np.zeros((3, 16, 16), np.float32))
    right = tmp_path / "x.npy"
    np.save(right, np.zeros((1, 3, 16, 16), np.float32))
    two = tmp_path / "two.npz"
    np.savez(two, np.zeros((1, 3, 16, 16), np.float32), np.zeros(3, np.float32))
    vectors = tmp_path / "v.npz"  # simulate -o: the delegate's integers, not the method's
    np.savez(vectors, delegate0_input0=np.zeros((1, 3, 16, 16), np.int8),
             delegate0_output0=np.zeros((1, 8, 8, 8), np.int8))  # fmt: skip
    again = tmp_path / "run.npz"  # a run -o file: input<i> are the inputs, output<o> are not
    np.savez(again, output0=np.zeros((1, 4), np.float32), input0=np.zeros((3, 16, 16), np.int8))
    out = tmp_path / "out.npz"
    for args, needles in (
        ([vectors], ["2 array(s) given", "v.npz[delegate0_output0]"]),
        ([again], [f"{again}[input0]: input 0 is int8 [3, 16, 16]"]),
        ([wrong_dtype], [f"{wrong_dtype}: input 0 is int8", "wants float32 [1, 3, 16, 16]"]),
        ([wrong_shape], ["input 0 is float32 [3, 16, 16]"]),
        ([right, right], ["2 array(s) given", "takes 1"]),
        ([two], ["2 array(s) given"]),
        ([tmp_path / "missing.npy"], ["no such file"]),
    ):
        result = run_kit("run", bringup.elf, "--inputs", *args, "-o", out)
        assert_refused(result, *needles, absent=[out], code=65)
        assert ("hint: that is a vectors file" in result.stderr) == (args == [vectors])
        assert "BRINGUP" not in result.stdout, "the emulator ran"


def test_output_to_a_folder_is_refused(bringup: Built, tmp_path: Path) -> None:
    result = run_kit("run", bringup.elf, "-o", tmp_path)
    assert_refused(result, "is a folder", code=65)
    assert "BRINGUP" not in result.stdout


def test_the_kit_bringup_is_refused_up_front(pte_u55_shared: Path, bringup: Built) -> None:
    original = bringup.elf.with_name("bringup.elf")
    result = run_kit("run", original, "-o", bringup.elf.with_name("out.npz"))
    assert_refused(result, "the bringup app takes no inputs from the host", code=65)
    assert "BRINGUP" not in result.stdout


@pytest.mark.qemu
def test_an_app_without_the_protocol_is_named(bringup: Built, tmp_path: Path) -> None:
    need_qemu()
    out = tmp_path / "out.npz"
    result = run_kit("run", bringup.elf, "-o", out)
    assert "BRINGUP PASS" in result.stdout
    assert_refused(result, "wrote no kit_output_0.bin", absent=[out], code=78)


def test_inputs_sent_back_are_read_and_checked(tmp_path: Path) -> None:
    """run -o without --inputs: the kit_input_<i>.bin the firmware sent back become
    input<i>, checked like the outputs; none at all (an image from before the firmware
    sent them) is None, so the outputs are still saved."""
    from ethosu_kit.core.errors import KitError
    from ethosu_kit.firmware.host_io import read_inputs
    from ethosu_kit.inputs.prepare import Tensor

    wants = [Tensor(np.dtype(np.float32), (1, 2)), Tensor(np.dtype(np.int8), (3,))]
    elf = tmp_path / "fw.elf"
    assert read_inputs(tmp_path, wants, elf) is None
    (tmp_path / "kit_input_0.bin").write_bytes(np.array([[1.5, -2]], "<f4").tobytes())
    with pytest.raises(KitError, match=r"wrote no kit_input_1\.bin \(input 1, int8 \[3\]\)"):
        read_inputs(tmp_path, wants, elf)
    (tmp_path / "kit_input_1.bin").write_bytes(b"\x01\x02")
    with pytest.raises(KitError, match=r"kit_input_1\.bin has 2 bytes, input 1 \(int8 \[3\]\)"):
        read_inputs(tmp_path, wants, elf)
    (tmp_path / "kit_input_1.bin").write_bytes(b"\x01\x02\xff")
    got = read_inputs(tmp_path, wants, elf)
    assert got is not None
    assert got[0].dtype == np.float32 and got[0].tolist() == [[1.5, -2.0]]
    assert got[1].tolist() == [1, 2, -1]

"""Hostile inputs, class "simulate inputs": .npy/.npz files with dtypes that are not
numbers, raw members, corrupt zips, headers declaring absurd shapes, float inputs
(NaN included), --seed out of range, -o naming a folder or a path under a file.

Each through the real `ethosu-kit simulate` in a child process: one `error:` line,
no traceback, nothing written. On the old code these were internal errors, a
multi-GiB allocation attempt, a silent float->int cast, or a file written beside
the folder that -o named.
"""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.inputs.arrays import load_arrays
from hostile import assert_refused, parse_args, run_kit

SHAPE = (3, 16, 16)  # the u55_shared model's delegate input (int8)


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=True)
    return buf.getvalue()


def _npy_header(descr: str, shape: tuple[int, ...], body: bytes = b"") -> bytes:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (-(len(header) + 11) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + body


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _good() -> bytes:
    return _npy(np.zeros(SHAPE, dtype=np.int8))


# name -> (file name, bytes, words the error line must hold)
CASES: dict[str, tuple[str, Callable[[], bytes], str]] = {
    "object": ("x.npy", lambda: _npy(np.array([{"a": 1}, None], dtype=object)), "object"),
    "structured": (
        "x.npy",
        lambda: _npy(np.zeros(4, dtype=[("a", "i1"), ("b", "f4")])),
        "structured",
    ),
    "bytes": ("x.npy", lambda: _npy(np.array([b"ab", b"cd"])), "string"),
    "unicode": ("x.npy", lambda: _npy(np.array(["ab", "cd"])), "string"),
    "datetime": ("x.npy", lambda: _npy(np.array(["2026-11-23"], dtype="M8[D]")), "datetime"),
    "timedelta": ("x.npy", lambda: _npy(np.array([1], dtype="m8[s]")), "timedelta"),
    "complex": ("x.npy", lambda: _npy(np.zeros(SHAPE, dtype=np.complex64)), "complex"),
    # float32 is the method's input, quantized as the program does (test_vnpu_simulate);
    # another float type is not cast silently
    "float": ("x.npy", lambda: _npy(np.zeros(SHAPE, dtype=np.float16)), "float16"),
    "float64": ("x.npy", lambda: _npy(np.zeros(SHAPE, dtype=np.float64)), "float64"),
    "nan": ("x.npy", lambda: _npy(np.full(SHAPE, np.nan, dtype=np.float32)), "NaN"),
    "out of range": ("x.npy", lambda: _npy(np.full(SHAPE, 300, dtype=np.int16)), "300"),
    "absurd shape": ("x.npy", lambda: _npy_header("|i1", (1 << 20, 1 << 20, 1 << 20)), "shape"),
    "negative shape": ("x.npy", lambda: _npy_header("|i1", (-1, 768)), "negative"),
    "shape beyond data": ("x.npy", lambda: _npy_header("|i1", SHAPE, b"\0" * 10), "holds 10"),
    "bad header": ("x.npy", lambda: b"\x93NUMPY\x01\x00\x10\x00{'descr': 1}    \n", "header"),
    "npy version 9": ("x.npy", lambda: b"\x93NUMPY\x09\x00" + b"\0" * 64, "version"),
    "pickle": ("x.npy", lambda: b"\x80\x04\x95" + b"\0" * 64, "not a .npy or .npz"),
    "empty": ("x.npy", lambda: b"", "not a .npy or .npz"),
    "raw member": ("x.npz", lambda: _zip({"a.npy": _good(), "notes.txt": b"hi"}), "notes.txt"),
    "raw member .npy": ("x.npz", lambda: _zip({"a.npy": b"just bytes"}), "x.npz[a]"),
    "corrupt zip": ("x.npz", lambda: _zip({"a.npy": _good()})[:-30], "corrupt zip"),
    "zip crc": (
        "x.npz",
        lambda: _zip({"a.npy": _good()}).replace(b"\0" * 64, b"\1" * 64, 1),
        "x.npz[a]",
    ),
    "empty zip": ("x.npz", lambda: _zip({}), "no arrays"),
    "absurd member": (
        "x.npz",
        lambda: _zip({"a.npy": _npy_header("<i4", (1 << 40,))}),
        "x.npz[a]",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_file_is_refused(case: str, data_pte_u55_shared: Path, tmp_path: Path) -> None:
    name, make, words = CASES[case]
    path = tmp_path / name
    path.write_bytes(make())
    out = tmp_path / "out.npz"
    result = run_kit("simulate", data_pte_u55_shared, "--inputs", path, "-o", out)
    line = assert_refused(result, words, absent=[out])
    assert str(path) in line


def test_float_refusal_has_a_quantize_hint(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    path = tmp_path / "f.npy"
    path.write_bytes(_npy(np.zeros(SHAPE, dtype=np.float64)))
    result = run_kit("simulate", data_pte_u55_shared, "--inputs", path)
    assert_refused(result, "float")
    assert "quantized integers" in result.stderr.splitlines()[1]


@pytest.mark.parametrize("seed", ["-1", str(1 << 64), "1.5", "nan", "0x"])
def test_seed_out_of_range_is_refused(seed: str, tmp_path: Path) -> None:
    """argparse's seed type refuses it before the .pte is read (so none is needed)."""
    result = parse_args("simulate", tmp_path / "model.pte", "--seed", seed)
    assert_refused(result, "--seed", code=2)


def test_seed_at_the_limits_is_parsed(tmp_path: Path) -> None:
    for seed in ("0", str((1 << 64) - 1)):
        result = parse_args("simulate", tmp_path / "model.pte", "--seed", seed)
        assert result.returncode == 0, result


def test_seed_at_the_limit_runs(data_pte_u55_shared: Path) -> None:
    """End to end once: the largest seed reaches NumPy's generator and the run."""
    result = run_kit("simulate", data_pte_u55_shared, "--seed", str((1 << 64) - 1))
    assert result.returncode == 0 and "output 0: int8" in result.stdout, result


def test_output_that_is_a_folder_or_under_a_file(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    assert_refused(run_kit("simulate", data_pte_u55_shared, "-o", folder), "is a folder")
    assert list(folder.iterdir()) == [] and not (tmp_path / "folder.npz").exists()
    (tmp_path / "d.npz").mkdir()  # -o d would write d.npz: a folder too
    assert_refused(run_kit("simulate", data_pte_u55_shared, "-o", tmp_path / "d"), "is a folder")
    afile = tmp_path / "afile"
    afile.write_text("mine")
    under = afile / "out.npz"
    assert_refused(run_kit("simulate", data_pte_u55_shared, "-o", under), "is a file")
    assert afile.read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir()] != [] and not list(tmp_path.glob("*.tmp"))


def test_good_inputs_round_trip(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    """The legal forms still work: .npy, .npz, Fortran order, a wider int type in range."""
    x = np.arange(768, dtype=np.int16).reshape(SHAPE) % 200 - 100
    np.save(tmp_path / "x.npy", x.astype(np.int8))
    np.savez(tmp_path / "x.npz", a=np.asfortranarray(x))
    a = run_kit(
        "simulate", data_pte_u55_shared, "--inputs", tmp_path / "x.npy", "-o", tmp_path / "a"
    )
    b = run_kit(
        "simulate", data_pte_u55_shared, "--inputs", tmp_path / "x.npz", "-o", tmp_path / "b"
    )
    assert a.returncode == 0 and b.returncode == 0, (a, b)
    ra, rb = np.load(tmp_path / "a.npz"), np.load(tmp_path / "b.npz")
    assert np.array_equal(ra["delegate0_output0"], rb["delegate0_output0"])
    assert np.array_equal(ra["delegate0_input0"].reshape(-1), x.astype(np.int8).reshape(-1))
    [loaded] = load_arrays([tmp_path / "x.npz"])
    assert loaded.source.endswith("x.npz[a]") and np.array_equal(loaded.array, x)


@pytest.mark.firmware
def test_nan_and_infinity_are_refused_by_run_and_gen_as_by_simulate(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    """`simulate` refused a float input holding NaN or infinity ("it cannot be quantized");
    `run --inputs` and `gen --inputs` sent it to the program's quantize (ExecuTorch casts
    the float to int: undefined). One loader, one check: all three refuse it alike."""
    from fw_helpers import built, without_app_line

    # an image whose app may take host IO: the kit's bring-up is refused by name before
    # its inputs are read
    elf = without_app_line(built(data_pte_u55_shared, "cs300", "Shared_Sram", tmp_path / "fw")).elf
    x = np.zeros((1, *SHAPE), dtype=np.float32)
    for name, value in (("nan", np.nan), ("inf", np.inf), ("-inf", -np.inf)):
        x.reshape(-1)[5] = value
        path = tmp_path / f"{name}.npy"
        np.save(path, x)
        packed = tmp_path / f"{name}.npz"
        np.savez(packed, input0=x)
        out = tmp_path / "out.npz"
        for command, given in (
            (("simulate", data_pte_u55_shared), path),
            (("run", elf), path),
            (("run", elf), packed),
            (("gen", "--pte", data_pte_u55_shared, "-o", tmp_path / "gen"), path),
        ):
            args = [*command, "--inputs", given]
            if command[0] != "gen":
                args += ["-o", out]
            result = run_kit(*args)
            line = assert_refused(result, "holds NaN or infinity", absent=[out, tmp_path / "gen"])
            assert str(given) in line and "BRINGUP" not in result.stdout, result


def test_output_parent_folders_are_created(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    """`simulate -o a/b/out` (and `run -o`, through the same save_npz) makes a/b/
    (docs/input-files.md); a failed command makes no folder."""
    from ethosu_kit.inputs.arrays import save_npz

    result = run_kit("simulate", data_pte_u55_shared, "-o", tmp_path / "a" / "b" / "out")
    assert result.returncode == 0, result
    assert (tmp_path / "a" / "b" / "out.npz").is_file()
    bad = tmp_path / "bad.npy"
    bad.write_bytes(_npy(np.full(SHAPE, 300, dtype=np.int16)))
    result = run_kit("simulate", data_pte_u55_shared, "--inputs", bad, "-o", tmp_path / "c" / "out")
    assert_refused(result, "300", absent=[tmp_path / "c"])
    assert save_npz(tmp_path / "d" / "e" / "r", {"output0": np.zeros(2)}).is_file()


# advise --example: torch allocates the example before the lowering (100000^4 was its
# internal RuntimeError, 100000^2 a 40 GB allocation); bounded where it is parsed
@pytest.mark.parametrize(
    "shape",
    ["100000,100000,100000,100000", "1,100000,100000", "1,1,1,1,1,1,1,1,1", "1," + "9" * 5000],
)
def test_advise_example_shape_is_bounded(shape: str) -> None:
    assert_refused(parse_args("advise", "--example", shape), "--example")


def test_advise_example_shape_of_a_real_input_is_parsed() -> None:
    assert parse_args("advise", "--example", "1,3,224,224").returncode == 0

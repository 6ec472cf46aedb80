"""Bad .pte input: one line naming the file and the problem, a non-zero exit, no traceback."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ethosu_kit.core.errors import PteError
from ethosu_kit.npu.facts import Accelerator, MemoryMode
from ethosu_kit.pte import parse_pte, read_pte, vela_streams
from ethosu_kit.pte.model import CopHeader, Delegate, EthosUCompileSpec, MethodInfo, VelaStream
from ethosu_kit.pte.reader import _check_one_target


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("ethosu-kit")
    cmd = [exe] if exe else [sys.executable, "-m", "ethosu_kit"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=60, check=False)


def _assert_one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert result.returncode != 0, result
    assert result.stdout == ""
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    lines = result.stderr.splitlines()
    assert 1 <= len(lines) <= 2, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    if len(lines) == 2:
        assert lines[1].startswith("hint: "), result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# -- through the real CLI, no lowering needed ------------------------------------------


def test_cli_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty.pte"
    p.write_bytes(b"")
    _assert_one_line_error(_cli("inspect", str(p)), str(p), "0 bytes")


def test_cli_random_bytes(tmp_path: Path) -> None:
    p = tmp_path / "noise.pte"
    p.write_bytes(random.Random(7).randbytes(4096))
    _assert_one_line_error(_cli("inspect", str(p)), str(p), "not an ExecuTorch .pte")


def test_cli_missing_file_and_directory(tmp_path: Path) -> None:
    _assert_one_line_error(_cli("inspect", str(tmp_path / "nope.pte")), "no such file")
    _assert_one_line_error(_cli("inspect", str(tmp_path)), "is a directory")


def test_cli_json_errors_too(tmp_path: Path) -> None:
    p = tmp_path / "empty.pte"
    p.write_bytes(b"")
    _assert_one_line_error(_cli("inspect", "--json", str(p)), str(p))


# -- through the real CLI, on a real lowered file --------------------------------------


def test_cli_truncated_pte(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    data = data_pte_u55_shared.read_bytes()
    for cut in (len(data) - 1, len(data) // 2, 100):
        p = tmp_path / f"cut{cut}.pte"
        p.write_bytes(data[:cut])
        _assert_one_line_error(_cli("inspect", str(p)), str(p), "truncated")


def test_cli_wrong_magic(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    data = bytearray(data_pte_u55_shared.read_bytes())
    data[4:8] = b"PK\x03\x04"
    p = tmp_path / "magic.pte"
    p.write_bytes(data)
    _assert_one_line_error(_cli("inspect", str(p)), str(p), "file identifier", "ET12")


# -- messages of the reader, on bytes ----------------------------------------------------


def _error(data: bytes) -> str:
    with pytest.raises(PteError) as info:
        parse_pte(data, "m.pte")
    message = str(info.value)
    assert message.startswith("m.pte: ") and "\n" not in message
    return message


def test_other_schema_version_is_named() -> None:
    assert "schema ET11" in _error(b"\x10\0\0\0ET11" + bytes(64))


def test_short_file() -> None:
    assert "too short" in _error(b"\x10\0\0\0ET")


def test_every_truncation_of_a_real_pte_is_named_truncated(data_pte_u55_shared: Path) -> None:
    data = data_pte_u55_shared.read_bytes()
    for cut in range(40, len(data), 61):
        assert "truncated" in _error(data[:cut]), cut


def _patched(data: bytes, old: bytes, new: bytes) -> bytes:
    assert data.count(old) == 1, old
    return data.replace(old, new)


def test_corrupt_vela_stream(data_pte_u55_shared: Path) -> None:
    data = data_pte_u55_shared.read_bytes()
    assert "not a Vela block stream" in _error(
        _patched(data, b"vela_bin_stream", b"xela_bin_stream")
    )
    assert "does not start with 'COP1'" in _error(_patched(data, b"COP1", b"COP9"))
    assert "no scratch_size block" in _error(_patched(data, b"scratch_size\0", b"scratch_sizf\0"))


def test_compile_spec_target_disagreeing_with_flags(data_pte_u55_shared: Path) -> None:
    data = data_pte_u55_shared.read_bytes()
    # the `target` compile spec value: a 13-byte [ubyte] vector
    bad = _patched(data, b"\x0d\0\0\0ethos-u55-128", b"\x0d\0\0\0ethos-u85-128")
    message = _error(bad)
    assert "'ethos-u85-128' disagrees with --accelerator-config=ethos-u55-128" in message


def test_unknown_memory_mode(data_pte_u55_shared: Path) -> None:
    data = data_pte_u55_shared.read_bytes()
    bad = _patched(data, b"--memory-mode=Shared_Sram", b"--memory-mode=Bogus_Sram_")
    assert "no known --memory-mode ('Bogus_Sram_')" in _error(bad)


def _method(name: str, accelerator: str, mode: str) -> MethodInfo:
    spec = EthosUCompileSpec(
        Accelerator.parse(accelerator),
        "sys",
        MemoryMode.parse(mode),
        mode,
        "Arm/vela.ini",
        (),
        None,
    )
    stream = VelaStream(16, 0, 0, (), (), CopHeader(0, 0, 0, 32), False)
    return MethodInfo(
        name, (), (), (), (), (Delegate("EthosUBackend", (), 64, spec, stream),), 0, 0, 0
    )


def test_delegates_disagreeing_on_target_or_mode() -> None:
    from ethosu_kit.pte._flatbuffer import Malformed

    same = (
        _method("a", "ethos-u55-128", "Shared_Sram"),
        _method("b", "ethos-u55-128", "Shared_Sram"),
    )
    _check_one_target(same)
    for other in (("ethos-u85-256", "Shared_Sram"), ("ethos-u55-128", "Sram_Only")):
        with pytest.raises(Malformed, match="Ethos-U delegates disagree"):
            _check_one_target((same[0], _method("b", *other)))


def test_read_functions_name_missing_files(tmp_path: Path) -> None:
    with pytest.raises(PteError, match="no such file"):
        read_pte(tmp_path / "none.pte")
    with pytest.raises(PteError, match="too short"):
        vela_streams(b"", "x.pte")


def test_external_vela_block_not_in_the_pte(data_pte_u55_shared: Path) -> None:
    """External blocks (VelaExternalBlockPlacements) live in a .ptd the kit does not place."""
    data = bytearray(data_pte_u55_shared.read_bytes())
    header = data.index(b"weight_data\0")
    data[header + 20] = 1  # the block's external flag; its payload is now read as a key
    with pytest.raises(PteError) as info:
        parse_pte(bytes(data), "m.pte")
    assert "Vela block 'weight_data'" in str(info.value)
    assert "external" in str(info.value)

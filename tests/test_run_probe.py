"""`ethosu-kit run ELF --probe …`: an image on a board through a debug probe's GDB server.

QEMU's gdbstub is the board here: the same image through `run --probe` (GDB loads it,
resets, runs it; semihosting served by GDB's File-I/O; the console from QEMU's UART on a
TCP port) gives what the normal `qemu -kernel` run gives: the exit code (a failing
firmware's too), the console, and `run --inputs … -o out.npz` (the executor_runner, with
the user's checkouts). Both ways in: `--probe qemu`, where run starts QEMU itself, and
`--probe qemu:HOST:PORT --serial socket://…` against a QEMU the test started, the generic
path any GDB server takes. Failures are one `error:` line with run's codes (64 usage, 65
no GDB or no server, 75 the time limit), and no GDB or QEMU outlives the run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.firmware.gdb_mi import RecordKind, parse_record
from ethosu_kit.firmware.probe import ProbeKind, load_steps, parse_probe
from fw_helpers import Built, built, need_cross_gcc, need_qemu
from hostile import Result, assert_refused, run_kit
from projects import make_project

REPO = Path(__file__).resolve().parents[1]
MARK = "ETHOSU_KIT_PROBE_TEST"  # in the environment of everything a run starts


def need_gdb() -> None:
    if shutil.which("gdb-multiarch") is None:
        pytest.skip("gdb-multiarch is not installed (apt-get install gdb-multiarch)")


def leftovers(mark: str) -> list[str]:
    """Processes still alive that a run started (they inherit its environment)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"{MARK}={mark}".encode() in environ.split(b"\0") and state != "Z":
            found.append(f"{entry.name}: {cmd}")
    return found


def kit(*args: str | Path, timeout: float = 120) -> Result:
    """run_kit with a mark, failing when a GDB or QEMU of the run is left behind."""
    mark = uuid.uuid4().hex
    result = run_kit(*args, timeout=timeout, env={MARK: mark})
    time.sleep(0.05)
    left = leftovers(mark)
    assert not left, f"left running after `ethosu-kit {' '.join(map(str, args))}`: {left}"
    return result


def console(text: str) -> str:
    """The console without what differs from run to run (cycle counts, times)."""
    return "\n".join(
        re.sub(r"\d+", "N", line) if re.search(r"cycle|\bus\b", line) else line
        for line in text.splitlines()
    )


# -- no firmware needed ----------------------------------------------------------------


def test_mi_records_are_parsed() -> None:
    stopped = parse_record(
        '*stopped,reason="breakpoint-hit",disp="keep",bkptno="1",frame={addr="0x10001a48",'
        'func="kit_semihost_cmdline",args=[{name="buf",value="0x30001000 \\"\\""}]},'
        'thread-id="1",stopped-threads="all"'
    )
    assert stopped.kind is RecordKind.EXEC and stopped.cls == "stopped"
    assert stopped.get("bkptno") == "1"
    frame = stopped.results["frame"]
    assert isinstance(frame, dict) and frame["func"] == "kit_semihost_cmdline"
    assert frame["args"] == [{"name": "buf", "value": '0x30001000 ""'}]
    exited = parse_record('=thread-group-exited,id="i1",exit-code="021"')
    assert exited.get("exit-code") == "021"  # octal: 17, KIT_EXIT_INIT
    target = parse_record('@"kit: exit 0\\n\\033\\t"')
    assert target.kind is RecordKind.TARGET and target.text == "kit: exit 0\n\x1b\t"
    done = parse_record('7^done,register-values=[{number="13",value="0x30003700"}]')
    assert done.token == 7 and done.kind is RecordKind.RESULT
    assert parse_record("(gdb) ").kind is RecordKind.PROMPT


def test_probe_addresses() -> None:
    assert parse_probe("openocd") == parse_probe("openocd:localhost:3333")
    assert parse_probe("jlink").port == 2331
    spec = parse_probe("pyocd:board.local:50000")
    assert (spec.kind, spec.host, spec.port, spec.launch) == (ProbeKind.PYOCD, "board.local",
                                                                50000, False)  # fmt: skip
    assert parse_probe("qemu").launch
    assert parse_probe("qemu:127.0.0.1:1234").address == "127.0.0.1:1234"
    assert parse_probe("openocd:[::1]:3333").host == "::1"
    # every kind resets the core halted; the servers that need it are told to serve
    # semihosting with the file calls through GDB
    for kind in ProbeKind:
        assert kind.server.reset, kind
    assert "monitor arm semihosting_fileio enable" in ProbeKind.OPENOCD.server.semihosting
    for bad, why in (("stlink", "not a probe kind"), ("openocd:host:0", "port"),
                     ("openocd:host:x", "port"), ("jlink:a b:1", "space")):  # fmt: skip
        with pytest.raises(ValueError, match=why):
            parse_probe(bad)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--probe", "stlink"], "not a probe kind"),
        (["--probe", "openocd:h:99999"], "port"),
        (["--serial", "/dev/ttyACM0"], "need --probe"),
        (["--probe", "openocd", "--emulator", "qemu"], "no --emulator or --fvp"),
        (["--probe", "openocd", "--fvp", "/x/FVP"], "no --emulator or --fvp"),
        (["--probe", "openocd", "--serial", "x", "--baud", "0"], "not a baud rate"),
    ],
)
def test_usage_errors(bringup: Built, args: list[str], needle: str) -> None:
    result = kit("run", bringup.elf, *args)
    assert_refused(result, needle, code=64)


def test_flash_manifest_is_read(tmp_path: Path) -> None:
    """The build's flash artefacts are what is loaded, each image's HEX (flash programmed
    through the server) or its .bin at its address; a stale manifest, or one of another
    image, is passed over for the ELF; a manifest naming a missing file is refused."""
    elf = tmp_path / "fw.elf"
    elf.write_bytes(b"")
    assert load_steps(elf)[0][0].command == "-target-download"
    (tmp_path / "QSPI.hex").write_text(":00000001FF\n")
    (tmp_path / "MRAM.bin").write_bytes(b"\0")
    manifest = tmp_path / "flash_manifest.json"
    manifest.write_text(json.dumps({"elf": "fw.elf", "images": [
        {"region": "QSPI", "address": 0x38000000, "hex": "QSPI.hex", "bin": "QSPI.bin"},
        {"region": "MRAM", "address": "0x80000000", "bin": "MRAM.bin"},
    ]}))  # fmt: skip
    steps, source = load_steps(elf)
    assert source == "flash_manifest.json"
    assert [s.what for s in steps] == ["QSPI.hex", "MRAM.bin"]
    assert f'load \\"{tmp_path / "QSPI.hex"}\\"' in steps[0].command
    assert "binary 0x80000000" in steps[1].command
    os.utime(manifest, (1, 1))  # older than the ELF: another build's
    assert load_steps(elf)[0][0].command == "-target-download"
    manifest.write_text(json.dumps({"elf": "other.elf", "images": [{"hex": "QSPI.hex"}]}))
    assert load_steps(elf)[0][0].command == "-target-download"
    manifest.write_text(json.dumps({"images": [{"hex": "gone.hex"}]}))
    from ethosu_kit.core.errors import KitError

    with pytest.raises(KitError, match=r"lists gone\.hex, which is not there"):
        load_steps(elf)


# -- the bring-up image ----------------------------------------------------------------


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("probe")


@pytest.fixture(scope="module")
def bringup(data_pte_u55_shared: Path, root: Path) -> Built:
    return built(data_pte_u55_shared, "cs300", "Shared_Sram", root)


def test_no_gdb_is_one_error(bringup: Built, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # a PATH with Python but no gdb-multiarch
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    mark = uuid.uuid4().hex
    result = run_kit("run", bringup.elf, "--probe", "openocd", env={"PATH": str(bin_dir),
                                                                    MARK: mark})  # fmt: skip
    assert_refused(result, "gdb-multiarch is not installed", code=65)
    assert "apt-get install gdb-multiarch" in result.stderr


def test_no_server_is_one_error(bringup: Built) -> None:
    need_gdb()
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    result = kit("run", bringup.elf, "--probe", f"openocd:127.0.0.1:{port}")
    assert_refused(result, f"cannot connect to the GDB server at 127.0.0.1:{port}", code=65)
    assert "openocd -f interface" in result.stderr  # how to start the server
    assert time.monotonic() - start < 20


def test_a_serial_port_that_cannot_open_is_one_error(bringup: Built, tmp_path: Path) -> None:
    need_gdb()
    for url in (tmp_path / "ttyNOPE", "socket://127.0.0.1:1", "nope://x"):
        result = kit("run", bringup.elf, "--probe", "qemu", "--serial", url)
        assert_refused(result, f"--serial {url}: cannot open it", code=65)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port that accepts GDB's connection and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []

    def accept() -> None:
        try:
            while True:
                held.append(server.accept()[0])
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
        for conn in held:
            conn.close()


def test_time_limit_stops_gdb(bringup: Built, silent_server: int) -> None:
    need_gdb()
    start = time.monotonic()
    result = kit("run", bringup.elf, "--probe", f"pyocd:127.0.0.1:{silent_server}",
                 "--timeout", "3")  # fmt: skip
    assert_refused(result, "no exit after 3 s (connecting to pyocd at 127.0.0.1", code=75)
    assert time.monotonic() - start < 15


def test_ctrl_c_stops_gdb(bringup: Built, silent_server: int) -> None:
    need_gdb()
    mark = uuid.uuid4().hex
    env = {**os.environ, MARK: mark}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ethosu_kit", "run", str(bringup.elf), "--probe",
         f"openocd:127.0.0.1:{silent_server}", "--timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while not any("gdb" in p for p in leftovers(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert any("gdb" in p for p in leftovers(mark)), "GDB never started"
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "error: interrupted" in err and "Traceback" not in err, err
    time.sleep(0.05)
    assert not leftovers(mark)


@pytest.mark.qemu
def test_bringup_through_the_probe_equals_the_qemu_run(bringup: Built) -> None:
    need_qemu()
    need_gdb()
    normal = kit("run", bringup.elf)
    probe = kit("run", bringup.elf, "--probe", "qemu")
    assert normal.returncode == probe.returncode == 0, probe
    assert "BRINGUP PASS" in probe.stdout
    assert console(probe.stdout) == console(normal.stdout)
    assert "loading the ELF's load segments" in probe.stderr
    assert "started with SP and PC from its vector table in ITCM at 0x10000000" in probe.stderr


@pytest.fixture(scope="module")
def failing(bringup: Built, root: Path) -> Path:
    """The bring-up with one buffer's region named wrong: it exits 1 (FAIL)."""
    from ethosu_kit.firmware.build import build_project

    bad = root / "bad-region"
    shutil.copytree(bringup.project, bad, ignore=shutil.ignore_patterns("build"))
    config = bad / "generated" / "kit_memory_config.h"
    text = re.sub(r'(X\(temp_pool, kit_temp_pool, \w+, )"SRAM"', r'\1"DDR"', config.read_text())
    config.write_text(text)
    return build_project(bad, app="bringup")


@pytest.fixture
def gdbstub() -> Iterator[tuple[int, int]]:
    """QEMU's mps3-an547 halted with its gdbstub and UART on local ports, as
    docs/running.md's recipe starts it: (GDB port, UART port)."""
    need_qemu()
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    qemu = subprocess.Popen(
        ["qemu-system-arm", "-M", "mps3-an547", "-cpu", "cortex-m55", "-display", "none",
         "-monitor", "none", "-S", "-gdb", f"tcp:127.0.0.1:{ports[0]}",
         "-semihosting-config", "enable=on,target=gdb",
         "-serial", f"tcp:127.0.0.1:{ports[1]},server=on,wait=off"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # listening?
        try:
            socket.create_connection(("127.0.0.1", ports[0]), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    try:
        yield ports[0], ports[1]
    finally:
        if qemu.poll() is None:
            os.killpg(qemu.pid, signal.SIGKILL)
        qemu.wait()


@pytest.mark.qemu
def test_a_failing_firmware_keeps_its_code(failing: Path) -> None:
    need_gdb()
    normal = kit("run", failing)
    probe = kit("run", failing, "--probe", "qemu")
    assert normal.returncode == probe.returncode == 1, probe
    assert "BRINGUP FAIL" in probe.stdout
    assert console(probe.stdout) == console(normal.stdout)


@pytest.mark.qemu
def test_a_gdb_server_address(failing: Path, gdbstub: tuple[int, int]) -> None:
    """The generic path: a GDB server at an address (QEMU's gdbstub started apart, as a
    pyOCD or OpenOCD would be) and the board's UART as a pyserial URL."""
    need_gdb()
    gdb_port, uart_port = gdbstub
    normal = kit("run", failing)
    probe = kit("run", failing, "--probe", f"qemu:127.0.0.1:{gdb_port}",
                "--serial", f"socket://127.0.0.1:{uart_port}")  # fmt: skip
    assert probe.returncode == 1, probe
    assert console(probe.stdout) == console(normal.stdout)
    assert f"through qemu at 127.0.0.1:{gdb_port}" in probe.stderr


@pytest.mark.qemu
def test_flash_artefacts_are_loaded(bringup: Built, root: Path) -> None:
    """A build's per-region Intel HEX files and their manifest, loaded instead of the
    ELF (here made with objcopy: the network's region and the rest apart)."""
    need_gdb()
    need_qemu()
    folder = root / "flash"
    folder.mkdir()
    elf = folder / "fw.elf"
    shutil.copy(bringup.elf, elf)
    shutil.copy(bringup.elf.with_name("bringup.memory_plan.json"), folder / "fw.memory_plan.json")
    objcopy = "arm-none-eabi-objcopy"
    subprocess.run([objcopy, "-O", "ihex", "-j", ".kit.network", elf, folder / "QSPI.hex"],
                   check=True)  # fmt: skip
    subprocess.run([objcopy, "-O", "ihex", "-R", ".kit.network", elf, folder / "ITCM.hex"],
                   check=True)  # fmt: skip
    images = [{"region": "ITCM", "hex": "ITCM.hex"}, {"region": "QSPI", "hex": "QSPI.hex"}]
    (folder / "flash_manifest.json").write_text(json.dumps({"elf": "fw.elf", "images": images}))
    probe = kit("run", elf, "--probe", "qemu")
    assert probe.returncode == 0, probe
    assert "loading ITCM.hex, QSPI.hex (from flash_manifest.json)" in probe.stderr
    assert re.search(r"^buffer network .*memory=pte-magic-ok PASS$", probe.stdout, re.M)


def board_copy(root: Path, name: str, change: Callable[[str], str]) -> Path:
    """corstone-300's board.toml, renamed and changed, in a folder of its own."""
    text = (REPO / "boards" / "corstone-300" / "board.toml").read_text()
    text = text.replace('name = "corstone-300"', f'name = "{name}"')
    text = text.replace('aliases = ["cs300", "default"]', "aliases = []")
    board = root / name / "board.toml"
    board.parent.mkdir()
    board.write_text(change(text))
    return board


@pytest.mark.qemu
def test_an_image_that_boots_cold_is_started_by_a_reset(
    data_pte_u55_shared: Path, root: Path
) -> None:
    """A vector table in non-volatile memory: the core is reset after the load and takes
    SP and PC from it, as at power-up (QEMU's `monitor system_reset`), not set by GDB."""
    need_cross_gcc()
    need_gdb()
    need_qemu()
    from ethosu_kit.firmware.build import build_project

    itcm = 'kind = "itcm"\nbase = 0x10000000\nsize = "512 KiB"\non_chip = true\nvolatile = '
    board = board_copy(root, "cs300-nv-itcm", lambda t: t.replace(itcm + "true", itcm + "false"))
    elf = build_project(make_project(data_pte_u55_shared, root / "nv", board=board).path)
    normal = kit("run", elf)
    probe = kit("run", elf, "--probe", "qemu")
    assert normal.returncode == probe.returncode == 0, probe
    assert "started by a reset: its vector table is in non-volatile ITCM" in probe.stderr
    assert console(probe.stdout) == console(normal.stdout)


# -- the self-test, and a console through semihosting -----------------------------------


@pytest.mark.qemu
def test_selftest_through_the_probe(data_pte_u55_shared: Path, root: Path) -> None:
    need_cross_gcc()
    need_gdb()
    from ethosu_kit.cli.app import main as kit_main

    project = make_project(data_pte_u55_shared, root / "selftest", app="selftest").path
    assert kit_main(["build", str(project), "--app", "selftest", "--npu", "virtual"]) == 0
    elf = project / "build" / "gcc" / "selftest.elf"
    normal = kit("run", elf)
    probe = kit("run", elf, "--probe", "qemu")
    assert normal.returncode == probe.returncode == 0, probe
    assert "SELFTEST PASS" in probe.stdout
    assert console(probe.stdout) == console(normal.stdout)


@pytest.mark.qemu
def test_semihosting_console_comes_through_gdb(data_pte_u55_shared: Path, root: Path) -> None:
    """A board whose console is semihosting: its text reaches run through GDB (File-I/O
    writes), not through a UART."""
    need_cross_gcc()
    need_gdb()
    from ethosu_kit.firmware.build import build_project

    board = board_copy(root, "cs300-semihosting", lambda t: re.sub(
        r"\[console\]\n(?:[^\[\n].*\n)*", '[console]\nkind = "semihosting"\n\n', t))  # fmt: skip
    project = make_project(data_pte_u55_shared, root / "sh", board=board).path
    elf = build_project(project, app="bringup")
    normal = kit("run", elf)
    probe = kit("run", elf, "--probe", "qemu")
    assert normal.returncode == probe.returncode == 0, probe
    assert "BRINGUP PASS" in probe.stdout
    assert console(probe.stdout) == console(normal.stdout)


# -- the executor_runner's file protocol (the user's checkouts) --------------------------


@pytest.mark.qemu
@pytest.mark.slow
def test_runner_inputs_and_outputs_through_the_probe(data_pte_u55_shared: Path, root: Path) -> None:
    """`run --inputs x.npy -o out.npz` through GDB's File-I/O (the command line answered by
    GDB) saves what the `qemu -kernel` run saves, bit for bit; `-o` alone too."""
    from runner_build import build_with_cli, require_externals

    require_externals("EXECUTORCH_ROOT")
    need_gdb()
    need_qemu()
    project = make_project(data_pte_u55_shared, root / "runner").path
    elf = build_with_cli(project, "virtual")
    x = np.random.default_rng(7).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
    np.save(root / "x.npy", x)
    outs = {}
    for name, probe in (("normal", ()), ("probe", ("--probe", "qemu"))):
        ran = kit("run", elf, *probe, "--inputs", root / "x.npy", "-o", root / f"{name}.npz")
        assert ran.returncode == 0, ran
        assert "kit: input 0: 3072 bytes from kit_input_0.bin" in ran.stdout, ran
        outs[name] = (dict(np.load(root / f"{name}.npz")), console(ran.stdout))
        alone = kit("run", elf, *probe, "-o", root / f"{name}-alone.npz")
        assert alone.returncode == 0, alone
        outs[f"{name}-alone"] = (dict(np.load(root / f"{name}-alone.npz")), "")
    for a, b in (("normal", "probe"), ("normal-alone", "probe-alone")):
        (left, left_console), (right, right_console) = outs[a], outs[b]
        assert sorted(left) == sorted(right) == ["input0", "output0"]
        for key in left:
            assert left[key].dtype == right[key].dtype
            assert np.array_equal(left[key], right[key]), key
        assert left_console == right_console
    assert np.array_equal(outs["probe"][0]["input0"], x)

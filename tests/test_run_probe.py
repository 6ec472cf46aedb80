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
from ethosu_kit.firmware.probe_kind import ProbeKind, load_steps, parse_probe
from fw_helpers import Built, built, need_cross_gcc, need_qemu
from hostile import Result, assert_refused, live_processes, run_kit
from projects import make_project

REPO = Path(__file__).resolve().parents[1]
MARK = "ETHOSU_KIT_PROBE_TEST"  # in the environment of everything a run starts


def need_gdb() -> None:
    if shutil.which("gdb-multiarch") is None:
        pytest.skip("gdb-multiarch is not installed (apt-get install gdb-multiarch)")


def leftovers(mark: str) -> list[str]:
    """Processes still alive that a run started (they inherit its environment)."""
    found = []
    for entry, _ in live_processes():
        try:
            environ = (entry / "environ").read_bytes()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"{MARK}={mark}".encode() in environ.split(b"\0"):
            found.append(f"{entry.name}: {cmd}")
    return found


def kit(*args: str | Path, timeout: float = 120) -> Result:
    """run_kit with a mark, failing when a GDB or QEMU of the run is left behind."""
    mark = uuid.uuid4().hex
    result = run_kit(*args, timeout=timeout, env={MARK: mark})
    # a sandboxed child (bwrap's namespace init, then what it runs) dies with its parent
    # a moment after it: give it that moment, not more. The init is in its own session
    # (--new-session), so the kit's group kill reaches it only through --die-with-parent,
    # and tearing down its PID namespace took over 3 s on a loaded 2-core machine
    deadline = time.monotonic() + 10
    while (left := leftovers(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"left running after `ethosu-kit {' '.join(map(str, args))}`: {left}"
    return result


def console(text: str) -> str:
    """The console without what differs from run to run (cycle counts, times)."""
    return "\n".join(
        re.sub(r"\d+", "N", line) if re.search(r"cycle|\bus\b", line) else line
        for line in text.splitlines()
    )


def same_run(elf: Path, *probe: str) -> Result:
    """The image through `run --probe qemu` (or `probe`), checked against the `qemu
    -kernel` run: the same exit code and console. The probe run's Result."""
    need_qemu()
    need_gdb()
    normal = kit("run", elf)
    through = kit("run", elf, *(probe or ("--probe", "qemu")))
    assert through.returncode == normal.returncode, f"{normal}\n{through}"
    assert console(through.stdout) == console(normal.stdout)
    return through


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
    assert parse_record('@"\\302\\265s"').data == "µs".encode()  # GDB's octal: one byte each
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
    # GDB gets the host resolved (its sandbox has no /etc/hosts); numbers stay as written
    assert parse_probe("openocd").gdb_address == "127.0.0.1:3333"
    assert parse_probe("openocd:10.0.0.7:3333").gdb_address == "10.0.0.7:3333"
    assert parse_probe("openocd:[::1]:3333").gdb_address == "[::1]:3333"
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
    """The flash artefacts `build` wrote (firmware.flash's manifest) are what is loaded,
    each region's Intel HEX (flash programmed through the server); a manifest of another
    image, an older one, or one that leaves stored bytes out is passed over for the ELF;
    one naming a missing file is refused."""
    from ethosu_kit.core.errors import KitError
    from ethosu_kit.core.typed_json import encode
    from ethosu_kit.firmware.flash import FlashFile, FlashManifest, manifest_path

    elf = tmp_path / "fw.elf"
    elf.write_bytes(b"")
    assert load_steps(elf)[0][0].command == "-target-download"
    files = tuple(
        FlashFile(region, address, 1, f"fw.{region}.bin", f"fw.{region}.hex", "0" * 64)
        for region, address in (("FLASH", 0), ("QSPI", 0x38000000))
    )
    for f in files:
        (tmp_path / f.hex).write_text(":00000001FF\n")

    def manifest(**change: object) -> None:
        fields = {"format": 1, "elf": "fw.elf", "board": "b", "files": files, **change}
        manifest_path(elf).write_text(json.dumps(encode(FlashManifest(**fields))))

    manifest()
    steps, source = load_steps(elf)
    assert source == "fw.flash_manifest.json"
    assert [s.what for s in steps] == ["fw.FLASH.hex", "fw.QSPI.hex"]
    assert f'load \\"{tmp_path / "fw.FLASH.hex"}\\"' in steps[0].command
    assert steps[1].path == tmp_path / "fw.QSPI.hex"
    for change in ({"elf": "other.elf"}, {"left_out": ("64 bytes at 0x20000000 in SRAM",)}):
        manifest(**change)
        assert load_steps(elf)[0][0].command == "-target-download", change
    manifest()
    os.utime(manifest_path(elf), (1, 1))  # older than the ELF: another build's
    assert load_steps(elf)[0][0].command == "-target-download"
    (tmp_path / "fw.QSPI.hex").unlink()
    manifest()
    with pytest.raises(KitError, match=r"lists fw\.QSPI\.hex, which is not there"):
        load_steps(elf)


class FakeStop:
    """What _stopped asks GDB of a halted core, answered from a table."""

    elf = Path("fw.elf")

    def __init__(self, values: dict[str, int]) -> None:
        self.values = values

    def value(self, expression: str) -> int:
        return self.values[expression]


def halted_at_exit(pc: int, at: int, op: int, block: tuple[int, int]) -> dict[str, int]:
    """A core halted at `pc`, the semihosting BKPT at `at`, r0 = op, r1 -> block."""
    return {
        "$pc": pc,
        f"*(unsigned short *){pc:#x}": 0xBEAB if pc == at else 0x4770,
        f"*(unsigned short *){pc - 2:#x}": 0xBEAB if pc - 2 == at else 0x4770,
        "$r0": op,
        "$r1": 0x30001000 if op == 0x20 else block[0],
        "*(unsigned int *)0x30001000": block[0],
        "*(unsigned int *)0x30001004": block[1],
    }


def test_an_exit_call_the_server_halts_at_gives_its_code() -> None:
    """OpenOCD and J-Link, with GDB attached, halt the core at SYS_EXIT_EXTENDED instead
    of reporting an exit: the code is read from the call's block, with the PC at the BKPT
    or just after it; SYS_EXIT says 0 or 1; another call is one the server did not serve."""
    from ethosu_kit.core.errors import KitError
    from ethosu_kit.firmware.gdb_mi import Record
    from ethosu_kit.firmware.probe import _stopped

    spec = parse_probe("openocd")
    stop = Record(RecordKind.EXEC, None, "stopped", {"reason": "signal-received"})
    for pc in (0x10000100, 0x10000102):  # at the BKPT, after it
        fake = FakeStop(halted_at_exit(pc, 0x10000100, 0x20, (0x20026, 17)))
        assert _stopped(fake, spec, stop).code == 17
    exit_call = FakeStop(halted_at_exit(0x10000100, 0x10000100, 0x18, (0x20026, 0)))
    assert _stopped(exit_call, spec, stop).code == 0
    unserved = FakeStop(halted_at_exit(0x10000100, 0x10000100, 0x05, (0, 0)))
    with pytest.raises(KitError, match=r"semihosting call 0x05 .* the GDB server did not serve"):
        _stopped(unserved, spec, stop)
    elsewhere = FakeStop(halted_at_exit(0x10000200, 0x10000100, 0, (0, 0)))
    frame = {"func": "HardFault_Handler"}
    fault = Record(RecordKind.EXEC, None, "stopped", {"signal-name": "SIGTRAP", "frame": frame})
    with pytest.raises(KitError, match=r"stopped \(SIGTRAP\) at 0x10000200 in HardFault_Handler"):
        _stopped(elsewhere, spec, fault)


# -- the bring-up image ----------------------------------------------------------------


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
    deadline = time.monotonic() + 3
    while leftovers(mark) and time.monotonic() < deadline:
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
    probe = same_run(failing)
    assert probe.returncode == 1, probe
    assert "BRINGUP FAIL" in probe.stdout


@pytest.mark.qemu
def test_a_gdb_server_address(failing: Path, gdbstub: tuple[int, int]) -> None:
    """The generic path: a GDB server at an address (QEMU's gdbstub started apart, as a
    pyOCD or OpenOCD would be) and the board's UART as a pyserial URL; the host named
    `localhost`, as docs/running.md writes it and as `--probe openocd` defaults: GDB runs
    in the sandbox, which cannot resolve a name, so run resolves it (it could not)."""
    gdb_port, uart_port = gdbstub
    probe = same_run(failing, "--probe", f"qemu:localhost:{gdb_port}",
                     "--serial", f"socket://localhost:{uart_port}")  # fmt: skip
    assert probe.returncode == 1, probe
    assert f"through qemu at localhost:{gdb_port}" in probe.stderr


def board_copy(root: Path, name: str, change: Callable[[str], str]) -> Path:
    """corstone-300's board.toml, renamed and changed, in a folder of its own."""
    text = (REPO / "boards" / "corstone-300" / "board.toml").read_text()
    text = text.replace('name = "corstone-300"', f'name = "{name}"')
    text = text.replace('aliases = ["cs300", "default"]', "aliases = []")
    board = root / name / "board.toml"
    board.parent.mkdir()
    board.write_text(change(text))
    return board


AN386 = REPO / "docs" / "examples" / "boards" / "mps2-an386"  # boots cold from its FLASH


@pytest.mark.qemu
def test_a_cold_boot_port_runs_from_its_flash_artefacts(
    data_pte_u55_sram_only: Path, root: Path
) -> None:
    """The example port that boots cold from non-volatile FLASH (QEMU's mps2-an386, a
    machine the kit does not ship): GDB loads the flash artefacts `build` wrote (not the
    ELF), a reset starts the image from its vector table in FLASH; bring-up and self-test
    (its network stored in FLASH, copied to SRAM at reset) end as under `qemu -kernel`."""
    need_cross_gcc()
    from ethosu_kit.firmware.build import build_project

    for app, npu in (("bringup", None), ("selftest", "virtual")):
        project = make_project(data_pte_u55_sram_only, root / f"an386-{app}", board=AN386,
                               app=app, npu=npu)  # fmt: skip
        elf = build_project(project.path, app=app)
        probe = same_run(elf)
        assert probe.returncode == 0, probe
        assert f"{app.upper()} PASS" in probe.stdout
        assert f"loading {app}.FLASH.hex (from {app}.flash_manifest.json)" in probe.stderr
        assert "started by a reset: its vector table is in non-volatile FLASH" in probe.stderr


# -- the self-test, and a console through semihosting -----------------------------------


@pytest.mark.qemu
def test_selftest_through_the_probe(data_pte_u55_shared: Path, root: Path) -> None:
    need_cross_gcc()
    need_gdb()
    from ethosu_kit.cli.app import main as kit_main

    project = make_project(data_pte_u55_shared, root / "selftest", app="selftest").path
    assert kit_main(["build", str(project), "--app", "selftest", "--npu", "virtual"]) == 0
    probe = same_run(project / "build" / "gcc" / "selftest.elf")
    assert probe.returncode == 0, probe
    assert "SELFTEST PASS" in probe.stdout


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
    probe = same_run(build_project(project, app="bringup"))
    assert probe.returncode == 0, probe
    assert "BRINGUP PASS" in probe.stdout


# -- the executor_runner's file protocol (the user's checkouts) --------------------------


@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.parametrize("board", ["cs300", "an386"])
def test_runner_inputs_and_outputs_through_the_probe(
    board: str, data_pte_u55_shared: Path, data_pte_u55_sram_only: Path, root: Path
) -> None:
    """`run --inputs x.npy -o out.npz` through GDB's File-I/O (the command line answered by
    GDB: a software breakpoint in Corstone-300's ITCM, a hardware one in the cold-boot
    port's FLASH) saves what the `qemu -kernel` run saves, bit for bit; `-o` alone too."""
    from runner_build import build_with_cli, require_externals

    require_externals("EXECUTORCH_ROOT")
    need_gdb()
    need_qemu()
    if board == "an386":  # boots cold: GDB loads its flash artefacts, a reset starts it
        pte, options = data_pte_u55_sram_only, {"board": AN386, "npu": "virtual"}
    else:
        pte, options = data_pte_u55_shared, {}
    project = make_project(pte, root / f"runner-{board}", **options).path
    elf = build_with_cli(project, "virtual")
    x = np.random.default_rng(7).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
    folder = root / f"io-{board}"
    folder.mkdir()
    np.save(folder / "x.npy", x)
    outs = {}
    for name, probe in (("normal", ()), ("probe", ("--probe", "qemu"))):
        ran = kit("run", elf, *probe, "--inputs", folder / "x.npy", "-o", folder / f"{name}.npz")
        assert ran.returncode == 0, ran
        assert "kit: input 0: 3072 bytes from kit_input_0.bin" in ran.stdout, ran
        outs[name] = (dict(np.load(folder / f"{name}.npz")), console(ran.stdout))
        alone = kit("run", elf, *probe, "-o", folder / f"{name}-alone.npz")
        assert alone.returncode == 0, alone
        outs[f"{name}-alone"] = (dict(np.load(folder / f"{name}-alone.npz")), "")
        if probe and board == "an386":
            assert "from executor_runner.flash_manifest.json" in ran.stderr, ran
    for a, b in (("normal", "probe"), ("normal-alone", "probe-alone")):
        (left, left_console), (right, right_console) = outs[a], outs[b]
        assert sorted(left) == sorted(right) == ["input0", "output0"]
        for key in left:
            assert left[key].dtype == right[key].dtype
            assert np.array_equal(left[key], right[key]), key
        assert left_console == right_console
    assert np.array_equal(outs["probe"][0]["input0"], x)


@pytest.mark.qemu
def test_a_stand_in_image_runs_on_the_qemu_probe_only(
    data_pte_u85_shared: Path, root: Path
) -> None:
    """An image laid out for a QEMU stand-in (Corstone-320 on mps3-an547) runs through
    `--probe qemu`, with the stand-in's line; a probe of a real board refuses it before
    anything connects."""
    need_cross_gcc()
    need_gdb()
    need_qemu()
    from ethosu_kit.firmware.build import build_project

    project = make_project(data_pte_u85_shared, root / "cs320", board="cs320", qemu_stand_in=True)
    elf = build_project(project.path, app="bringup", npu="virtual")
    refused = kit("run", elf, "--probe", "openocd:127.0.0.1:1")
    assert_refused(refused, "laid out for corstone-320's QEMU stand-in", code=65)
    probe = kit("run", elf, "--probe", "qemu")
    assert probe.returncode == 0, probe
    assert "stands in for corstone-320" in probe.stderr


@pytest.mark.qemu
def test_a_core_that_locks_up_is_no_exit(bringup: Built, root: Path) -> None:
    """An image whose initial SP is 0 locks the core up: QEMU ends with its own fatal
    message, which the error line names (76, NO_EXIT)."""
    need_gdb()
    need_qemu()
    from elftools.elf.elffile import ELFFile

    folder = root / "lockup"
    folder.mkdir()
    elf = folder / "lock.elf"
    shutil.copy(bringup.elf, elf)
    shutil.copy(bringup.elf.with_name("bringup.memory_plan.json"), folder / "lock.memory_plan.json")
    with elf.open("rb") as f:
        offset = ELFFile(f).get_section_by_name(".vectors")["sh_offset"]
    data = bytearray(elf.read_bytes())
    data[offset : offset + 4] = bytes(4)  # the vector table's initial SP
    elf.write_bytes(bytes(data))
    probe = kit("run", elf, "--probe", "qemu")
    assert probe.returncode == 76, probe
    lines = probe.stderr.splitlines()  # the loading line, then the error and its hint
    assert lines[0].startswith("ethosu-kit run: loading") and len(lines) == 3, probe
    assert_refused(Result(probe.args, 76, "", "\n".join(lines[1:])),
                   "ended without the firmware's exit (QEMU: qemu: fatal: Lockup")  # fmt: skip
    # the same image through a plain (sandboxed) run: QEMU's abort reaches run as bwrap's
    # status 128 + SIGABRT, still the emulator's end, not the firmware's code
    plain = kit("run", elf)
    assert plain.returncode == 76, plain
    assert "QEMU ended on signal 6" in plain.stderr or "qemu: fatal" in plain.stderr, plain

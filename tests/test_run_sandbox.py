"""`run` confines the emulator to the run's own folder (issue 20: untrusted firmware).

An app of its own, built with the cross compiler, uses the kit's semihosting file calls
(kit/semihosting_files.h) on a file in the run's folder, on a file of the host's the
test made elsewhere, on /etc/hostname, and writes outside: confined, only the run
folder works; with `--no-sandbox` (or ETHOSU_KIT_NO_SANDBOX=1) it reaches them all,
which proves the app could, and that run says so in one `warning:` line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ethosu_kit.firmware import sandbox
from fw_helpers import need_cross_gcc, need_qemu
from hostile import run_kit
from projects import make_project

pytestmark = pytest.mark.firmware

ESCAPE_APP = """\
#include "kit/app.h"
#include "kit/log.h"
#include "kit/platform.h"
#include "kit/semihosting_files.h"

static int readable(const char *name)
{
    char c;
    int h = kit_semihost_open(name, "rb");
    if (h < 0) {
        return 0;
    }
    int ok = kit_semihost_read(h, &c, 1) == 0;
    (void)kit_semihost_close(h);
    return ok;
}

static int writable(const char *name)
{
    int h = kit_semihost_open(name, "wb");
    if (h < 0) {
        return 0;
    }
    int ok = kit_semihost_write(h, "x", 1) == 0;
    (void)kit_semihost_close(h);
    return ok;
}

static const char *said(int ok) { return ok ? "yes" : "no"; }

int ethosu_kit_app_main(void)
{
    if (kit_platform_init() != 0) {
        return kit_app_result(17);
    }
    int own = writable("kit_own.bin") && readable("kit_own.bin");
    kit_printf("own folder: %s\\n", said(own));
    kit_printf("outside read: %s\\n", said(readable("@OUTSIDE@")));
    kit_printf("etc read: %s\\n", said(readable("/etc/hostname")));
    kit_printf("outside write: %s\\n", said(writable("@WRITE@")));
    return kit_app_result(own ? 0 : 1);
}
"""


@dataclass(frozen=True)
class Escape:
    elf: Path
    outside: Path  # a host file the app tries to read
    write: Path  # a host path the app tries to create


@pytest.fixture(scope="module")
def escape(data_pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Escape:
    from ethosu_kit.cli.app import main as kit_main

    need_cross_gcc()
    need_qemu()
    root = tmp_path_factory.mktemp("sandbox")
    secrets = root / "elsewhere"
    secrets.mkdir()
    outside = secrets / "secret.txt"
    outside.write_text("not for the firmware\n")
    write = secrets / "planted.txt"
    app = root / "escape_app"
    app.mkdir()
    source = ESCAPE_APP.replace("@OUTSIDE@", str(outside)).replace("@WRITE@", str(write))
    (app / "main.c").write_text(source)
    project = make_project(data_pte_u55_shared, root / "fw", board="cs300", mode="Shared_Sram")
    assert kit_main(["build", str(project.path), "--app", str(app), "--npu", "none"]) == 0
    return Escape(project.path / "build" / "gcc" / "escape_app.elf", outside, write)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != sandbox.ENV_OPT_OUT}
    env.update(extra)
    return env


def test_confined_run_reaches_only_its_own_folder(escape: Escape) -> None:
    if sandbox.bwrap_problem():
        pytest.skip(sandbox.bwrap_problem())
    escape.write.unlink(missing_ok=True)
    result = run_kit("run", escape.elf, "--emulator", "qemu", env=_env())
    assert result.returncode == 0, result
    assert "own folder: yes" in result.stdout, result
    assert "outside read: no" in result.stdout, result
    assert "etc read: no" in result.stdout, result
    assert "outside write: no" in result.stdout, result
    assert not escape.write.exists()
    assert "warning:" not in result.stderr, result


@pytest.mark.parametrize("how", ["flag", "env"])
def test_unconfined_run_says_so_once(escape: Escape, how: str) -> None:
    """The same app reaches the host's files when the user opts out: the confined run's
    `no` is the sandbox's doing, not the app's."""
    escape.write.unlink(missing_ok=True)
    flag = ("--no-sandbox",) if how == "flag" else ()
    env = _env(**({sandbox.ENV_OPT_OUT: "1"} if how == "env" else {}))
    result = run_kit("run", escape.elf, "--emulator", "qemu", *flag, env=env)
    assert result.returncode == 0, result
    assert "outside read: yes" in result.stdout, result
    assert "outside write: yes" in result.stdout and escape.write.is_file(), result
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, result
    assert "unconfined" in warnings[0], result
    escape.write.unlink()


def test_no_bwrap_runs_unconfined_with_a_warning(escape: Escape, tmp_path: Path) -> None:
    """Where bwrap is not there (PATH without it), the run goes on unconfined and says so."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    qemu = shutil.which("qemu-system-arm")
    assert qemu is not None
    (bin_dir / "qemu-system-arm").symlink_to(qemu)
    result = run_kit("run", escape.elf, "--emulator", "qemu", env=_env(PATH=str(bin_dir)))
    assert result.returncode == 0, result
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "bwrap is not installed" in warnings[0], result


def test_the_sandbox_command_line() -> None:
    """What the sandbox shows: the system read-only, the run folder read-write, no
    network unless asked (a gdbstub's TCP port), the kit dies -> the emulator dies."""
    box = sandbox.Sandbox(sandbox.Confinement.CONFINED)
    run_dir = Path("/tmp/ethosu-kit-run-x")
    cmd = box.wrap(["/usr/bin/qemu-system-arm", "-M", "m"], workdir=run_dir, environ={})
    text = " ".join(cmd)
    assert cmd[0] == "bwrap" and cmd[-3:] == ("/usr/bin/qemu-system-arm", "-M", "m")
    for arg in ("--unshare-all", "--die-with-parent", "--new-session", "--clearenv"):
        assert arg in cmd
    assert "--share-net" not in cmd
    assert f"--bind {run_dir} {run_dir}" in text and f"--chdir {run_dir}" in text
    assert "--ro-bind /etc /etc" not in text and str(Path.home()) not in text
    net = sandbox.Sandbox(sandbox.Confinement.CONFINED, network=True)
    assert "--share-net" in net.wrap(["true"], workdir=None, environ={})
    off = sandbox.Sandbox(sandbox.Confinement.OFF, "--no-sandbox")
    assert off.wrap(["qemu"], workdir=run_dir) == ("qemu",)
    assert off.warning().startswith("warning: ") and "--no-sandbox" in off.warning()


@pytest.mark.parametrize(
    "said",
    [
        "qemu-system-arm: This board can only be used with CPU cortex-m4-arm-cpu",
        "bwrap: Creating new namespace failed: Operation not permitted",
    ],
)
def test_a_tool_refusing_is_not_the_firmwares_exit_1(said: str) -> None:
    """QEMU refusing the board's CPU, or bwrap failing to make the sandbox, exits 1
    before any firmware ran: run's REFUSED (65) naming the message, never `exit code 1
    (FAIL: the app's own check failed …)` (issue 17)."""
    from ethosu_kit.core.errors import KitError
    from ethosu_kit.firmware import run as run_module
    from ethosu_kit.firmware.qemu import RunResult
    from ethosu_kit.npu.exit_codes import RUN_TOOL

    result = RunResult(1, said + "\n", 0.1, False, ("qemu-system-arm",))
    image: Any = type("Image", (), {"board": type("B", (), {"name": "b"})()})()
    with pytest.raises(KitError) as caught:
        run_module._sandbox_failed(Path("fw.elf"), result)
        run_module._qemu_failed(Path("fw.elf"), image, result)
    assert caught.value.exit_code == RUN_TOOL["REFUSED"]
    assert said.split(": ", 1)[1][:30] in caught.value.message
    assert "FAIL" not in caught.value.message


def test_an_fvp_installed_elsewhere_is_seen_read_only(tmp_path: Path) -> None:
    """An FVP outside the system folders (`<root>/models/<platform>/FVP_…`, reached by
    a link in a bin folder): its whole install root is bound read-only and it runs by
    its real path; the folder of the link is not shown."""
    root = tmp_path / "opt" / "FVP_Corstone"
    models = root / "models" / "Linux64_GCC-9.3"
    models.mkdir(parents=True)
    (root / "plugins").mkdir()
    fvp = models / "FVP_Corstone_SSE-300_Ethos-U55"
    fvp.write_text(
        '#!/bin/sh\nls "$(dirname "$0")/../../plugins" >/dev/null && echo "fvp ran in $PWD"\n'
    )
    fvp.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / fvp.name).symlink_to(fvp)
    (bin_dir / "secret.txt").write_text("not for the firmware\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    box = sandbox.Sandbox(sandbox.Confinement.CONFINED)
    cmd = box.wrap([str(bin_dir / fvp.name)], workdir=run_dir, environ={"PATH": "/usr/bin:/bin"})
    assert f"--ro-bind {root.resolve()} {root.resolve()}" in " ".join(cmd)
    assert cmd[-1] == str(fvp.resolve()) and str(bin_dir) not in " ".join(cmd)
    if sandbox.bwrap_problem():
        pytest.skip(sandbox.bwrap_problem())
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0 and f"fvp ran in {run_dir.resolve()}" in done.stdout, done

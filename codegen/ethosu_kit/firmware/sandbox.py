"""Confine the emulator `run` starts (QEMU, an FVP) to the run's own folder.

A firmware image given to `run` is data from anywhere, and Arm semihosting lets it
open, read and write any host file the emulator can (SYS_OPEN takes any path). So the
emulator runs under bubblewrap (`bwrap`, Debian's `bubblewrap`): the system's programs
and libraries read-only, the run's folder (where `run --inputs/-o` put and fetch
kit_input_<i>.bin / kit_output_<o>.bin, firmware.host_io) read-write, the image itself
read-only, a private /tmp and /dev, and nothing else of the host: no home, no project
tree, no network (unless a caller needs a TCP port, such as a gdbstub), an empty
environment, its own PID namespace and session, and it dies with the kit.

Where bwrap is missing or cannot make namespaces (some containers), or the user opts
out (`run --no-sandbox`, ETHOSU_KIT_NO_SANDBOX=1), the emulator runs unconfined and
every run says so in one `warning:` line. docs/running.md names what `run` allows.
"""

from __future__ import annotations

import enum
import functools
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

BWRAP = "bwrap"
ENV_OPT_OUT = "ETHOSU_KIT_NO_SANDBOX"  # non-empty and not "0": run unconfined

# Read-only inside: where an emulator's program, libraries and data files are (a
# symbolic link such as merged-/usr's /lib -> usr/lib is made as the same link)
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# ... and from /etc only what the dynamic linker and the C library read at start-up:
# not the rest of /etc (host names, accounts, keys)
ETC_PATHS = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
)
# the environment the emulator keeps (everything else, tokens and paths, stays out)
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")


class Confinement(enum.Enum):
    CONFINED = "confined"
    OFF = "off"  # the user opted out (--no-sandbox, ETHOSU_KIT_NO_SANDBOX)
    UNAVAILABLE = "unavailable"  # no bwrap, or it cannot make namespaces here


@dataclass(frozen=True)
class Sandbox:
    """How one run's emulator is started: confined or not, and why not."""

    confinement: Confinement
    why_not: str = ""  # for OFF/UNAVAILABLE: the reason, in the warning line
    network: bool = False  # keep the host's network (a TCP gdbstub or serial port)
    # more host paths the emulator may read (an FVP's install folder outside /usr)
    read_only: tuple[Path, ...] = field(default=())

    @property
    def confined(self) -> bool:
        return self.confinement is Confinement.CONFINED

    def warning(self) -> str:
        """The one line an unconfined run prints (empty when confined)."""
        if self.confined:
            return ""
        return (
            f"warning: the emulator runs unconfined ({self.why_not}): the firmware's "
            "semihosting can read and write any file you can (docs/running.md)"
        )

    def wrap(
        self,
        cmd: Sequence[str],
        *,
        workdir: Path | None,
        files: Iterable[Path] = (),
        environ: Mapping[str, str] | None = None,
    ) -> tuple[str, ...]:
        """`cmd` as run in the sandbox: `workdir` read-write (and the current directory),
        `files` (the image) and the folder of an emulator installed outside the system
        folders read-only at their own paths. Unconfined: `cmd` itself."""
        if not self.confined:
            return tuple(cmd)
        found = shutil.which(cmd[0])
        root = install_root(Path(found)) if found else None
        sandbox = self if root is None else replace(self, read_only=(*self.read_only, root))
        # the program by its absolute path (inside, the current folder is `workdir`); one
        # outside the system folders by its real path, in the folder bound for it (a link
        # in ~/bin to an FVP in /opt: ~/bin is not there)
        program = cmd[0]
        if found:
            program = str(Path(found).resolve() if root else Path(found).absolute())
        return (*bwrap_prefix(sandbox, workdir, files, environ), program, *cmd[1:])


def bwrap_prefix(
    sandbox: Sandbox,
    workdir: Path | None,
    files: Iterable[Path] = (),
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """The bwrap command line up to the program it runs."""
    args = [BWRAP, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]
    if sandbox.network:
        args.append("--share-net")
    for path in SYSTEM_PATHS + ETC_PATHS:
        args += _bind_as_is(path)
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for extra in sandbox.read_only:
        args += ["--ro-bind", str(extra), str(extra)]
    for file in files:
        real = str(Path(file).resolve())
        args += ["--ro-bind", real, real]
    env = os.environ if environ is None else environ
    for name in KEPT_ENV:
        if name in env:
            args += ["--setenv", name, env[name]]
    if workdir is not None:
        real = str(workdir.resolve())
        args += ["--bind", real, real, "--chdir", real, "--setenv", "HOME", real]
    else:
        args += ["--chdir", "/tmp", "--setenv", "HOME", "/tmp"]
    args.append("--")
    return args


def _bind_as_is(path: str) -> list[str]:
    """bwrap arguments that show host `path` read-only as it is: a link as the same
    link, a folder or file bound; nothing for a path the host does not have."""
    host = Path(path)
    if host.is_symlink():
        return ["--symlink", str(host.readlink()), path]
    if host.exists():
        return ["--ro-bind", path, path]
    return []


def opted_out(environ: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(ENV_OPT_OUT, "")
    return value.strip() not in ("", "0")


@functools.cache
def bwrap_problem() -> str:
    """Why bwrap cannot confine a program on this machine, or "" when it can: it is
    tried once per process on /usr/bin/true with the namespaces a run uses."""
    if shutil.which(BWRAP) is None:
        return f"{BWRAP} is not installed: apt-get install bubblewrap"
    true = shutil.which("true") or "/usr/bin/true"
    probe = Sandbox(Confinement.CONFINED)
    try:
        done = subprocess.run(
            [*bwrap_prefix(probe, None, (), {}), true],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{BWRAP} did not start: {exc}"
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"{BWRAP} cannot make a sandbox here: {said[:160]}"
    return ""


def choose(
    *,
    no_sandbox: bool = False,
    network: bool = False,
    read_only: Sequence[Path] = (),
    environ: Mapping[str, str] | None = None,
) -> Sandbox:
    """The sandbox for one run: confined unless the user opted out or bwrap cannot."""
    if no_sandbox:
        return Sandbox(Confinement.OFF, "--no-sandbox", network)
    if opted_out(environ):
        return Sandbox(Confinement.OFF, f"{ENV_OPT_OUT} is set", network)
    problem = bwrap_problem()
    if problem:
        return Sandbox(Confinement.UNAVAILABLE, problem, network)
    return Sandbox(Confinement.CONFINED, "", network, tuple(read_only))


def install_root(executable: Path) -> Path | None:
    """The folder an emulator installed outside the system folders needs to read (its
    libraries and plug-ins beside it): an FVP's `<root>/models/<platform>/FVP_…` needs
    all of <root>; any other program its own folder. None when it is a system one."""
    real = executable.resolve()
    if any(real.is_relative_to(Path(p).resolve()) for p in SYSTEM_PATHS if Path(p).exists()):
        return None
    folder = real.parent
    if folder.parent.name == "models" and folder.parent.parent != folder.parent.parent.parent:
        return folder.parent.parent
    return folder

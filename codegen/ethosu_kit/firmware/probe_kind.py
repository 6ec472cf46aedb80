"""What `run --probe` needs to know before GDB starts: the GDB server kinds (`ProbeKind`:
each server's monitor commands for reset and semihosting, its default port), the
`--probe KIND[:HOST:PORT]` parser, the image's facts (vector table, semihosting command
line) and the load steps (the flash manifest's HEX files, else the ELF).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_ELF, open_regular
from ethosu_kit.firmware.elf import ELF_ERRORS, Vectors, read_elf
from ethosu_kit.firmware.flash import manifest_path, read_manifest
from ethosu_kit.firmware.gdb_mi import mi_quote
from ethosu_kit.firmware.image import KitImage

# Arm semihosting, as the kit's SDK calls it (sdk/src/semihosting.c)
BKPT_SEMIHOSTING = 0xBEAB  # Thumb `bkpt 0xab`
SYS_EXIT = 0x18
SYS_EXIT_EXTENDED = 0x20
ADP_STOPPED_APPLICATION_EXIT = 0x20026
# A DNS name (labels of letters, digits, '-', never leading with '-'). The host reaches
# GDB's `target extended-remote`, which takes `|command` (runs it through the shell) and
# a path (a serial device) as well as HOST:PORT: only a name or an IP address may get there.
_HOST_NAME = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?:\.(?!-)[A-Za-z0-9-]{1,63})*\.?\Z")
CMDLINE_FUNCTION = "kit_semihost_cmdline"  # sdk/src/semihosting_files.c
VECTOR_SECTIONS = (".vectors", ".isr_vector", ".vector_table")


@dataclass(frozen=True)
class ProbeServer:
    """What one kind of GDB server needs of GDB: its monitor commands and default port."""

    name: str
    default_port: int
    reset: tuple[str, ...]  # reset the core and leave it halted
    semihosting: tuple[str, ...]  # serve semihosting, file calls through GDB's File-I/O
    start: str  # how a user starts the server (for hints and docs/running.md)


class ProbeKind(Enum):
    """The GDB servers `run --probe` knows (docs/running.md's "Running on a board")."""

    PYOCD = ProbeServer(
        "pyocd",
        3333,
        reset=("monitor reset halt",),
        semihosting=("monitor arm semihosting enable",),
        start="pyocd gdbserver --target <part> --semihosting -O semihost_use_syscalls=true",
    )
    OPENOCD = ProbeServer(
        "openocd",
        3333,
        reset=("monitor reset halt",),
        # fileio: the file calls go to GDB (run's folder), not to OpenOCD's own folder
        semihosting=("monitor arm semihosting enable", "monitor arm semihosting_fileio enable"),
        start="openocd -f interface/<probe>.cfg -f target/<part>.cfg",
    )
    JLINK = ProbeServer(
        "jlink",
        2331,
        reset=("monitor reset 0", "monitor halt"),
        # IOClient 2: semihosting I/O goes to the GDB client (GDB's File-I/O)
        semihosting=("monitor semihosting enable", "monitor semihosting IOClient 2"),
        start="JLinkGDBServer -device <part> -if SWD -speed 4000 -nogui -port 2331",
    )
    QEMU = ProbeServer(
        "qemu",
        1234,
        reset=("monitor system_reset",),  # QEMU's monitor: reads SP and PC from memory
        semihosting=(),  # QEMU's -semihosting-config enable=on,target=gdb does it
        start="qemu-system-arm -M <machine> -cpu <cpu> -display none -monitor none -S "
        "-gdb tcp::1234 -semihosting-config enable=on,target=gdb "
        "-serial tcp::4444,server=on,wait=off",
    )

    @property
    def server(self) -> ProbeServer:
        value: ProbeServer = self.value
        return value


KINDS = {k.server.name: k for k in ProbeKind}


@dataclass(frozen=True)
class ProbeSpec:
    """`--probe KIND[:HOST:PORT]`; `launch`: `--probe qemu` alone, QEMU started by run."""

    kind: ProbeKind
    host: str
    port: int
    launch: bool = False

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def gdb_address(self) -> str:
        """The address GDB is given: the host resolved here, outside the sandbox GDB runs
        in, which has no /etc/hosts (a name, `localhost` included, resolves to nothing
        there: `localhost:3333: No such file or directory.`). IPv4 first; a name this
        machine cannot resolve is passed as written, for GDB's own error."""
        try:
            found = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError):
            return self.address
        v4 = [info[4][0] for info in found if info[0] == socket.AF_INET]
        if v4:
            return f"{v4[0]}:{self.port}"
        return f"[{found[0][4][0]}]:{self.port}" if found else self.address

    def __str__(self) -> str:
        return (
            f"{self.kind.server.name} (the kit's QEMU)"
            if self.launch
            else (f"{self.kind.server.name} at {self.address}")
        )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def parse_probe(text: str) -> ProbeSpec:
    """`KIND`, `KIND:PORT` or `KIND:HOST:PORT`; a ValueError saying what is wrong."""
    name, _, rest = text.partition(":")
    kind = KINDS.get(name.lower())
    if kind is None:
        raise ValueError(f"{name!r} is not a probe kind: one of {', '.join(KINDS)}")
    if not rest:
        if kind is ProbeKind.QEMU:
            return ProbeSpec(kind, "127.0.0.1", 0, launch=True)
        return ProbeSpec(kind, "localhost", kind.server.default_port)
    host, _, port_text = rest.rpartition(":")
    host = host.removeprefix("[").removesuffix("]") or "localhost"
    # 5 digits at most before int(): a 5,000-digit port is past int()'s own limit
    if not (port_text.isdigit() and len(port_text) <= 5 and 0 < int(port_text) < 65536):
        raise ValueError(f"{text[:80]!r}: the port must be a number from 1 to 65535")
    if any(c.isspace() for c in host):
        raise ValueError(f"{text!r}: the host has a space in it")
    if not (len(host) <= 253 and _HOST_NAME.fullmatch(host)) and not _is_ip(host):
        raise ValueError(f"{text!r}: the host is not a host name or an IP address")
    return ProbeSpec(kind, host, int(port_text))


# -- what to load and how to start it -------------------------------------------------


@dataclass(frozen=True)
class ImageFacts:
    """What run --probe reads of the ELF before GDB starts."""

    vectors: Vectors
    cmdline: int | None  # kit_semihost_cmdline's address (Thumb bit clear), if linked
    # True: its code is loaded where it runs (not copied there by the start-up, which
    # would copy over a software breakpoint GDB wrote before it)
    cmdline_in_place: bool = False


def image_facts(image: KitImage) -> ImageFacts:
    """The vector table (its `.vectors` section, the kit's startup.c) and the SDK's
    command-line reader of the ELF."""
    try:
        with open_regular(image.elf, MAX_ELF) as (f, _size):
            elf = read_elf(f, VECTOR_SECTIONS)
    except ELF_ERRORS as exc:
        raise KitError(f"{image.elf}: cannot read its vector table ({exc})") from None
    found = elf.symbols.get(CMDLINE_FUNCTION)
    cmdline = found[0] & ~1 if found is not None else None
    in_place = cmdline is not None and any(
        s.vaddr <= cmdline < s.vaddr + s.filesz and s.vaddr == s.paddr for s in elf.segments
    )
    for name in VECTOR_SECTIONS:
        data = elf.data.get(name, b"")
        section = next((s for s in elf.sections if s.name == name), None)
        if section is not None and len(data) >= 8:
            return ImageFacts(Vectors.decode(section.addr, data), cmdline, in_place)
    raise KitError(
        f"{image.elf}: no vector table ({' or '.join(VECTOR_SECTIONS)} section): "
        "run --probe cannot tell where the image starts"
    )


def boots_cold(image: KitImage, vectors: Vectors) -> bool:
    """True when the vector table lies in non-volatile memory: a reset starts the image
    (a cold boot), as on power-up. Else the image lives in RAM a debugger fills."""
    region = image.board.region_at(vectors.address)
    return region is not None and not region.volatile


@dataclass(frozen=True)
class LoadStep:
    what: str  # for the notice line: "fw.MRAM.hex", "the ELF's load segments"
    command: str  # the MI command
    path: Path | None = None  # the file it loads (GDB reads it: bound into its sandbox)


def load_steps(elf: Path) -> tuple[list[LoadStep], str]:
    """(the MI commands that put the image on the board, where they came from): the
    flash artefacts `build` wrote beside the ELF (firmware.flash: each non-volatile
    region's Intel HEX, loaded by GDB's `load`, which programs flash through the server)
    when their manifest is this ELF's, not older than it, and holds every stored byte;
    else the ELF's load segments."""
    manifest_file = manifest_path(elf)
    if not manifest_file.is_file():
        return [_elf_step()], "the ELF"
    manifest = read_manifest(manifest_file)
    if manifest.elf != elf.name or not manifest.files:
        return [_elf_step()], f"the ELF ({manifest_file.name} lists no flash image of it)"
    if manifest_file.stat().st_mtime < elf.stat().st_mtime:
        return [_elf_step()], f"the ELF ({manifest_file.name} is older than it: not used)"
    if manifest.left_out:  # bytes stored in RAM: no flasher writes them, GDB's load does
        return [_elf_step()], f"the ELF ({manifest_file.name} leaves out {manifest.left_out[0]})"
    steps = []
    for image in manifest.files:
        path = (elf.parent / image.hex).resolve()
        if not path.is_file():
            raise KitError(f"{manifest_file}: lists {image.hex}, which is not there ({path})")
        if '"' in str(path) or "\n" in str(path):
            raise KitError(f"{path}: GDB cannot load a file whose path has a quote in it")
        steps.append(LoadStep(path.name, mi_console(f'load "{path}"'), path))
    return steps, manifest_file.name


def _elf_step() -> LoadStep:
    return LoadStep("the ELF's load segments", "-target-download")


def mi_console(command: str) -> str:
    """A GDB console command as one MI command."""
    return f"-interpreter-exec console {mi_quote(command)}"

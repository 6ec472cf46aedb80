"""Compile drivers/ethosu_virtual into a host shared library, once per source version."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.paths import kit_root
from ethosu_kit.core.writer import file_lock

LIB_NAME = "libethosu_virtual.so"
# Written beside the native build's place when the compiler refused the native flags.
NATIVE_REFUSED = "native-refused.txt"


# The host library's compiler flags (part of the cache key, with the sources).
CFLAGS = (
    "-std=c99",
    # -O3: GCC's -O2 vectorizes only loops without an epilogue; the
    # convolution's dot products are the virtual NPU's hot loop
    "-O3",
    # inline the shared helpers (src/common) into the operations
    "-flto",
    "-fno-semantic-interposition",
    "-fPIC",
    "-shared",
    "-Wall",
    "-Wextra",
    "-Werror",
    # large enough for the weights of any single U55 operation
    "-DETHOSU_VIRTUAL_WORKSPACE_SIZE=(16u*1024u*1024u)",
    # decoded weights kept between runs of the same streams (src/common/wcache.c)
    "-DETHOSU_VIRTUAL_WEIGHT_CACHE=(256u*1024u*1024u)",
    # the test mutations (ethosu_virtual_set_mutation): this library only, never firmware
    "-DETHOSU_VIRTUAL_MUTATIONS",
)


# The library never leaves the machine that built it, so it is tuned for that CPU first
# (AVX2 / AVX-512 on x86-64 servers: the convolutions' int16 dot products in 16-32 lanes);
# a compiler or CPU that refuses the native flag gets the portable build. Same results
# either way: the arithmetic is integer, only its instruction selection changes.
NATIVE_FLAGS = ("-march=native",)


def cpu_id() -> str:
    """What -march=native tunes for, in the cache key: the architecture and, where the
    OS says, the CPU model and its feature flags (a home directory shared by machines
    of different CPUs must not hand one's native build to the other)."""
    text = ""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        cpuinfo = ""
    for line in cpuinfo.splitlines():
        key = line.split(":", 1)[0].strip()
        if key in ("model name", "flags", "Features", "CPU part"):
            text += line + "\n"
            if key in ("flags", "Features"):
                break
    return f"{platform.machine()}\n{platform.processor()}\n{text}"


def source_dir() -> Path:
    return kit_root() / "drivers" / "ethosu_virtual"


def _sources() -> list[Path]:
    root = source_dir()
    # .def: the ISA tables, included by the per-product isa.c files
    src = (p for p in root.glob("src/**/*") if p.suffix in (".c", ".h", ".def"))
    return sorted([*src, *root.glob("include/*.h")])


def source_hash(extra: tuple[str, ...] = ()) -> str:
    """The cache key: the flags (`extra`: the native ones and the CPU they target), then
    every source's path and bytes."""
    h = hashlib.sha256("\0".join((*CFLAGS, *extra)).encode())
    for path in _sources():
        h.update(path.relative_to(source_dir()).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_root() -> Path:
    env = os.environ.get("ETHOSU_KIT_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ethosu-kit"


def library_path() -> Path:
    """The shared library for the current sources, compiled if not cached yet: native
    flags for this CPU, else (the compiler refused them) the portable flags."""
    native = source_hash((*NATIVE_FLAGS, cpu_id()))
    native_lib = cache_root() / f"vnpu-{native}" / LIB_NAME
    refused = native_lib.with_name(NATIVE_REFUSED)
    if native_lib.is_file():
        return native_lib
    portable = source_hash()
    portable_lib = cache_root() / f"vnpu-{portable}" / LIB_NAME
    if refused.is_file() and portable_lib.is_file():
        return portable_lib
    cc = _compiler()
    try:
        return _build(cc, native, NATIVE_FLAGS)
    except KitError as exc:
        # remembered, so the next process does not try the native build again
        refused.parent.mkdir(parents=True, exist_ok=True)
        refused.write_text(f"{exc}\n")
        return _build(cc, portable, ())


def _compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise KitError(
            f"the virtual NPU needs a host C compiler (cc, gcc or clang) to build {source_dir()}",
            hint="install one (apt-get install gcc) or set CC",
        )
    return cc


def _build(cc: str, key: str, extra: tuple[str, ...]) -> Path:
    out_dir = cache_root() / f"vnpu-{key}"
    lib = out_dir / LIB_NAME
    with file_lock(out_dir.with_suffix(".lock")):
        if lib.is_file():
            return lib
        out_dir.mkdir(parents=True, exist_ok=True)
        root = source_dir()
        with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
            tmp_lib = Path(tmp) / LIB_NAME
            cmd = [
                cc,
                *CFLAGS,
                *extra,
                f"-I{root / 'include'}",
                f"-I{root / 'src'}",
                *(str(p) for p in sorted(root.glob("src/**/*.c"))),
                "-o",
                str(tmp_lib),
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                first = (proc.stderr.strip().splitlines() or ["no output"])[0]
                raise KitError(
                    f"building the virtual NPU failed ({cc} exit {proc.returncode}): {first}",
                    hint=f"sources in {root}",
                )
            tmp_lib.replace(lib)
    return lib

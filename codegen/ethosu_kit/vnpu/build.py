"""Compile drivers/ethosu_virtual into a host shared library, once per source version."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.paths import kit_root
from ethosu_kit.core.writer import file_lock

LIB_NAME = "libethosu_virtual.so"


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


def source_dir() -> Path:
    return kit_root() / "drivers" / "ethosu_virtual"


def _sources() -> list[Path]:
    root = source_dir()
    return sorted([*root.glob("src/**/*.[ch]"), *root.glob("include/*.h")])


def source_hash() -> str:
    h = hashlib.sha256("\0".join(CFLAGS).encode())
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
    """The shared library for the current sources, compiled if not cached yet."""
    out_dir = cache_root() / f"vnpu-{source_hash()}"
    lib = out_dir / LIB_NAME
    if lib.is_file():
        return lib
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise KitError(
            f"the virtual NPU needs a host C compiler (cc, gcc or clang) to build {source_dir()}",
            hint="install one (apt-get install gcc) or set CC",
        )
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

"""What made a measured image: a fingerprint of its firmware, part by part.

`gen --stack auto --heap auto` reuses `measured_usage.json` (ethosu_kit.firmware.measure) only for
the firmware it measured: the same app on the same pte bytes is not enough, since a
change of the kit's C sources, the board's own code, the compiler or the user's
ExecuTorch checkout changes the frames, and a reused mark of the old firmware can be
too small for the new one (the image then stops with `stack overflow`, exit code 16).

Each part is a digest of file contents (or of a compiler's version line), so a part
that changed can be named in the plan's "why" ("measured again: the kit's SDK sources
changed"). Contents, not timestamps: a fresh checkout of the same sources matches.
Only what the measured build reads is hashed, and only for the app that reads it: the
ExecuTorch trees for the executor_runner (~5 MB, 0.2-0.4 s), nothing of the checkouts for
the self-test, so the cost stays well under a second (docs/memory.md).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

from ethosu_kit import __version__
from ethosu_kit.board.model import Board
from ethosu_kit.board.toolchain import Toolchain
from ethosu_kit.core import paths as kit_paths
from ethosu_kit.firmware.project import ProjectDir
from ethosu_kit.plan.apps import App

# Part name -> what it is, as the "why" names a changed one. The order is the order
# the parts are compared in, so the first change named is the most likely cause.
PARTS: dict[str, str] = {
    "sdk": "the kit's SDK sources (sdk/)",
    "apps": "the kit's apps (apps/)",
    "drivers": "the kit's drivers (drivers/: the virtual NPU, UART, timer)",
    "cmake": "the kit's CMake functions (cmake/)",
    "codegen": "the kit's code generator (its Python, code and linker templates)",
    "kit_version": "the kit's version",
    "board": "the board (its board.toml and own code)",
    "compiler": "the compiler",
    "executorch": "the ExecuTorch checkout (runtime/, kernels/, schema/, backends/arm/runtime/)",
}
# ExecuTorch's trees the runner's frames come from: the runtime, the kernels it
# registers, the program schema, the Ethos-U delegate. Its build scripts and the
# third-party code (flatbuffers headers) change only with a new release, which changes
# these too.
EXECUTORCH_TREES = ("runtime", "kernels", "schema", "backends/arm/runtime")
# The code generator's files: its Python and its templates.
CODEGEN_SUFFIXES = (".py", ".j2")
# What a compile reads from an include folder of the board's port.
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".inc")
_SKIP_DIRS = ("__pycache__",)


def _walk_files(root: Path, suffixes: tuple[str, ...] | None) -> list[Path]:
    """Regular files under `root` (a file: itself), sorted; hidden folders (.git) skipped,
    symlinked folders not followed (no loops), devices and FIFOs never read."""
    if root.is_file():
        return [root]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in filenames:
            if suffixes is None or name.endswith(suffixes):
                found.append(Path(dirpath, name))
    return sorted(found)


def _add_files(h: hashlib._Hash, base: Path, paths: list[Path]) -> None:
    for path in paths:
        try:
            if not stat.S_ISREG(path.stat().st_mode):
                continue
            data = path.read_bytes()
        except OSError:
            continue  # gone or unreadable: the build would fail on it, not hash it
        try:
            name = str(path.relative_to(base))
        except ValueError:
            name = str(path)
        # the name and the length first: moving bytes between files changes the digest
        h.update(f"{name}\0{len(data)}\0".encode(errors="surrogateescape"))
        h.update(data)


def tree_digest(base: Path, roots: list[Path], suffixes: tuple[str, ...] | None = None) -> str:
    """sha256 over the files under each of `roots` (names relative to `base`); a missing
    root counts as empty, so its appearing changes the digest."""
    h = hashlib.sha256()
    for root in roots:
        h.update(f"[{root.relative_to(base) if root.is_relative_to(base) else root}]\0".encode())
        if root.exists():
            _add_files(h, base, _walk_files(root, suffixes))
    return h.hexdigest()


def _digest_of(*digests: str) -> str:
    return hashlib.sha256("\0".join(digests).encode()).hexdigest()


def board_digest(board: Board) -> str:
    """Its board.toml and the port's sources, CMake file and headers ([port] of board.toml)."""
    port = Path(board.port.dir)
    files = [Path(board.source)]
    files += [port / p for p in board.port.sources]
    if board.port.cmake:
        files.append(port / board.port.cmake)
    h = hashlib.sha256()
    _add_files(h, port, files)
    for inc in board.port.include_dirs:
        folder = port / inc
        if folder.is_dir():
            _add_files(h, port, _walk_files(folder, HEADER_SUFFIXES))
    return h.hexdigest()


def _version_line(compiler: str | None) -> str:
    if compiler is None:
        return "not found"
    try:
        proc = subprocess.run(
            [compiler, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{compiler}: {exc}"
    lines = proc.stdout.strip().splitlines()
    return lines[0] if lines else f"{compiler}: no version (exit {proc.returncode})"


def compiler_identity(toolchain: str) -> str:
    """The version line of the compiler the toolchain file picks (cmake/toolchain/), and
    for clang that of the GNU toolchain whose newlib and libgcc it links."""
    gcc = os.environ.get("ARM_GCC_PREFIX", "arm-none-eabi-") + "gcc"
    if toolchain == Toolchain.GCC:
        return _version_line(shutil.which(gcc))
    if toolchain == Toolchain.CLANG:
        clang = shutil.which(Toolchain.CLANG.compiler) or shutil.which("clang")
        return f"{_version_line(clang)}; {_version_line(shutil.which('arm-none-eabi-gcc'))}"
    return _version_line(shutil.which(Toolchain.ARMCLANG.compiler))


def cached_path(project: Path, toolchain: str, name: str) -> str:
    """A checkout's path as the project's build would take it: its CMake cache's, which
    wins over the environment (cmake/executorch.cmake), else the environment's."""
    cache = ProjectDir(project).cmake_cache(toolchain)
    try:
        with cache.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition("=")
                if key.split(":", 1)[0] == name and value.strip():
                    return value.strip()
    except OSError:
        pass
    return os.environ.get(name, "")


def checkout_digest(root: str, trees: tuple[str, ...]) -> str:
    if not root:
        return "unset"
    base = Path(root).resolve()
    return tree_digest(base, [base / t for t in trees])


def firmware_fingerprint(board: Board, app: str, toolchain: str, project: Path) -> dict[str, str]:
    """Part name (PARTS) -> digest of everything the measuring build of `app` reads
    besides the generated project (whose pte bytes the record names already)."""
    # through the module, at call time: a test (or a tool) may point the kit root elsewhere
    root = kit_paths.kit_root()
    package = kit_paths.package_dir()
    parts = {
        "sdk": tree_digest(root, [root / "sdk"]),
        "apps": tree_digest(root, [root / "apps"]),
        "drivers": tree_digest(root, [root / "drivers"]),
        "cmake": tree_digest(root, [root / "cmake"]),
        # what renders the generated files (their CPU flags, sections, start-up tables)
        "codegen": _digest_of(
            # each beside its own base: in a wheel they are not in one folder
            tree_digest(root, [kit_paths.linker_templates_dir()]),
            tree_digest(package.parent, [package], CODEGEN_SUFFIXES),
        ),
        "kit_version": __version__,
        "board": board_digest(board),
        "compiler": compiler_identity(toolchain),
    }
    if app == App.EXECUTOR_RUNNER:
        et = cached_path(project, toolchain, "EXECUTORCH_ROOT")
        parts["executorch"] = checkout_digest(et, EXECUTORCH_TREES)
    return parts


def changed(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """The parts (PARTS' descriptions) that differ between two fingerprints, in PARTS'
    order; a part only one of them has counts as changed. A name this kit does not know
    (a record of another kit, or edited) is not repeated: it is text from the file, and
    the why goes into generated C comments."""
    parts = [PARTS[n] for n in PARTS if old.get(n) != new.get(n)]
    if any(n not in PARTS for n in old.keys() | new.keys()):
        parts.append("parts this kit does not fingerprint")
    return parts

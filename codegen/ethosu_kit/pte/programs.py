"""Several programs in one image (issue 18): which .pte files, by which name, and which
of them may run at the same time.

A program is a .pte and the name the firmware calls it by (a C identifier: it names the
program's buffers, `kit_<name>_network`, and its row in `KIT_PROGRAMS(X)`). Programs
come from repeated `--pte [NAME=]path` options or from a manifest (`--programs
programs.toml`, docs/multi-model.md). Every program must be compiled for the same NPU
configuration (accelerator, MACs, memory mode): the board's one NPU runs them all with
one set of region registers, so a mismatch is refused naming both files.

`concurrent` groups say which programs may be executing at the same time (two threads,
an interrupt): the planner shares what lives only during one execute between programs
that never do, and keeps it apart for those that may. Pure apart from reading the
manifest and the .pte files it names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_PLAN, TomlProblem, parse_toml, read_text
from ethosu_kit.pte.model import EthosUCompileSpec, ModelInfo

# A program's name is a C identifier of its own (lower case, as the buffers' names are),
# short enough for the linker's section names and the UART lines.
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,31}\Z")
# The names the kit's own buffers take: a program called so would make `kit_<name>_...`
# read as one of them.
_RESERVED = frozenset({"kit", "lane", "stack", "heap", "code", "data", "selftest"})
# Programs in one image: each has its own rows, buffers and link sections, and each is read
# and planned; a few are a product, thousands only an afternoon of planning (a manifest
# of 5,000 programs ran for minutes). Checked before any .pte is read.
MAX_PROGRAMS = 64
# the file is read within the memory plan's limit; its errors name it a manifest
MAX_PROGRAMS_FILE = replace(MAX_PLAN, what="a programs manifest")
MANIFEST_HINT = (
    'a manifest is [[program]] tables with name = "kws" and pte = "kws.pte", and an optional '
    'top-level concurrent = [["kws", "vww"]] (docs/multi-model.md)'
)


@dataclass(frozen=True)
class ProgramSource:
    """A program as the user names it, before its .pte is read."""

    name: str
    pte: Path


@dataclass(frozen=True)
class Program:
    """A program of the image: its name in the firmware and what its .pte holds."""

    name: str
    model: ModelInfo  # its path: model.path


@dataclass(frozen=True)
class ProgramSet:
    """The programs of one image and which of them may run at the same time."""

    programs: tuple[Program, ...]
    # each group: programs that may be executing at the same time (two threads, an ISR)
    concurrent: tuple[tuple[str, ...], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.programs)

    def concurrent_pairs(self) -> frozenset[frozenset[str]]:
        """Every pair of programs that may run at the same time."""
        return frozenset(
            frozenset((a, b)) for group in self.concurrent for a in group for b in group if a != b
        )

    def lanes(self) -> tuple[tuple[str, ...], ...]:
        """The programs split so that no two in one lane run at the same time, in as few
        lanes as a greedy pass finds (the order they were given in): each lane shares
        one set of per-execute buffers. No concurrency declared: one lane."""
        pairs = self.concurrent_pairs()
        lanes: list[list[str]] = []
        for name in self.names:
            for lane in lanes:
                if all(frozenset((name, other)) not in pairs for other in lane):
                    lane.append(name)
                    break
            else:
                lanes.append([name])
        return tuple(tuple(lane) for lane in lanes)

    def program(self, name: str) -> Program:
        for p in self.programs:
            if p.name == name:
                return p
        raise KitError(
            f"no program named {name!r} in this image",
            hint=f"its programs are {', '.join(self.names)}",
        )


def check_name(name: str, where: str) -> str:
    """`name` if it can name a program in C; one error line otherwise."""
    if not _NAME.match(name) or name in _RESERVED:
        raise KitError(
            f"{where}: program name {name!r} is not a lower-case C identifier of up to 32 "
            "characters"
            + (f" ({name!r} names the kit's own buffers)" if name in _RESERVED else ""),
            hint="name it like kws or person_detect: a-z, 0-9 and _, not starting with a digit",
        )
    return name


def name_from_path(path: Path) -> str:
    """The default name of a program: its file's stem as a C identifier (`kws-v2.pte` ->
    `kws_v2`)."""
    stem = re.sub(r"[^a-z0-9_]", "_", path.stem.lower()) or "program"
    return f"p_{stem}" if stem[0].isdigit() else stem


def names_a_program(text: str) -> bool:
    """Is `--pte text` of the form NAME=path (and not a file whose name holds a `=`)?"""
    name, sep, path = text.partition("=")
    if not sep or Path(text).is_file():
        return False
    # `KWS=kws.pte` or `person-detect=pd.pte` names a program too (a badly named one,
    # refused by check_name): read as a path it would only say "no such file".
    return bool(_NAME.match(name)) or Path(path).is_file()


def parse_pte_arg(text: str) -> ProgramSource:
    """`--pte [NAME=]path`: the name given, or the file's stem."""
    if names_a_program(text):
        name, _, path = text.partition("=")
        return ProgramSource(check_name(name, f"--pte {text}"), Path(path))
    p = Path(text)
    return ProgramSource(name_from_path(p), p)


def unique(sources: Sequence[ProgramSource], where: str) -> None:
    """Two programs with one name would define one C symbol twice: refused. So are more
    than MAX_PROGRAMS."""
    if len(sources) > MAX_PROGRAMS:
        raise KitError(
            f"{where}: {len(sources)} programs; one image takes at most {MAX_PROGRAMS}",
            hint="split them over several images",
        )
    seen: dict[str, Path] = {}
    for s in sources:
        if s.name in seen:
            raise KitError(
                f"{where}: two programs named {s.name!r} ({seen[s.name]} and {s.pte})",
                hint="name them apart: --pte kws=a.pte --pte vww=b.pte, or name = in the manifest",
            )
        seen[s.name] = s.pte


def read_manifest(path: Path) -> tuple[tuple[ProgramSource, ...], tuple[tuple[str, ...], ...]]:
    """The programs of a manifest (pte paths relative to the manifest's folder) and its
    concurrent groups; one error line naming the file for anything else."""
    text = read_text(path, MAX_PROGRAMS_FILE)
    try:
        data = parse_toml(text)
    except TomlProblem as exc:
        raise KitError(f"{path}: {exc}", hint=MANIFEST_HINT) from None
    unknown = sorted(set(data) - {"program", "concurrent"})
    if unknown:
        raise KitError(f"{path}: unknown key {unknown[0]!r}", hint=MANIFEST_HINT)
    tables = data.get("program")
    if not isinstance(tables, list) or not tables:
        raise KitError(f"{path}: no [[program]] table", hint=MANIFEST_HINT)
    sources = []
    for i, table in enumerate(tables):
        where = f"{path}: program {i}"
        if not isinstance(table, dict) or not isinstance(table.get("pte"), str):
            raise KitError(f'{where}: needs pte = "file.pte"', hint=MANIFEST_HINT)
        extra = sorted(set(table) - {"name", "pte"})
        if extra:
            raise KitError(f"{where}: unknown key {extra[0]!r}", hint=MANIFEST_HINT)
        pte = path.parent / table["pte"]
        name = table.get("name", name_from_path(pte))
        if not isinstance(name, str):
            raise KitError(f"{where}: name must be a string", hint=MANIFEST_HINT)
        sources.append(ProgramSource(check_name(name, where), pte))
    unique(sources, str(path))
    groups = data.get("concurrent", [])
    names = {s.name for s in sources}
    if not isinstance(groups, list) or not all(
        isinstance(g, list) and all(isinstance(n, str) for n in g) for g in groups
    ):
        raise KitError(f"{path}: concurrent must be a list of lists of names", hint=MANIFEST_HINT)
    for g in groups:
        for n in g:
            if n not in names:
                raise KitError(
                    f"{path}: concurrent names {n!r}, which is no program of the manifest",
                    hint=f"its programs are {', '.join(sorted(names))}",
                )
    return tuple(sources), tuple(tuple(g) for g in groups)


def _config(spec: EthosUCompileSpec) -> tuple[str, str]:
    return str(spec.accelerator), spec.memory_mode.value


def check_one_npu(programs: Sequence[Program]) -> None:
    """Every program must be for the board's one NPU configuration: the accelerator (kind
    and MACs) and the memory mode of their compile specs agree; refused naming both files."""
    first: Program | None = None
    for p in programs:
        spec = p.model.compile_spec
        if spec is None:
            continue  # a CPU-only program runs with any NPU configuration
        if first is None:
            first = p
            continue
        want = first.model.compile_spec
        assert want is not None
        if _config(spec) != _config(want):
            raise KitError(
                f"{p.model.path} is compiled for {spec.accelerator} {spec.memory_mode_name}, "
                f"{first.model.path} for {want.accelerator} {want.memory_mode_name}: one image "
                "has one NPU configuration",
                hint="lower every program for the same accelerator, MACs and memory mode",
            )

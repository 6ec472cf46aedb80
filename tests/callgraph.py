"""The deepest static call chain from a function, from GCC's `-fcallgraph-info=su`.

GCC >= 10 writes, per translation unit, a VCG file (`.ci`) with a node per function
(defined ones with their frame: `N bytes (static)`) and an edge per call site. A call
to a function of another file names it bare; a `static` or weak function is named
`<file>:<name>`. Weak ones are what the linker may replace (the Ethos-U driver's cache,
mutex and semaphore hooks, which the kit defines), so a call of either form counts
the deepest of every function of that name: an upper bound either way.

For the tests that check a documented stack figure against the build it is about
(tests/test_driver_stack_path.py); the kit itself sizes nothing from this.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

NODE = re.compile(r'^node: \{ title: "([^"]*)" label: "([^"]*)"')
EDGE = re.compile(r'^edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"')
FRAME = re.compile(r"(\d+) bytes \((static|dynamic[^)]*)\)$")
INDIRECT = "__indirect_call"


def compile_with_callgraph(compile_commands: Path, out: Path) -> list[Path]:
    """Each C file of a configured CMake build (CMAKE_EXPORT_COMPILE_COMMANDS) compiled
    again, with its own flags, into `out` with the call graph and frame sizes."""
    out.mkdir(parents=True, exist_ok=True)
    entries = json.loads(compile_commands.read_text())
    for i, entry in enumerate(e for e in entries if e["file"].endswith(".c")):
        args = shlex.split(entry["command"])
        args[args.index("-o") + 1] = str(out / f"{i}.o")
        args += ["-fcallgraph-info=su", "-fstack-usage"]
        done = subprocess.run(
            args, cwd=entry["directory"], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"{entry['file']}: {done.stderr}"
    return sorted(out.glob("*.ci"))


@dataclass
class Chain:
    bytes: int
    functions: list[str]  # "name frame", outermost first
    unknown: list[str] = field(default_factory=list)  # called, no frame known (libraries)


class CallGraph:
    def __init__(self, ci_files: list[Path]) -> None:
        self.frames: dict[str, int] = {}
        self.calls: dict[str, list[str]] = {}
        for ci in ci_files:
            for line in ci.read_text().splitlines():
                if m := NODE.match(line):
                    title, label = m.groups()
                    frame = FRAME.search(label.split("\\n")[-1])
                    if frame:
                        if frame.group(2) != "static":  # alloca or VLA: no bound
                            raise ValueError(f"{title}: frame {frame.group(0)}")
                        self.frames[title] = int(frame.group(1))
                elif m := EDGE.match(line):
                    self.calls.setdefault(m.group(1), []).append(m.group(2))

    def _definitions(self, name: str) -> list[str]:
        """Every function a call of `name` may reach: all those of its bare name (the
        global one, a weak one the linker keeps when there is none, a static one of
        the same name elsewhere: counting them all is an upper bound)."""
        return self._by_name().get(name.rsplit(":", 1)[-1], [])

    @cache  # noqa: B019 (one graph per test, read once)
    def _by_name(self) -> dict[str, list[str]]:
        names: dict[str, list[str]] = {}
        for title in self.frames:
            names.setdefault(title.rsplit(":", 1)[-1], []).append(title)
        return names

    def deepest(self, root: str, unknown_leaf: int) -> Chain:
        """The deepest chain from `root`; a callee with no frame known (a library's)
        counts `unknown_leaf` bytes. A call through a pointer or a recursion on the
        way has no bound: ValueError."""

        @cache
        def walk(name: str, path: tuple[str, ...]) -> Chain:
            if name == INDIRECT:
                raise ValueError(f"a call through a pointer below {path[-1]}")
            found = self._definitions(name)
            if not found:
                return Chain(unknown_leaf, [f"{name} ?"], [name])
            best = Chain(-1, [])
            for f in found:
                if f in path:
                    raise ValueError(f"recursion: {' -> '.join((*path, f))}")
                below = [walk(c, (*path, f)) for c in self.calls.get(f, [])]
                deepest = max(below, key=lambda c: c.bytes, default=Chain(0, []))
                bare = f.rsplit(":", 1)[-1]
                chain = Chain(
                    self.frames[f] + deepest.bytes,
                    [f"{bare} {self.frames[f]}", *deepest.functions],
                    deepest.unknown,
                )
                if chain.bytes > best.bytes:
                    best = chain
            return best

        return walk(root, ())

    def find(self, name: str) -> str:
        """The title of the function `name` (a static one's is `<file>:<name>`)."""
        titles = [t for t in self.frames if t.rsplit(":", 1)[-1] == name]
        if len(titles) != 1:
            raise KeyError(f"{name}: {len(titles)} definitions")
        return titles[0]

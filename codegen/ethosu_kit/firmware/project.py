"""A generated project folder, typed: every file gen writes there and build, run,
check-elf, --stack auto and the regenerating stages read back, as properties.

The names are core.names' (render writes by the same names); this is the one place a
project's paths are put together. Stages below firmware (selftest.make, inputs.compiled)
take the files, not the folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ethosu_kit.core import names
from ethosu_kit.plan.types import MemoryPlan


class _At:
    """A file of the project as a read-only attribute: `root` joined with fixed parts."""

    def __init__(self, *parts: str) -> None:
        self.parts = parts

    def __get__(self, project: ProjectDir, owner: type | None = None) -> Path:
        return project.root.joinpath(*self.parts)


@dataclass(frozen=True)
class ProjectDir:
    root: Path

    plan_json = _At(names.PLAN_JSON)
    report_txt = _At(names.REPORT_TXT)
    report_json = _At(names.REPORT_JSON)
    model_info = _At(names.MODEL_INFO_JSON)
    measured_usage = _At(names.MEASURED_USAGE)
    generated = _At(names.GENERATED)
    pte = _At(names.generated(names.PTE_NAME))  # the copy of the model the project embeds
    selftest_vectors = _At(names.generated(names.SELFTEST_VECTORS))
    selftest_header = _At(names.generated(names.SELFTEST_HEADER))

    def input_data(self, index: int) -> Path:
        """The raw bytes of compiled-in input `index` (gen --inputs)."""
        return self.root / names.generated(names.input_data_file(index))

    def build_dir(self, toolchain: str) -> Path:
        return self.root / names.BUILD / toolchain

    def elf(self, toolchain: str, app: str) -> Path:
        return self.build_dir(toolchain) / f"{app}.elf"

    def cmake_cache(self, toolchain: str) -> Path:
        return self.build_dir(toolchain) / "CMakeCache.txt"

    def has_plan(self) -> bool:
        return self.plan_json.is_file()

    def read_plan(self) -> MemoryPlan:
        """memory_plan.json, typed; a one-line KitError naming the file (and the key)."""
        return MemoryPlan.from_json(self.plan_json)

    def plan_if_any(self) -> MemoryPlan | None:
        """The plan, or None for a folder that is no generated project (configure says
        what is wrong with that)."""
        return self.read_plan() if self.has_plan() else None

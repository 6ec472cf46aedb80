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


@dataclass(frozen=True)
class ProjectDir:
    root: Path

    @property
    def plan_json(self) -> Path:
        return self.root / names.PLAN_JSON

    @property
    def report_txt(self) -> Path:
        return self.root / names.REPORT_TXT

    @property
    def report_json(self) -> Path:
        return self.root / names.REPORT_JSON

    @property
    def model_info(self) -> Path:
        return self.root / names.MODEL_INFO_JSON

    @property
    def measured_usage(self) -> Path:
        return self.root / names.MEASURED_USAGE

    @property
    def generated(self) -> Path:
        return self.root / names.GENERATED

    @property
    def pte(self) -> Path:
        """The copy of the model the project embeds (generated/model.pte)."""
        return self.root / names.generated(names.PTE_NAME)

    @property
    def selftest_vectors(self) -> Path:
        return self.root / names.generated(names.SELFTEST_VECTORS)

    @property
    def selftest_header(self) -> Path:
        return self.root / names.generated(names.SELFTEST_HEADER)

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

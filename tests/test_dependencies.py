"""Every third-party module the kit imports is a declared dependency of the package.

A `pip install` of the kit alone (no torch, the way a user without the lowering stack
installs it) must give every command what it imports: numpy was used by `simulate` and
not declared, so `ethosu-kit simulate` ended in ModuleNotFoundError. Modules of the
optional extras (lowering: torch, executorch, torchao; pack: cmsis_pack_manager, cmsis_svd,
lxml; board: serial, from pyserial) are imported only by the commands that need them, which
say so when they are missing.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "codegen" / "ethosu_kit"
# import name -> distribution name, where they differ
DISTRIBUTIONS = {"elftools": "pyelftools", "jinja2": "jinja2"}
OPTIONAL = {
    "torch",
    "executorch",
    "torchao",
    "cmsis_pack_manager",
    "cmsis_svd",
    "lxml",
    "ethosu",
    "serial",
}


def _imports() -> dict[str, str]:
    """Top-level module -> a file importing it, for every absolute import in the package."""
    found: dict[str, str] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(REPO)))
    return found


def test_every_imported_module_is_declared() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    missing = {
        module: where
        for module, where in _imports().items()
        if module not in sys.stdlib_module_names
        and module not in ("ethosu_kit", "__future__")
        and module not in OPTIONAL
        and DISTRIBUTIONS.get(module, module).lower() not in declared
    }
    assert not missing, f"imported but not in pyproject.toml [project] dependencies: {missing}"

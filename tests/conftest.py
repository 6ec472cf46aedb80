"""Session fixtures: real .pte files lowered from the models in tests/models.py.

Each fixture `pte_<name>` (see models.MODELS) is a pathlib.Path to a .pte lowered
once and cached on disk, so a second session pays nothing:

- cache folder: $ETHOSU_KIT_TEST_CACHE/ptes, else ~/.cache/ethosu-kit/test-models/ptes
  (outside the repository, so a fresh clone on the same machine reuses it);
- cache key: sha256 of the model builder's source, the lowering helper's and example
  model's source, the target, the delegate/quantize flags and the torch and
  executorch versions, so a changed model or a new executorch never reuses a stale file;
- written to a temporary file and renamed, under a per-key lock, so a killed run
  leaves no half file and parallel sessions do not lower the same model twice.

Tests using these fixtures get the `lowering` marker automatically
(`pytest -m "not lowering"` runs what needs no torch). Without torch/executorch the
fixtures skip with the import error as the reason.

Where a lowered model is not the point (plan, layout, render, report, the pte reader),
tests take `data_pte_<name>` instead: the same program checked in under tests/data/pte/
(a few KB each, tests/data/pte/README.md), which needs neither torch nor lowering.

ETHOSU_KIT_TEST_NO_TORCH=1 makes torch, executorch and torchao unimportable for the
session (as on a machine without the `lower` extra): what then passes with
`-m "not lowering"` is what runs without them.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.metadata
import inspect
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import ethosu_kit.aot.examples
import ethosu_kit.aot.lowering
from ethosu_kit.core.writer import file_lock, write_file_atomic
from models import BENCH_MODELS, MODELS, TestModel, lowered_cache_root, lowering_source

REPO = Path(__file__).resolve().parents[1]
DATA_PTE = Path(__file__).resolve().parent / "data" / "pte"
_LOWERING_STACK = ("torch", "executorch", "torchao")


class _NoLoweringStack(importlib.abc.MetaPathFinder):
    """Refuses the lowering stack's imports, as if it were not installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.split(".", maxsplit=1)[0] in _LOWERING_STACK:
            raise ModuleNotFoundError(f"No module named {name!r} (ETHOSU_KIT_TEST_NO_TORCH)")


NO_TORCH = os.environ.get("ETHOSU_KIT_TEST_NO_TORCH") == "1"
if NO_TORCH:
    sys.meta_path.insert(0, _NoLoweringStack())
_KEY_FORMAT = "1"  # bump when the cache layout or keying changes
_lowering_seconds: dict[str, float] = {}


def cache_dir() -> Path:
    return lowered_cache_root() / "ptes"


def _versions() -> tuple[str, str]:
    """torch and executorch versions, read from package metadata (no import)."""
    if NO_TORCH:
        pytest.skip("lowering test models needs torch and executorch (ETHOSU_KIT_TEST_NO_TORCH)")
    try:
        return importlib.metadata.version("torch"), importlib.metadata.version("executorch")
    except importlib.metadata.PackageNotFoundError as exc:
        pytest.skip(f"lowering test models needs torch and executorch: {exc.name} not installed")


def cache_key(model: TestModel) -> str:
    torch_version, et_version = _versions()
    h = hashlib.sha256()
    for part in (
        _KEY_FORMAT,
        inspect.getsource(model.build),
        lowering_source(ethosu_kit.aot.lowering),
        lowering_source(ethosu_kit.aot.examples),  # small_cnn is the kit's example model
        repr(model.target),
        f"delegate={model.delegate} quantize={model.quantize}",
        torch_version,
        et_version,
    ):
        # a memory address (a default repr) would change the key every session
        assert " at 0x" not in part, f"{model}: a cache key part holds an address: {part}"
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def cached_pte(file_name: str, lower: Callable[[], bytes]) -> Path:
    """cache_dir() / file_name, made by `lower` the first time (the name holds the key)."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name
    if path.is_file():
        return path
    with file_lock(folder / f"{path.name}.lock"):
        if path.is_file():  # another session lowered it while we waited
            return path
        try:
            import executorch.exir  # noqa: F401
            import torch  # noqa: F401
        except ImportError as exc:
            pytest.skip(f"lowering test models needs torch and executorch: {exc}")
        write_file_atomic(path, lower())
    return path


def lowered_pte(name: str) -> Path:
    """The cached .pte of MODELS[name], lowering it first if needed."""
    model = MODELS[name] if name in MODELS else BENCH_MODELS[name]

    def lower() -> bytes:
        start = time.perf_counter()
        module, inputs, calibration = model.build()
        data = ethosu_kit.aot.lowering.lower_to_pte(
            module,
            inputs,
            model.target,
            delegate=model.delegate,
            quantize=model.quantize,
            calibration=calibration,
        )
        _lowering_seconds[name] = time.perf_counter() - start
        return data

    return cached_pte(f"{name}-{cache_key(model)}.pte", lower)


def _make_fixture(name: str) -> Callable[[], Path]:
    @pytest.fixture(scope="session", name=f"pte_{name}")
    def fixture() -> Path:
        return lowered_pte(name)

    fixture.__doc__ = f"Path to the lowered .pte of tests/models.py MODELS[{name!r}]."
    return fixture


for _name in [*MODELS, *BENCH_MODELS]:
    globals()[f"_fixture_pte_{_name}"] = _make_fixture(_name)


@pytest.fixture(scope="module")
def root(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary folder the tests of one module share (for what they build once),
    named after the module."""
    return tmp_path_factory.mktemp(request.module.__name__.removeprefix("test_"))


@pytest.fixture(scope="session", params=sorted(MODELS))
def any_pte(request: pytest.FixtureRequest) -> Path:
    """Each test model's .pte in turn (parametrized over every fixture model)."""
    name: str = request.param
    return lowered_pte(name)


def _make_data_fixture(path: Path) -> Callable[[], Path]:
    @pytest.fixture(scope="session", name=f"data_pte_{path.stem}")
    def fixture() -> Path:
        return path

    fixture.__doc__ = f"{path.name}: MODELS[{path.stem!r}] checked in (no torch, no lowering)."
    return fixture


for _path in sorted(DATA_PTE.glob("*.pte")):
    globals()[f"_fixture_data_pte_{_path.stem}"] = _make_data_fixture(_path)


LOWERING_FIXTURES = frozenset({f"pte_{n}" for n in [*MODELS, *BENCH_MODELS]} | {"any_pte"})


def _lowering_params(item: pytest.Item) -> set[str]:
    """Lowering fixtures a test takes by name through a parameter (request.getfixturevalue)."""
    callspec = getattr(item, "callspec", None)
    values = callspec.params.values() if callspec is not None else ()
    return {v for v in values if isinstance(v, str) and v in LOWERING_FIXTURES}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if LOWERING_FIXTURES.intersection(getattr(item, "fixturenames", ())) or _lowering_params(
            item
        ):
            item.add_marker(pytest.mark.lowering)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from hostile import EXAMPLES

    if EXAMPLES:
        terminalreporter.write_line(
            "hostile property tests ran "
            + ", ".join(f"{n} {kind} example(s)" for kind, n in sorted(EXAMPLES.items()))
        )
    if _lowering_seconds:
        total = sum(_lowering_seconds.values())
        parts = ", ".join(f"{n} {s:.1f}s" for n, s in _lowering_seconds.items())
        terminalreporter.write_line(
            f"lowered {len(_lowering_seconds)} test models in {total:.1f}s ({parts})"
        )

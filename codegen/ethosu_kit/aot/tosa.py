"""A user's PyTorch module lowered once to the TOSA graph(s) Vela compiles, for
`ethosu-kit advise` (which then compiles them for every candidate itself).

`load_module("pkg.mod:Name")` or `load_module("path/to/file.py:Name")`: `Name` is an
nn.Module class (built with no arguments), a module instance, or a function returning
one or `(module, example_inputs)`. Example inputs come from `--example` shapes, else
from that function, else from the file's `example_inputs` (a tuple or a function).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ethosu_kit.aot.lowering import Target, lower_to_pte
from ethosu_kit.core.errors import KitError


@dataclass(frozen=True)
class Lowered:
    """ExecuTorch's intermediate-artifacts folder (the TOSA graph of each delegate
    partition: pte.vela_compile.tosa_files lists them) and the .pte made with them."""

    dump: Path
    pte: Path


def _import(spec: str) -> tuple[Any, str]:
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise KitError(
            f"--module {spec!r}: expected pkg.mod:Name or path/to/file.py:Name",
            hint="Name: an nn.Module class, or a function returning (module, example inputs)",
        )
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_file():
                raise KitError(f"--module {spec!r}: no file {path}")
            mod_spec = importlib.util.spec_from_file_location(f"_advise_{path.stem}", path)
            if mod_spec is None or mod_spec.loader is None:
                raise KitError(f"--module {spec!r}: cannot load {path}")
            module = importlib.util.module_from_spec(mod_spec)
            sys.modules[mod_spec.name] = module
            mod_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except KitError:
        raise
    except Exception as exc:  # the user's code failed to import: their problem, one line
        raise KitError(
            f"--module {spec!r}: importing {where} failed: {type(exc).__name__}: "
            + (str(exc).splitlines() or [""])[0]
        ) from None
    if not hasattr(module, name):
        raise KitError(f"--module {spec!r}: {where} has no {name}")
    return module, name


def load_module(
    spec: str, example_shapes: tuple[tuple[int, ...], ...] = ()
) -> tuple[Any, tuple[Any, ...]]:
    """The nn.Module `spec` names and its example inputs (see the module docstring)."""
    import torch  # noqa: PLC0415 - optional, slow (lower extra)

    module, name = _import(spec)
    obj = getattr(module, name)
    inputs: tuple[Any, ...] | None = None
    try:
        if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
            model = obj()
        elif isinstance(obj, torch.nn.Module):
            model = obj
        elif callable(obj):
            made = obj()
            if isinstance(made, tuple) and made and isinstance(made[0], torch.nn.Module):
                model, inputs = made[0], tuple(made[1]) if len(made) > 1 else None
            else:
                model = made
        else:
            model = obj
    except Exception as exc:
        raise KitError(
            f"--module {spec!r}: building {name} failed: {type(exc).__name__}: "
            + (str(exc).splitlines() or [""])[0]
        ) from None
    if not isinstance(model, torch.nn.Module):
        raise KitError(f"--module {spec!r}: {name} does not give a torch.nn.Module")
    if example_shapes:
        torch.manual_seed(0)
        inputs = tuple(torch.rand(shape) for shape in example_shapes)
    if inputs is None:
        given = getattr(module, "example_inputs", None)
        inputs = tuple(given() if callable(given) else given) if given is not None else None
    if inputs is None:
        raise KitError(
            f"--module {spec!r}: no example inputs",
            hint="pass --example 1,3,16,16 (one per input), or define example_inputs in the module",
        )
    return model, inputs


def lower_for_tosa(model: Any, inputs: tuple[Any, ...], target: Target, folder: Path) -> Lowered:
    """Quantize and lower `model` for `target` with ExecuTorch, keeping its intermediate
    artifacts in `folder`: the TOSA graph of each partition (output_tag<N>_TOSA-*.tosa,
    as the Arm backend names them) and the .pte."""
    pte = folder / "model.pte"
    try:
        lower_to_pte(model, inputs, target, pte, dump_dir=folder / "dump")
    except KitError:
        raise
    except Exception as exc:  # ExecuTorch/Vela reject the model: the user's input
        raise KitError(
            f"lowering the module for {target.accelerator} failed: {type(exc).__name__}: "
            + (str(exc).splitlines() or [""])[0]
        ) from exc
    return Lowered(folder / "dump", pte)

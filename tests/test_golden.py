"""Golden test of the layout redesign (issue 16): what the kit generates must not change.

For every test model x built-in board (and the Corstone-320 QEMU stand-in and a port
board) x app (and `--npu virtual` where it applies), `ethosu-kit gen` runs in-process
and every file it writes is hashed; a refusal is recorded by its exit code and message.
The virtual NPU's outputs of every delegated model (`ethosu-kit simulate`, fixed seed)
are hashed too. The manifest in tests/data/golden/generated.json was captured at the
commit before the redesign (3b5d005); a difference names the case and the file.

Normalised before hashing, because they change with where and when the kit runs, not
with what it generates: the kit version stamp, the output folder, the kit's root, and
the cached pte's path. A deliberate change of a generated file updates the manifest
(`GOLDEN_CAPTURE=1 pytest tests/test_golden.py`) in the same commit, which says why.

The ptes are the checked-in ones (tests/data/pte: the same bytes the lowering made at
3b5d005, so the test needs no torch and runs on any machine); the two models too large
to check in are lowered. Keyed by the pte's sha256: a pte lowered differently (another
torch or executorch) cannot be compared, and the case fails saying so rather than
passing on other bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import lowered_pte
from ethosu_kit.cli import main
from models import MODELS

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "data" / "golden" / "generated.json"
CAPTURE = os.environ.get("GOLDEN_CAPTURE") == "1"

BOARDS: dict[str, list[str]] = {
    "cs300": ["--board", "corstone-300"],
    "cs320": ["--board", "corstone-320"],
    "cs320-stand-in": ["--board", "corstone-320", "--qemu-stand-in"],
    "port-m55": ["--board", str(REPO / "tests" / "data" / "boards" / "custom_m55.toml")],
    "port-an500": ["--board", str(REPO / "docs" / "examples" / "boards" / "mps2-an500")],
    "port-an521": ["--board", str(REPO / "docs" / "examples" / "boards" / "mps2-an521")],
}
APPS: dict[str, list[str]] = {
    "bringup": ["--app", "bringup"],
    "bringup-virtual": ["--app", "bringup", "--npu", "virtual"],
    "selftest": ["--app", "selftest"],
    "selftest-virtual": ["--app", "selftest", "--npu", "virtual"],
    "runner": ["--app", "executor_runner"],
}
_VERSION = re.compile(rb"(ethosu-kit|ethosu_kit|version[ =:\"]+)\s*[0-9]+\.[0-9]+\.[0-9]+\S*")


def _normalise(data: bytes, replace: dict[str, str]) -> bytes:
    for old, new in replace.items():
        data = data.replace(old.encode(), new.encode())
    return _VERSION.sub(rb"\1 <version>", data)


def _gen(argv: list[str], replace: dict[str, str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse refusals
            code = int(exc.code or 0)
    message = [line for line in err.getvalue().splitlines() if line.startswith("error:")]
    text = message[0] if message else ""
    for old, new in replace.items():
        text = text.replace(old, new)
    return code, text


def _tree(folder: Path, replace: dict[str, str]) -> dict[str, str]:
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        if rel == ".ethosu-kit/manifest.json":
            # its sha256s are of the files before normalising (they hold the kit's
            # path): keep its shape and names, the files are compared one by one
            manifest = json.loads(data)
            manifest["files"] = dict.fromkeys(manifest["files"], "<sha256>")
            data = json.dumps(manifest, sort_keys=True).encode()
        data = _normalise(data, replace)
        files[rel] = hashlib.sha256(data).hexdigest()[:16]
    return files


def _pte(model: str) -> Path:
    checked_in = REPO / "tests" / "data" / "pte" / f"{model}.pte"
    return checked_in if checked_in.is_file() else lowered_pte(model)


def _case(model: str, tmp: Path) -> dict[str, object]:
    pte = _pte(model)
    replace = {str(pte): "<pte>", str(tmp): "<tmp>", str(REPO): "<kit>", pte.name: "<pte-name>"}
    result: dict[str, object] = {"pte": hashlib.sha256(pte.read_bytes()).hexdigest()[:16]}
    extra = ["--allow-cpu-only"] if not MODELS[model].delegate else []
    for board, board_args in BOARDS.items():
        for app, app_args in APPS.items():
            out = tmp / f"{board}-{app}"
            argv = ["gen", "--pte", str(pte), "-o", str(out), "-q", *board_args, *app_args, *extra]
            code, error = _gen(argv, replace)
            entry: dict[str, object] = {"exit": code}
            if code:
                entry["error"] = error
            else:
                entry["files"] = _tree(out, replace)
            result[f"{board}/{app}"] = entry
    if MODELS[model].delegate:
        out = tmp / "simulated.npz"
        code, error = _gen(["simulate", str(pte), "--seed", "7", "-o", str(out)], replace)
        if code:
            result["simulate"] = {"exit": code, "error": error}
        else:
            with np.load(out) as arrays:
                result["simulate"] = {
                    k: hashlib.sha256(arrays[k].tobytes()).hexdigest()[:16]
                    for k in sorted(arrays.files)
                }
    return result


def _golden() -> dict[str, dict[str, object]]:
    if GOLDEN.is_file():
        data: dict[str, dict[str, object]] = json.loads(GOLDEN.read_text())
        return data
    return {}


@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(MODELS))
def test_generated_files_unchanged(model: str, tmp_path: Path) -> None:
    got = _case(model, tmp_path)
    if CAPTURE:
        golden = _golden()
        golden[model] = got
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
        return
    want = _golden().get(model)
    assert want is not None, f"{model}: not in {GOLDEN.name}; capture it (GOLDEN_CAPTURE=1)"
    assert got["pte"] == want["pte"], (
        f"{model}: the pte was lowered differently from the golden one "
        f"({got['pte']} != {want['pte']}): another torch/executorch? recapture at 3b5d005"
    )
    differences = []
    for case in sorted(set(want) | set(got)):
        if case == "pte":
            continue
        w, g = want.get(case), got.get(case)
        if w == g:
            continue
        if isinstance(w, dict) and isinstance(g, dict) and "files" in w and "files" in g:
            wf, gf = w["files"], g["files"]
            assert isinstance(wf, dict) and isinstance(gf, dict)
            for name in sorted(set(wf) | set(gf)):
                if wf.get(name) != gf.get(name):
                    state = "missing" if name not in gf else "new" if name not in wf else "changed"
                    differences.append(f"{case}: {name} {state}")
        else:
            differences.append(f"{case}: {w} -> {g}")
    assert not differences, f"{model}: " + "\n".join(differences)

"""The development corpora in firmware: each model's own command streams run by the self-test
(apps/selftest) on the virtual NPU in QEMU, every output byte equal to `ethosu-kit simulate`.

The host tests run every corpus model (test_vnpu_ops.py, test_vnpu_u85_ops.py); here the
firmware must agree, with the working memory the host measured for the model and nothing
more. A self-test image holds one model, so the models share one project per product:
`gen --force` over it and `build` again recompile only what the model changes (~3 s a
model after the first build's ~25 s). By default a representative set per weight format
(U55 MLW; U85 SWD, sparse SWD, FWD, FWD shared by two decoders, int16 weights of each) and
per operation family (convolution, depthwise, matrix product, pooling, elementwise with and
without a table, reductions, resize, gather/scatter DMA, whole models);
ETHOSU_KIT_TEST_FW_CORPUS=all runs every model of both corpora (~12 min). The weight
format each U85 model holds is checked from its stream's register view, so a Vela that
picks another format fails here by name instead of thinning the coverage.

The workspace edge: an FWD model built with one byte less than measured stops in firmware
naming the bytes and the way out; with the measured size it passes (tests/
test_vnpu_workspace.py proves the same on the host).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from ethosu_kit.cli.app import main as kit_main
from ethosu_kit.firmware.qemu import RunResult, run_elf
from ethosu_kit.pte import read_vela_streams
from ethosu_kit.vnpu.npu import disassemble
from ethosu_kit.vnpu.workspace import pte_workspace
from fw_helpers import need_cross_gcc, need_qemu
from vnpu_models import BY_NAME as U55_MODELS
from vnpu_models import MOBILENET_V2, lowered
from vnpu_u85_models import MISCOMPILED
from vnpu_u85_models import OP_MODELS as U85_OP_MODELS
from vnpu_u85_models import WHOLE_MODELS as U85_WHOLE_MODELS

U85_PRODUCT = 2
pytestmark = [pytest.mark.firmware, pytest.mark.qemu, pytest.mark.slow, pytest.mark.lowering]

# model -> the weight format its stream must hold (None: no weights to check)
U55_SET: dict[str, str | None] = {
    "conv3x3_pad": "MLW",
    "conv_deep": "MLW",
    "depthwise_a16w8": "MLW",
    "linear": "MLW",
    "softmax_a16w8": None,
    "avgpool_pad": None,
    "mul_bcast_both": None,
    "residual_mul": "MLW",
    "layer_norm_a16w8": None,
    "block": "MLW",
}
U85_SET: dict[str, str | None] = {
    "u85_conv3x3_pad": "WEIGHT_FORMAT_SWD",
    "u85_conv_a16w8": "WEIGHT_FORMAT_SWD",
    "u85_conv_deep": "WEIGHT_FORMAT_FWD",
    "u85_conv_deep_a16w8": "WEIGHT_FORMAT_FWD",
    "u85_conv_big": "WEIGHT_FORMAT_FWD",
    "u85_conv_sparse": "WEIGHT_SPARSITY_SPARSE_2_4",
    "u85_conv_sparse_a16w8": "WEIGHT_SPARSITY_SPARSE_2_4",
    "u85_depthwise5x5": "WEIGHT_FORMAT_SWD",
    "u85_conv_transpose_k3": "WEIGHT_FORMAT_SWD",
    "u85_matmul_a16w8": None,
    "u85_maxpool_k5_s4": None,
    "u85_softmax_a16w8": None,
    "u85_layer_norm_a16w8": None,
    "u85_upsample_bilinear": None,
    "u85_index_put": None,
    "u85_where_xor": None,
    "u85_mean_c": None,
    "u85_residual_cnn_a16w8": "WEIGHT_FORMAT_FWD",
    "u85_kws_dscnn": "WEIGHT_SPARSITY_SPARSE_2_4",
    "u85_transformer_layer": None,
}
if os.environ.get("ETHOSU_KIT_TEST_FW_CORPUS") == "all":
    # every corpus model but the benchmark's MobileNetV2 224 (bench_runner.py)
    U55_SET = {n: U55_SET.get(n) for n in U55_MODELS if n != MOBILENET_V2.name}
    U85_SET = {m.name: U85_SET.get(m.name) for m in (*U85_OP_MODELS, *U85_WHOLE_MODELS)}
U85_MODELS = {m.name: m for m in (*U85_OP_MODELS, *U85_WHOLE_MODELS, *MISCOMPILED)}


def _pte(name: str) -> Path:
    model = U85_MODELS[name] if name.startswith("u85_") else U55_MODELS[name]
    return lowered(model) / "model.pte"


def _weight_formats(pte: Path) -> str:
    """The U85 stream's register view (the weight format and sparsity fields)."""
    (blocks,) = read_vela_streams(pte)
    return "\n".join(disassemble(blocks.command_stream, U85_PRODUCT))


def _project(pte: Path, project: Path, u85: bool) -> Path:
    """`gen --force` into the product's one project: the rebuild recompiles the model's part."""
    board = ["--board", "cs320", "--qemu-stand-in"] if u85 else ["--board", "cs300"]
    args = ["gen", "--pte", str(pte), *board, "--mode", "Shared_Sram", "--app", "selftest"]
    assert kit_main([*args, "--force", "-o", str(project), "-q"]) == 0
    return project


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    """The project folder of each product (key: U85), shared by its models."""
    root = tmp_path_factory.mktemp("corpus_fw")
    return {False: root / "u55", True: root / "u85"}


def _build(project: Path, vectors: Path, *defines: str) -> Path:
    """`ethosu-kit build --app selftest --npu virtual --vectors`, then (with defines) CMake
    again with them: the build option a user gives to cap the working memory."""
    args = ["build", str(project), "--app", "selftest", "--npu", "virtual"]
    assert kit_main([*args, "--vectors", str(vectors)]) == 0
    if defines:
        for step in (
            ["cmake", "--preset", "gcc", *(f"-D{d}" for d in defines)],
            ["cmake", "--build", "--preset", "gcc", "--parallel", "2"],
        ):
            done = subprocess.run(step, cwd=project, capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return project / "build" / "gcc" / "selftest.elf"


def _run(elf: Path) -> RunResult:
    need_qemu()
    result = run_elf(elf, timeout=120)
    assert not result.timed_out, result.output
    return result


def _simulated(pte: Path, folder: Path) -> Path:
    vectors = folder / "simulate.npz"
    assert kit_main(["simulate", str(pte), "--seed", "5", "-o", str(vectors)]) == 0
    return vectors


@pytest.mark.parametrize("name", [*U55_SET, *U85_SET])
def test_corpus_model_in_firmware_equals_simulate(
    name: str, projects: dict[bool, Path], tmp_path: Path
) -> None:
    need_cross_gcc()
    u85 = name in U85_SET
    pte = _pte(name)
    want = (U85_SET if u85 else U55_SET)[name]
    if want is not None and want != "MLW":
        assert want in _weight_formats(pte), f"{name}: Vela no longer emits {want}"
    vectors = _simulated(pte, tmp_path)
    out = _run(_build(_project(pte, projects[u85], u85), vectors))
    assert out.exit_code == 0, out.output
    assert "SELFTEST PASS" in out.output, out.output
    assert re.search(r"^delegate 0: PASS", out.output, re.M), out.output


def test_fwd_workspace_one_byte_short_fails_by_name_the_measured_passes(
    projects: dict[bool, Path], tmp_path: Path
) -> None:
    """After the corpus models (file order): it reuses the U85 project, whose CMake cache
    then keeps the workspace cap."""
    need_cross_gcc()
    pte = _pte("u85_conv_deep")
    assert "WEIGHT_FORMAT_FWD" in _weight_formats(pte)
    need = pte_workspace(pte)
    vectors = _simulated(pte, tmp_path)
    project = _project(pte, projects[True], True)
    short = _run(_build(project, vectors, f"ETHOSU_VIRTUAL_WORKSPACE_SIZE={need - 1}"))
    assert short.exit_code == 9, short.output  # NPU_ERROR: the driver refused the stream
    line = (
        rf"needs {need} bytes of working memory \(decoded weights[^)]*\), the virtual NPU has "
        rf"{need - 1} \(ETHOSU_VIRTUAL_WORKSPACE_SIZE or ethosu_virtual_set_workspace\)$"
    )
    assert re.search(line, short.output, re.M), short.output
    exact = _run(_build(project, vectors, f"ETHOSU_VIRTUAL_WORKSPACE_SIZE={need}"))
    assert exact.exit_code == 0, exact.output
    assert "SELFTEST PASS" in exact.output, exact.output


def test_fwd_model_through_the_executor_runner_equals_simulate(tmp_path: Path) -> None:
    """With the user's ExecuTorch checkout: the FWD model through the executor_runner
    (`build --app executor_runner --npu virtual`, the working memory as measured) in
    QEMU prints what `simulate` computes."""
    from runner_build import build_with_cli, require_externals, run_qemu
    from vnpu_support import runner_equals_simulation

    require_externals("EXECUTORCH_ROOT")
    pte = _pte("u85_conv_deep")
    project = tmp_path / "runner"
    args = ["gen", "--pte", str(pte), "--board", "cs320", "--qemu-stand-in"]
    assert kit_main([*args, "--mode", "Shared_Sram", "-o", str(project), "-q"]) == 0
    run = run_qemu(build_with_cli(project, "virtual"))
    assert run.exit_code == 0, run.uart
    runner_equals_simulation(pte, project, run, tmp_path)

"""The development corpora compiled with ethos-u-vela 5.2.0 (tests/vela_next.py), bit-exact.

ExecuTorch 1.5.1 compiles with Vela 5.1.0 (test_vnpu_ops.py, test_vnpu_u85_ops.py run
those streams); users who upgrade Vela get 5.2.0's. Each U55 and U85 corpus model's TOSA
graph, compiled with the 5.2.0 CLI and the pte's own flags, runs on the virtual NPU on
random full-range inputs against tosa_reference_model (a stream equal to 5.1.0's is left
to the 5.1.0 tests); a stream the virtual NPU cannot run fails naming the command.
Skipped, naming the fix, without the 5.2.0 venv (scripts/install.sh).
"""

from __future__ import annotations

import numpy as np
import pytest

import vela_next
from ethosu_kit.vnpu import VirtualNpu, run_delegate
from ethosu_kit.vnpu.delegate import random_inputs
from vnpu_models import OP_MODELS as U55_OP_MODELS
from vnpu_models import WHOLE_MODELS as U55_WHOLE_MODELS
from vnpu_models import OpModel, lowered
from vnpu_support import mismatches, tosa_run
from vnpu_u85_models import OP_MODELS as U85_OP_MODELS
from vnpu_u85_models import WHOLE_MODELS as U85_WHOLE_MODELS
from vnpu_u85_models import fast_scratch

pytestmark = pytest.mark.lowering

RUNS = 3
# the MobileNet-sized models run in the slow tests of the 5.1.0 files
CORPUS: dict[str, OpModel] = {
    m.name: m
    for m in (*U55_OP_MODELS, *U55_WHOLE_MODELS, *U85_OP_MODELS, *U85_WHOLE_MODELS)
    if not m.name.endswith("mobilenet")
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_vela_next_stream_bit_exact_with_tosa_reference(name: str) -> None:
    model = CORPUS[name]
    vela_next.vela()
    try:
        tosa = (lowered(model) / "out.tosa").read_bytes()
    except ImportError as exc:
        pytest.skip(f"lowering needs torch and executorch: {exc.name} is missing")
    if vela_next.same_as_pte(model):
        return  # the same stream as 5.1.0's: test_vnpu_ops / test_vnpu_u85_ops run it
    blocks = vela_next.compiled(model)
    rng = np.random.default_rng(4321)
    with VirtualNpu(blocks.cop.config, blocks.cop.id) as npu:
        for run in range(RUNS):
            inputs = random_inputs(blocks, rng)
            ours = run_delegate(
                blocks, inputs, npu, fast_scratch_size=fast_scratch(model.memory_mode)
            )
            bad = mismatches(ours, tosa_run(tosa, inputs))
            assert bad == 0, (
                f"{name} (Vela {vela_next.VERSION}): input {run}: {bad} values differ from "
                "tosa_reference_model"
            )

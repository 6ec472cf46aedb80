"""`ethosu-kit simulate` keeps the delegate tensors' shapes as the program has them.

Vela's IO records are 6-D, padded with leading 1s; the rank comes from the delegate
call's arguments, so a batch dimension of 1 stays (it was dropped before).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ethosu_kit.cli.app import main
from ethosu_kit.pte import read_pte


def test_batch_dimension_kept(
    pte_u55_shared: Path, pte_two_delegates: Path, tmp_path: Path
) -> None:
    out = tmp_path / "a.npz"
    assert main(["simulate", str(pte_u55_shared), "-o", str(out)]) == 0
    method = read_pte(pte_u55_shared).methods[0]
    with np.load(out) as data:
        # the delegate takes the quantized method input, of the method input's shape
        assert data["delegate0_input0"].shape == method.inputs[0].shape == (1, 3, 16, 16)
        assert data["delegate0_output0"].shape == method.outputs[0].shape == (1, 10)
    out = tmp_path / "b.npz"
    assert main(["simulate", str(pte_two_delegates), "-o", str(out)]) == 0
    with np.load(out) as data:
        assert all(data[k].ndim == 4 and data[k].shape[0] == 1 for k in data.files), {
            k: data[k].shape for k in data.files
        }


def test_inputs_without_the_batch_dimension_still_accepted(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    x = np.arange(3 * 16 * 16, dtype=np.int64).reshape(3, 16, 16) % 256 - 128
    np.save(tmp_path / "x.npy", x.astype(np.int8))
    out = tmp_path / "o.npz"
    assert (
        main(["simulate", str(pte_u55_shared), "--inputs", str(tmp_path / "x.npy"), "-o", str(out)])
        == 0
    )
    with np.load(out) as data:
        assert data["delegate0_input0"].shape == (1, 3, 16, 16)

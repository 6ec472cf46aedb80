"""The virtual Ethos-U85's command decoder against Vela's own listing, and its weight decoders.

Vela (regor) prints `--verbose-register-command-stream` while it compiles each corpus
model for each configuration (vnpu_u85_models.compiled keeps the listing beside the
payload); every command must equal the library's U85 disassembly of the payload: same
byte offset, code, name and every field regor prints, with the same value.

The weight streams of every convolution are decoded by the library (SWD: the MLW
decoder; FWD: the fast-weight decoder) and compared with Vela's own MLW decoder
(ethosu.mlw_codec) and, for FWD, with the same weights compiled as SWD.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from ethosu_kit.pte import VelaBlocks
from ethosu_kit.vnpu.npu import disassemble, fwd_decode, mlw_decode
from vnpu_support import Command, assert_same_commands, parse_disassembly, parse_listing
from vnpu_u85_models import BY_NAME, CONFIGS, OP_MODELS, WHOLE_MODELS, compiled, vela_listing

pytestmark = pytest.mark.lowering

U85_PRODUCT = 2


def theirs(listing: str) -> list[Command]:
    return parse_listing(listing)


def ours(stream: bytes) -> list[Command]:
    return parse_disassembly(disassemble(stream, U85_PRODUCT))


def _blocks(name: str, config: tuple[str, str]) -> VelaBlocks:
    try:
        return compiled(BY_NAME[name], *config)
    except ImportError as exc:
        pytest.skip(f"lowering needs torch and executorch: {exc.name} is missing")


ALL = [m.name for m in (*OP_MODELS, *WHOLE_MODELS)]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}")
def test_u85_decoder_matches_vela_listing_on_every_stream(config: tuple[str, str]) -> None:
    commands = fields_checked = 0
    for name in ALL:
        blocks = _blocks(name, config)
        their = theirs(vela_listing(BY_NAME[name], *config))
        mine = ours(blocks.command_stream)
        fields_checked += assert_same_commands(name, their, mine)
        commands += len(mine)
    print(f"{config}: {commands} commands, {fields_checked} fields equal to Vela's listing")
    assert commands > 1000


CORES = {128: 1, 256: 1, 512: 2, 1024: 4, 2048: 4}  # weight decoders per MAC configuration


def weight_streams(blocks: VelaBlocks) -> list[tuple[str, bytes]]:
    """(format, bytes) of every weight stream of the convolutions (one per weight decoder
    for SWD), read back from region 0 (through the DMA that copied it, if the stream is
    read from scratch)."""
    cores = CORES[1 << (blocks.cop.config & 0xF)]
    regs: dict[str, dict[str, str]] = {}
    dmas: list[tuple[int, int, int, int]] = []  # (dst region, dst, src, len) of region 0 copies
    found = []
    weights = blocks.weight_data
    for line in disassemble(blocks.command_stream, U85_PRODUCT):
        _, _, name, *rest = line.split(" ")
        regs[name] = dict(f.split("=", 1) for f in rest)
        if name == "NPU_OP_DMA_START" and int(regs["NPU_SET_DMA0_SRC_REGION"]["region"]) == 0:
            dmas.append((int(regs["NPU_SET_DMA0_DST_REGION"]["region"]),
                         int(regs["NPU_SET_DMA0_DST"]["addr"]),
                         int(regs["NPU_SET_DMA0_SRC"]["addr"]),
                         int(regs["NPU_SET_DMA0_LEN"]["addr"])))  # fmt: skip
        if name not in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE") or regs[name].get("weights_ifm2") == "1":
            continue
        fmt = regs["NPU_SET_WEIGHT_FORMAT"]["weight_format"]
        region = int(regs["NPU_SET_WEIGHT_REGION"]["region"])
        for k in range(1 if fmt.endswith("FWD") else cores):
            reg = "NPU_SET_WEIGHT" + (str(k) if k else "")
            base = int(regs[f"{reg}_BASE"]["addr"])
            length = int(regs[f"{reg}_LENGTH"]["length"])
            if region != 0:
                # the latest DMA from region 0 that covered the stream
                (base,) = [s + base - d for r, d, s, n in dmas[::-1] if r == region and
                           d <= base and base + length <= d + n][:1]  # fmt: skip
            found.append((fmt, weights[base : base + length]))
    return found


def _nonzero(values: Any) -> Counter[int]:
    return Counter(int(v) for v in np.asarray(values) if v != 0)


@pytest.mark.parametrize("config", CONFIGS[:2], ids=lambda c: f"{c[0]}-{c[1]}")
def test_u85_swd_weights_decode_as_vela_encoded_them(config: tuple[str, str]) -> None:
    mlw_codec = pytest.importorskip("ethosu.mlw_codec", reason="ethos-u-vela's mlw_codec")
    streams = 0
    for name in ALL:
        if name == "u85_mobilenet":
            continue
        for fmt, data in weight_streams(_blocks(name, config)):
            if fmt != "WEIGHT_FORMAT_SWD":
                continue
            ref = np.asarray(mlw_codec.decode(bytearray(data)), dtype=np.int64)
            mine = mlw_decode(bytes(data)).astype(np.int64)
            assert mine.tolist() == ref[: len(mine)].tolist(), f"{name}: SWD stream differs"
            assert len(mine) == len(ref), f"{name}: {len(mine)} values, Vela's decoder {len(ref)}"
            streams += 1
    assert streams >= 10


def test_u85_fwd_weights_equal_the_same_weights_encoded_swd() -> None:
    """conv_deep's weights go FWD on the U85-256 (Vela picks FWD for large weight sets)
    and SWD on the U85-512: the two decodes hold the same non-zero weights."""
    fwd = [d for f, d in weight_streams(_blocks("u85_conv_deep", CONFIGS[0])) if f.endswith("FWD")]
    assert fwd, "u85_conv_deep: no FWD weight stream on the U85-256 any more"
    swd_config = CONFIGS[1]
    swd = [d for f, d in weight_streams(_blocks("u85_conv_deep", swd_config)) if f.endswith("SWD")]
    if not swd:
        pytest.skip("Vela picked FWD on the U85-128 as well: no SWD twin to compare")
    mine = sum((_nonzero(fwd_decode(bytes(d))) for d in fwd), Counter())
    twin = sum((_nonzero(mlw_decode(bytes(d))) for d in swd), Counter())
    assert mine == twin
    assert sum(mine.values()) > 1000

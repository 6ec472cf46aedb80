"""The virtual NPU's own MLW weight decoder against Vela's `ethosu.mlw_codec.decode`.

Streams come from two places: Vela's encoder on weight sets shaped to reach every
coding mode (dense, sparse with zero runs, tiny palettes, the full 9-bit range,
slices longer than one), and the real weight streams of the lowered test models
(found through the DMA that stages them from region 0).
"""

from __future__ import annotations

import numpy as np
import pytest

from ethosu_kit.vnpu.npu import VnpuError, disassemble, mlw_decode
from vnpu_models import BY_NAME
from vnpu_support import op_model

mlw_codec = pytest.importorskip("ethosu.mlw_codec", reason="ethos-u-vela is not installed")


def weight_sets() -> list[tuple[str, list[int]]]:
    rng = np.random.default_rng(7)
    sets = [
        ("dense_int8", rng.integers(-128, 128, 3000)),
        ("int9", rng.integers(-255, 256, 777)),
        ("gaussian", np.clip(rng.normal(0, 12, 5000).round(), -128, 127)),
        ("palette4", rng.choice([-3, 0, 5, 90], 4000)),
        ("single_value", np.full(300, -7)),
        ("zeros", np.zeros(1000)),
        ("one_value", np.array([1])),
    ]
    sparse = rng.integers(-128, 128, 20000)
    sparse[rng.random(20000) < 0.9] = 0
    sets.append(("sparse_90pc", sparse))
    long_runs = np.zeros(40000, dtype=np.int64)
    long_runs[::997] = rng.integers(1, 100, len(long_runs[::997]))
    sets.append(("long_zero_runs", long_runs))
    # the longest weight codes: a small divisor for the many small values, and a few values
    # at the edge of the 9-bit range whose unary parts run over several chunks
    outliers = rng.integers(-1, 2, 3000)
    outliers[rng.random(3000) < 0.01] = rng.choice([-255, 255, -200, 180])
    sets.append(("long_codes", outliers))
    sets.append(("ternary", rng.integers(-1, 2, 1000)))  # truncated weight codes
    laplace = rng.laplace(0, 3, 6000).round()
    sets.append(("laplace_zero_runs", np.where(rng.random(6000) < 0.8, 0, laplace)))
    return [(name, [int(v) for v in values]) for name, values in sets]


@pytest.mark.parametrize(("name", "weights"), weight_sets(), ids=[n for n, _ in weight_sets()])
def test_decodes_vela_encoder_output(name: str, weights: list[int]) -> None:
    stream = bytes(mlw_codec.encode(weights))
    reference = list(mlw_codec.decode(bytearray(stream)))
    ours = mlw_decode(stream).tolist()
    assert ours == reference, f"{name}: first difference at {_first_diff(ours, reference)}"
    assert ours[: len(weights)] == weights


def _header(stream: bytes) -> tuple[int, int, int]:
    """(zero-run divisor, weight divisor, truncation flag) of the first slice."""
    v = int.from_bytes(stream[:8].ljust(8, b"\0"), "little")
    return v & 7, (v >> 18) & 7, (v >> 21) & 1


def test_weight_sets_reach_every_coding_mode() -> None:
    """The decoder's paths: uncompressed with and without zero runs (read from the stream /
    through the chunk walk), every weight divisor's Golomb-Rice codes, truncated codes."""
    modes = {_header(bytes(mlw_codec.encode(w))) for _, w in weight_sets()}
    zdivs = {z for z, _, _ in modes}
    wdivs = {w for _, w, _ in modes}
    assert 6 in zdivs and zdivs & {0, 1, 2, 3}, modes
    assert {0, 7} <= wdivs and len(wdivs) >= 4, modes
    assert any(t for _, _, t in modes), modes


class _Bits:
    """An MLW stream written bit by bit, least significant first."""

    def __init__(self) -> None:
        self.value = 0
        self.count = 0

    def put(self, value: int, bits: int) -> None:
        self.value |= (value & ((1 << bits) - 1)) << self.count
        self.count += bits

    def bytes(self, pad: int = 0) -> bytes:
        """The bits, then `pad` bytes of end-of-stream markers (all ones, as Vela pads)."""
        return self.value.to_bytes((self.count + 7) // 8, "little") + b"\xff" * pad


def _unfold(v: int) -> int:
    return -(v >> 1) if v & 1 else v >> 1


def _uncompressed_slice(
    out: _Bits, codes: list[int], bits: int, offset: int, palette: list[int]
) -> list[int]:
    """An uncompressed slice without zero runs: header, palette, `bits`-bit codes. Returns the
    weights it holds (a code below the palette size is an entry, above it code - size + offset)."""
    out.put(6, 3)  # zero runs disabled
    out.put(len(codes) - 1, 15)
    out.put(7, 3)  # uncompressed
    out.put(0, 1)
    out.put(1, 1)  # new palette
    out.put(offset, 5)
    out.put(len(palette) - 1 if palette else 0, 5)
    palbits = 9 if palette else bits
    out.put(palbits - 2, 3)
    for entry in palette:
        out.put(entry, palbits)
    for code in codes:
        out.put(code, bits)
    size = len(palette)
    return [_unfold(palette[c] if c < size else c - size + offset) for c in codes]


Slice = tuple[list[int], int, int, list[int]]  # codes, code bits, direct offset, palette


def _uncompressed_cases() -> list[tuple[str, list[Slice]]]:
    """Slices of every code width without a palette (2 to 9 bits) and with palettes of 2 to 32
    entries (1 to 5 bits), lengths that end the codes at every bit of a 32-bit word."""
    rng = np.random.default_rng(3)
    cases: list[tuple[str, list[Slice]]] = []
    for bits in range(2, 10):
        for n in (1, 3, 4, 5, 31, 333):
            codes = [int(c) for c in rng.integers(0, 1 << bits, n)]
            cases.append((f"bits{bits}_n{n}", [(codes, bits, int(rng.integers(0, 32)), [])]))
    for palsize in (2, 3, 4, 5, 8, 9, 16, 17, 32):
        bits = (palsize - 1).bit_length()
        codes = [int(c) for c in rng.integers(0, 1 << bits, 77)]
        palette = [int(p) for p in rng.integers(0, 512, palsize)]
        cases.append((f"palette{palsize}", [(codes, bits, int(rng.integers(0, 32)), palette)]))
    # two slices back to back: the second's header starts mid-byte
    cases.append(("two_slices", [cases[3][1][0], cases[-1][1][0]]))
    return cases


@pytest.mark.parametrize(
    ("name", "slices"), _uncompressed_cases(), ids=[n for n, _ in _uncompressed_cases()]
)
def test_uncompressed_slices_of_every_width(name: str, slices: list[Slice]) -> None:
    bits = _Bits()
    expected: list[int] = []
    for codes, width, offset, palette in slices:
        expected += _uncompressed_slice(bits, codes, width, offset, palette)
    bits.put(7, 3)  # end of stream
    for pad in (0, 1, 2, 3, 5):  # the last codes in the last bytes of the buffer
        stream = bits.bytes(pad)
        assert mlw_decode(stream).tolist() == expected, f"{name} pad {pad}"
    assert list(mlw_codec.decode(bytearray(bits.bytes(16)))) == expected


def _prefix_or_refused(stream: bytes, full: list[int]) -> None:
    try:
        values = mlw_decode(stream).tolist()
    except VnpuError as exc:
        assert "malformed" in str(exc), exc
        return
    assert values == full[: len(values)]


@pytest.mark.parametrize("name", ["int9", "palette4", "sparse_90pc", "long_codes", "ternary"])
def test_truncated_streams_are_refused_or_a_prefix(name: str) -> None:
    """Every truncation of a stream (the library copies exactly those bytes, so a read past them
    is a read past the buffer): refused as malformed, or the values of its whole slices."""
    weights = dict(weight_sets())[name][:600]
    stream = bytes(mlw_codec.encode(weights))
    full = mlw_decode(stream).tolist()
    for cut in range(len(stream)):
        _prefix_or_refused(stream[:cut], full)
    # and the shortest stream that still holds everything: the last slice ends mid-word
    bits = _Bits()
    expected = _uncompressed_slice(bits, [v & 255 for v in range(1, 200, 3)], 8, 0, [])
    stream = bits.bytes()
    for cut in range(len(stream) + 1):
        _prefix_or_refused(stream[:cut], expected)


def test_rejects_malformed_stream() -> None:
    stream = bytearray(mlw_codec.encode(list(range(-50, 50))))
    stream[0] = (stream[0] & ~7) | 5  # zero-run divisor 5 is not defined
    with pytest.raises(Exception, match="malformed"):
        mlw_decode(bytes(stream))


def _first_diff(a: list[int], b: list[int]) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def staged_weight_streams(cmd: list[str], weights: bytes) -> list[bytes]:
    """Region-0 weight streams of each CONV/DEPTHWISE, found through the DMA that staged them."""
    regs: dict[str, int] = {}
    dmas: list[tuple[int, int, int]] = []  # (src, dst, len)
    streams = []
    for line in cmd:
        _, _, name, *fields = line.split(" ")
        values = dict(f.split("=", 1) for f in fields)
        if name.startswith("NPU_SET_"):
            key = name[len("NPU_SET_") :]
            raw = values.get("addr", values.get("length", values.get("region", "0")))
            regs[key] = int(raw) if raw.isdigit() else 0
        elif name == "NPU_OP_DMA_START":
            dmas.append((regs["DMA0_SRC"], regs["DMA0_DST"], regs["DMA0_LEN"]))
        elif name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
            base, length = regs["WEIGHT_BASE"], regs["WEIGHT_LENGTH"]
            if regs["WEIGHT_REGION"] == 0:
                streams.append(weights[base : base + length])
                continue
            for src, dst, n in reversed(dmas):
                if dst <= base < dst + n:
                    start = src + base - dst
                    streams.append(weights[start : start + length])
                    break
    return streams


@pytest.mark.lowering
@pytest.mark.parametrize(
    "name", ["conv3x3_pad", "conv_deep", "depthwise_s2", "conv_a16w8", "block"]
)
def test_decodes_real_weight_streams(name: str) -> None:
    blocks, _ = op_model(BY_NAME[name])
    streams = staged_weight_streams(disassemble(blocks.command_stream), blocks.weight_data)
    assert streams, f"{name}: no weight stream found"
    for stream in streams:
        assert mlw_decode(stream).tolist() == list(mlw_codec.decode(bytearray(stream)))

"""Tables a command stream loads and overwrites unread (a Vela miscompilation).

ethos-u-vela 5.1.0 and 5.2.0 load both tables of two int16 table operations in a row on
the U85 to lutram address 0, the second before any operation reads the first; the stream
then applies one table twice (docs/virtual-npu.md). The virtual NPU runs such a stream as
written, so `simulate` says so rather than only differing from the graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from ethosu_kit.vnpu.npu import disassemble

PRODUCTS = ("Ethos-U55", "Ethos-U65", "Ethos-U85")
# the operations that apply the activation (NPU_OP_DMA_*, _STOP and _*_WAIT do not)
_OPERATIONS = frozenset(
    f"NPU_OP_{op}" for op in ("CONV", "DEPTHWISE", "POOL", "ELEMENTWISE", "RESIZE", "MATMUL")
)
# U55/U65 name a table slot, U85 a table format: either way the operation reads a table
_LUT_ACTIVATIONS = ("ACTIVATION_FUNCTION_TABLE_", "ACTIVATION_FUNCTION_LUT_")
# the U85's "no table" is spelled like a table format: it reads nothing
_NO_LUT = "ACTIVATION_FUNCTION_LUT_NONE"
# the register whose stride_mode shapes DMA0: the U85 moved it to the source's
_STRIDE_REGISTER = {2: "NPU_SET_DMA0_SRC_REGION"}


@dataclass(frozen=True)
class UnreadTable:
    """A DMA into internal (LUT) memory at command word `loaded`, overwritten by the one at
    command word `overwritten` before any operation with a table activation ran."""

    loaded: int
    overwritten: int


def _fields(line: str) -> dict[str, str]:
    return dict(f.split("=", 1) for f in line.split(" ")[3:] if "=" in f)


def unread_tables(command_stream: bytes, product: int) -> list[UnreadTable]:
    """Each table load the stream overwrites (overlapping bytes) before it is read."""
    found: list[UnreadTable] = []
    internal = False  # NPU_SET_DMA0_DST_REGION's region_mode: internal is the LUT memory
    linear = True  # a 1D copy: LEN bytes from DST (the only form Vela loads tables with)
    dst = length = 0
    lut = False
    unread: list[tuple[int, int, int]] = []  # (word, first byte, end byte) not read yet
    stride_register = _STRIDE_REGISTER.get(product, "NPU_SET_DMA0_DST_REGION")
    for line in disassemble(command_stream, product):
        offset, _, name = line.split(" ")[:3]
        fields = _fields(line)
        if name == stride_register:
            linear = fields.get("stride_mode", "DMA_STRIDE_MODE_D1") == "DMA_STRIDE_MODE_D1"
        if name == "NPU_SET_DMA0_DST_REGION":
            internal = fields.get("region_mode") == "DMA_REGION_MODE_INTERNAL"
        elif name == "NPU_SET_DMA0_DST":
            dst = int(fields["addr"])
        elif name == "NPU_SET_DMA0_LEN":
            length = int(fields["addr"])
        elif name == "NPU_SET_ACTIVATION":
            lut = _NO_LUT not in line and any(a in line for a in _LUT_ACTIVATIONS)
        elif name in _OPERATIONS and lut:
            unread.clear()
        elif name == "NPU_OP_DMA_START" and internal and linear:
            word = int(offset, 16) // 4
            end = dst + length
            found += [UnreadTable(w, word) for w, a, b in unread if a < end and dst < b]
            unread = [(w, a, b) for w, a, b in unread if not (a < end and dst < b)]
            unread.append((word, dst, end))
    return found


def unread_table_warnings(command_stream: bytes, product: int, delegate: int) -> list[str]:
    """One `warning:` line per table overwritten unread (`unread_tables`)."""
    npu = PRODUCTS[product] if product < len(PRODUCTS) else f"Ethos-U (product {product})"
    return [
        f"warning: {npu} delegate {delegate}: the table loaded at command word {u.loaded} is "
        f"overwritten at word {u.overwritten} before any operation reads it: the stream uses "
        "one table where its graph has two (a Vela miscompilation, docs/virtual-npu.md)"
        for u in unread_tables(command_stream, product)
    ]

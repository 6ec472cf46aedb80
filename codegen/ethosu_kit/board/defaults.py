"""The values a board gets for the keys its board.toml leaves out, written once.

The model's dataclass defaults, the loader, the schema table (and so docs/boards.md)
and `new-board`'s drafts all read them from here.
"""

from __future__ import annotations

CLOCK_HZ = 25_000_000  # [cpu].clock_hz and [console].clock_hz: the MPS2/MPS3 FPGA clock
BAUD = 115200  # [console].baud
DCACHE_LINE = 32  # [cpu].dcache_line in bytes, when the core does not say
IRQS = 32  # [cpu].irqs: the NVIC's external interrupts, at the least
NPU_SECURE = True  # [npu].secure
NPU_PRIVILEGED = True  # [npu].privileged
FVP_UART = "uart0"  # [fvp].uart
SCHEMA = 1  # a board.toml without `schema =` is read as the first schema


def irqs_for(npu_irq: int) -> int:
    """[cpu].irqs when left out: the NPU's IRQ rounded up to a multiple of 32."""
    return max(IRQS, (npu_irq // 32 + 1) * 32)

"""What a team's own start-up brings (issue 17), in apps of one's own on QEMU.

A start-up that keeps its own stack: the kit's stack paint and its overflow check only
act on the plan's stack.

The paint ran from the plan's stack base up to the live stack pointer wherever that was:
below the plan's stack it painted nothing and the scan then read the whole stack as used
(a false `E: stack overflow`, exit 16); above it, it painted over other memory. An app
here moves the stack pointer to a stack of its own, as such a start-up does, and calls
what the kit's apps call: one `W: stack:` line, no overflow, the app's own exit code.

A SysTick_Handler of its own (an RTOS tick): the kit's is weak, so the image links, and
the team's handler keeps the kit's cycle count by calling kit_systick_wrap().
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fw_helpers import need_qemu, qemu_run
from test_fw_ports import AN500, _app_elf

pytestmark = pytest.mark.firmware

OWN_STACK_APP = """\
#include <stdint.h>

#include "kit/app.h"
#include "kit/log.h"
#include "kit/platform.h"
#include "kit/usage.h"

/* the start-up's own stack, wherever the link puts .bss: not the plan's */
static uint32_t own_stack[1024] __attribute__((aligned(8)));
static volatile uint32_t sentinel[64]; /* .bss too: painted over by the old paint */

static int on_own_stack(void)
{
    kit_stack_paint();
    kit_stack_paint(); /* said once */
    kit_usage_report_stack_heap();
    for (unsigned i = 0; i < 64; ++i) {
        if (sentinel[i] != 0xA5A5A5A5u) {
            kit_printf("sentinel %u overwritten\\n", i);
            return 1;
        }
    }
    return 0;
}

/* fn() on the stack that ends at top, then back on the caller's */
__attribute__((naked, noinline)) static int call_on(int (*fn)(void) __attribute__((unused)),
                                                    uint32_t *top __attribute__((unused)))
{
    __asm volatile("push {r4, lr}\\n\\t"
                   "mov r4, sp\\n\\t"
                   "mov sp, r1\\n\\t"
                   "blx r0\\n\\t"
                   "mov sp, r4\\n\\t"
                   "pop {r4, pc}\\n\\t");
}

int ethosu_kit_app_main(void)
{
    if (kit_platform_init() != 0) {
        return kit_app_result(17);
    }
    for (unsigned i = 0; i < 64; ++i) {
        sentinel[i] = 0xA5A5A5A5u;
    }
    return kit_app_result(call_on(on_own_stack, own_stack + 1024));
}
"""


def test_own_stack_is_neither_painted_nor_an_overflow(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    need_qemu()
    elf = _app_elf(data_pte_u55_shared, AN500, tmp_path, "own_stack", OWN_STACK_APP)
    run = qemu_run(elf)
    assert run.exit_code == 0, run.output
    assert "E: stack overflow" not in run.output, run.output
    said = [line for line in run.output.splitlines() if line.startswith("W: stack:")]
    assert len(said) == 1 and "outside the plan's stack" in said[0], run.output
    assert "usage: heap" in run.output and "usage: stack " not in run.output, run.output


OWN_SYSTICK_APP = """\
#include <stdint.h>

#include "kit/app.h"
#include "kit/hal.h"
#include "kit/log.h"
#include "kit/platform.h"
#include "systick.h"

static volatile uint32_t ticks;

/* the team's own handler (an RTOS tick): links over the kit's weak one */
void SysTick_Handler(void)
{
    ticks = ticks + 1u;
    kit_systick_wrap();
}

int ethosu_kit_app_main(void)
{
    if (kit_platform_init() != 0) {
        return kit_app_result(17);
    }
    uint64_t before = kit_hal_cycles();
    for (uint32_t spin = 0; ticks < 2u && spin < 400000000u; ++spin) {
    }
    uint64_t after = kit_hal_cycles();
    kit_printf("own ticks: %u, cycles went %s\\n", (unsigned)ticks, after > before ? "up" : "back");
    return kit_app_result(ticks >= 2u && after > before ? 0 : 1);
}
"""


def test_own_systick_handler_links_over_the_kits(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    need_qemu()
    elf = _app_elf(data_pte_u55_shared, AN500, tmp_path, "own_systick", OWN_SYSTICK_APP)
    run = qemu_run(elf, timeout=60)
    assert run.exit_code == 0, run.output
    assert "cycles went up" in run.output, run.output

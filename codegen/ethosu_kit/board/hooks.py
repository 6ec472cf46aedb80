"""The HAL hooks a port may implement instead of the kit (sdk/include/kit/hal.h): the
table (`HOOKS`, `HOOK_NAMES`) and the kit's default for each on a board's data
(`hal_default`: which C files, or why the board must provide it).
"""

from __future__ import annotations

from dataclasses import dataclass

from ethosu_kit.board.model import Board, ConsoleKind, TimerKind


@dataclass(frozen=True)
class Hook:
    """One HAL hook of sdk/include/kit/hal.h: what a port may implement instead of the kit."""

    name: str  # as [port].hooks names it
    functions: tuple[str, ...]  # the C functions an implementation defines, all of them
    what: str  # one line for listings and docs


# Every hook a port can provide, in the order kit_platform_init uses them. The C side is
# sdk/include/kit/hal.h; the default for each is chosen by hal_default().
HOOKS: tuple[Hook, ...] = (
    Hook("console", ("kit_hal_console_init", "kit_hal_console_putc"),
         "console: init and put one character (default from [console].kind)"),
    Hook("timer", ("kit_hal_timer_init", "kit_hal_cycles"),
         "cycle counter (default from [cpu].timer: SysTick or DWT)"),
    Hook("board_init", ("kit_hal_board_init",),
         "board init: clocks, pins, security (SAU/MPC/PPC) (default: nothing to do)"),
    Hook("cache", ("kit_hal_cache_init", "kit_hal_dcache_clean", "kit_hal_dcache_invalidate",
                   "kit_hal_dcache_clean_invalidate", "kit_hal_dcache_clean_invalidate_all"),
         "L1 cache enable and maintenance of NPU buffers (default from [cpu] dcache/icache)"),
    Hook("npu", ("kit_hal_npu_config",),
         "NPU base, IRQ, security and power-up (default: [npu] base/irq/secure/privileged)"),
    Hook("exit", ("kit_hal_exit",),
         "leave with an exit code (default: semihosting SYS_EXIT_EXTENDED, then park)"),
    Hook("fault", ("kit_hal_fault_report",),
         "report a fault (default: registers over the console, then exit 16)"),
)  # fmt: skip
HOOK_NAMES: tuple[str, ...] = tuple(h.name for h in HOOKS)


@dataclass(frozen=True)
class HalDefault:
    """The kit's implementation of a hook for this board's data, or why there is none."""

    sources: tuple[str, ...] = ()  # kit-relative C files
    include_dirs: tuple[str, ...] = ()  # kit-relative
    required_because: str = ""  # non-empty: the board must provide the hook


# Console kinds name UART IP blocks, not boards: Arm's CMSDK APB UART is a licensable
# peripheral in many SoCs, the PL011 another; which one a board has is its [console] data.
_CONSOLE_DEFAULTS: dict[ConsoleKind, HalDefault] = {
    ConsoleKind.CMSDK_APB: HalDefault(
        ("sdk/src/hal/console_uart.c", "drivers/uart_cmsdk/uart_cmsdk.c"),
        ("drivers/uart_cmsdk",),
    ),
    ConsoleKind.PL011: HalDefault(
        ("sdk/src/hal/console_uart.c", "drivers/uart_pl011/uart_pl011.c"),
        ("drivers/uart_pl011",),
    ),
    ConsoleKind.SEMIHOSTING: HalDefault(("sdk/src/hal/console_semihosting.c",)),
    ConsoleKind.NONE: HalDefault(("sdk/src/hal/console_none.c",)),
}
_TIMER_DEFAULTS: dict[TimerKind, HalDefault] = {
    TimerKind.SYSTICK: HalDefault(("sdk/src/hal/timer_systick.c",
                                   "drivers/timer_systick/systick.c"), ("drivers/timer_systick",)),
    TimerKind.DWT: HalDefault(("sdk/src/hal/timer_dwt.c", "drivers/timer_systick/systick.c"),
                      ("drivers/timer_systick",)),
}  # fmt: skip


def hal_default(board: Board, hook: str) -> HalDefault:
    """What the kit links for `hook` when the board's [port].hooks does not name it."""
    if hook == "console":
        kind = board.console.kind
        return _CONSOLE_DEFAULTS.get(
            kind, HalDefault(required_because=f'[console] kind = "{kind}"')
        )
    if hook == "timer":
        timer = board.cpu.timer
        return _TIMER_DEFAULTS.get(timer, HalDefault(required_because=f'[cpu] timer = "{timer}"'))
    if hook == "cache":
        cached = board.cpu.dcache or board.cpu.icache
        return HalDefault((f"sdk/src/hal/cache_{'l1' if cached else 'none'}.c",))
    if hook not in HOOK_NAMES:
        raise KeyError(hook)
    return HalDefault((f"sdk/src/hal/{hook}_default.c",))

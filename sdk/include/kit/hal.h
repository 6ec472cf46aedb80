/*
 * The HAL contract: every hook a board port provides, in one header.
 *
 * Each hook has a default in the kit, chosen from the board's data (board.toml) at
 * CMake configure time. A board replaces a hook by implementing ALL of its functions
 * in its own sources ([port].sources) and naming the hook in [port].hooks: the kit
 * then leaves its default out of the build. Nothing is weak, so a hook implemented
 * but not named is a "multiple definition" link error, and one named but not
 * implemented an "undefined reference": never a silent choice between the two.
 * A board whose data needs a hook with no default (console kind "custom", timer
 * "custom") and does not name it fails at configure time, naming the hook.
 *
 * Every function a port implements is named kit_hal_*, so a name tells a hook from the
 * kit's own API (docs/hal.md lists the names this version changed). Hook names (as
 * [port].hooks spells them) and their functions; the Python list is
 * ethosu_kit.board.HOOKS, docs/hal.md has the defaults in a table:
 *
 *   board_init  kit_hal_board_init
 *   console     kit_hal_console_init, kit_hal_console_putc
 *   timer       kit_hal_timer_init, kit_hal_cycles
 *   cache       kit_hal_cache_init, kit_hal_dcache_clean, kit_hal_dcache_invalidate,
 *               kit_hal_dcache_clean_invalidate, kit_hal_dcache_clean_invalidate_all
 *   npu         kit_hal_npu_config
 *   exit        kit_hal_exit
 *   fault       kit_hal_fault_report
 *
 * Order at start-up: Reset_Handler -> kit_hal_cache_init (after .data/.bss, before C++
 * constructors) -> main -> kit_platform_init: kit_hal_board_init, kit_hal_console_init,
 * kit_hal_timer_init, interrupts on, kit_hal_npu_config (when an NPU driver is linked).
 * The board facts the defaults use are the KIT_* macros of the generated
 * kit_board_config.h, which a port's sources may include too.
 */
#ifndef KIT_HAL_H
#define KIT_HAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- board_init --------------------------------------------------------------------
 * Clocks, pins (UART pin muxing), power domains and the security set-up (SAU regions,
 * MPC/PPC gates, non-secure aliases) the rest needs. Runs first in kit_platform_init,
 * before the console: it must not print. 0 on success; a failure is reported once the
 * console is up and kit_platform_init returns -2.
 * Default: nothing to do (the board comes out of reset usable). */
int kit_hal_board_init(void);

/* --- console -----------------------------------------------------------------------
 * Where kit_printf/printf output goes: the console (kit/console.h) hands
 * kit_hal_console_putc every byte as is, '\n' included: a UART implementation sends
 * "\r\n" for it, as terminals expect. kit_hal_console_putc is never called before
 * kit_hal_console_init returned 0.
 * Defaults, from [console].kind:
 *   cmsdk-apb    Arm CMSDK APB UART at KIT_CONSOLE_BASE (drivers/uart_cmsdk)
 *   pl011        Arm PL011 UART at KIT_CONSOLE_BASE (drivers/uart_pl011)
 *   semihosting  SYS_WRITEC to the debugger/emulator (a real board without a debugger
 *                attached stops at the first character: use it only under one)
 *   none         output discarded; no address is ever written
 *   custom       no default: the board provides the hook */
int kit_hal_console_init(void);
void kit_hal_console_putc(char c);

/* --- timer -------------------------------------------------------------------------
 * A free-running 64-bit CPU cycle counter, started by kit_hal_timer_init; may take
 * interrupts (kit_platform_init enables them after it). kit_cycles() (kit/timing.h)
 * counts from the first kit_hal_cycles() read after init.
 * Defaults, from [cpu].timer: systick (SysTick, 24-bit, wraps counted in its IRQ),
 * dwt (DWT CYCCNT, falling back to SysTick where the DWT does not count, e.g. QEMU). */
void kit_hal_timer_init(void);
uint64_t kit_hal_cycles(void);

/* --- cache -------------------------------------------------------------------------
 * kit_hal_cache_init enables the L1 caches the core has; the maintenance functions
 * keep NPU buffers coherent (the NPU's AXI masters do not snoop the CPU's data cache):
 * clean before the NPU reads what the CPU wrote, invalidate before the CPU reads what
 * the NPU wrote. Ranges are rounded out to KIT_CPU_DCACHE_LINE.
 * Defaults, from [cpu] dcache/icache/dcache_line: the Armv7-M/Armv8-M L1 cache
 * operations (Cortex-M7/M55/M85), or no-ops on a core without caches. */
void kit_hal_cache_init(void);
void kit_hal_dcache_clean(const void *addr, size_t size);
void kit_hal_dcache_invalidate(const void *addr, size_t size);
void kit_hal_dcache_clean_invalidate(const void *addr, size_t size);
/* The whole data cache, for callers that pass no range (the NPU driver may). */
void kit_hal_dcache_clean_invalidate_all(void);

/* --- npu ---------------------------------------------------------------------------
 * Where the Ethos-U is and how to talk to it, called once before ethosu_init. An
 * implementation may also power the NPU up, release its reset or gate its clock on.
 * Default: the [npu] data (KIT_NPU_BASE, KIT_NPU_IRQ, KIT_NPU_SECURE,
 * KIT_NPU_PRIVILEGED), nothing to power. 0 on success. */
typedef struct {
    uintptr_t base; /* register base the CPU uses (secure or non-secure alias) */
    unsigned irq;   /* external interrupt number (IRQn, not the vector index) */
    int secure;     /* the NPU's AXI transactions are secure */
    int privileged; /* ... and privileged */
} kit_hal_npu_t;
int kit_hal_npu_config(kit_hal_npu_t *npu);

/* --- exit --------------------------------------------------------------------------
 * Leave the program with `code` (0 = success; the kit's own codes are in
 * kit/platform.h). Default: semihosting SYS_EXIT_EXTENDED (an emulator or debugger exits
 * with the code), then park the core in WFE when nothing serviced it. */
__attribute__((noreturn)) void kit_hal_exit(int code);

/* --- fault -------------------------------------------------------------------------
 * A HardFault/MemManage/BusFault/UsageFault/SecureFault, an unhandled exception or
 * interrupt. `frame` is the stacked r0-r3, r12, lr, pc, xPSR, or NULL when there is
 * none (unhandled interrupt). Default: one "E: fault: ..." line on the console, then
 * kit_hal_exit(kit_app_result(KIT_EXIT_FAULT)) (kit/app.h: "kit: exit 16"). */
typedef struct {
    uint32_t exception;    /* IPSR: 3 HardFault, 4 MemManage, ..., 16 + n IRQ n */
    const uint32_t *frame; /* stacked frame, or NULL */
    uint32_t cfsr, hfsr, mmfar, bfar;
} kit_hal_fault_t;
__attribute__((noreturn)) void kit_hal_fault_report(const kit_hal_fault_t *fault);

#ifdef __cplusplus
}
#endif

#endif /* KIT_HAL_H */

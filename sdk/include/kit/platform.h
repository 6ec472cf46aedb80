/*
 * The platform layer every app links: one init call, logging to the board's console,
 * cycle counting, interrupts and an exit that an emulator turns into its exit code.
 * What a board port provides is the HAL contract (kit/hal.h, included here); the board
 * facts (console, clocks, NPU) come from the generated kit_board_config.h.
 */
#ifndef KIT_PLATFORM_H
#define KIT_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "kit/hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes: KIT_EXIT_OK, KIT_EXIT_FAULT, ... (one table, ethosu_kit/exit_codes.py). */
#include "kit_exit_codes.h"

/* Board init, console, timer, interrupts and (when a driver is linked) the NPU; the
 * caches and FPU/MVE are on before main. Returns 0, or a negative number naming the step
 * that failed: -1 console, -2 board init, -3 NPU (see the log). */
int kit_platform_init(void);

/* Fault exceptions on and the caches (kit_hal_cache_init): the kit's start-up calls it after
 * .data/.bss and before C++ constructors; a team's own start-up may call it there too. */
void kit_system_init(void);

/* The board's name ("corstone-300"), for banners. */
const char *kit_board_name(void);

/* A fault or an unexpected exception/interrupt: the registers to the HAL's fault hook
 * (kit_hal_fault_report, kit/hal.h); `frame` is the stacked frame or NULL. */
__attribute__((noreturn)) void kit_fault(const uint32_t *frame);

/* Interrupts: external IRQ n (not the vector index) to a handler with an argument.
 * kit_irq_register returns 0, -1 for an IRQ beyond the vector table, -2 when its
 * KIT_IRQ_SLOTS slots (default 4, sdk/src/irq.c) are taken. */
typedef void (*kit_irq_fn)(void *arg);
int kit_irq_register(unsigned irq, kit_irq_fn fn, void *arg);
void kit_irq_set_enabled(unsigned irq, int enabled);

/* NPU bring-up; a no-op returning 0 when no driver is linked. */
int kit_npu_init(void);
/* The driver handle (struct ethosu_driver *) or NULL without a driver. */
void *kit_npu_driver(void);

/* kit_hal_exit and the data cache maintenance (kit_hal_dcache_*) are HAL hooks: kit/hal.h. */

#ifdef __cplusplus
}
#endif

#endif /* KIT_PLATFORM_H */

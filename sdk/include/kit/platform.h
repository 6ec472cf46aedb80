/*
 * The platform layer every app links: one init call, logging to the board's UART,
 * cycle counting, interrupts and an exit that an emulator turns into its exit code.
 * The board facts (UART base, clocks, NPU) come from the generated kit_board_config.h.
 */
#ifndef KIT_PLATFORM_H
#define KIT_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes: KIT_EXIT_OK, KIT_EXIT_FAULT, ... (one table, ethosu_kit/exit_codes.py). */
#include "kit_exit_codes.h"

/* Caches, FPU/MVE, UART, timer, board specifics and (when a driver is linked) the NPU.
 * Returns 0, or a negative number naming the step that failed (see the log). */
int kit_platform_init(void);

/* The board's name ("corstone-300"), for banners. */
const char *kit_board_name(void);

/* Leave: semihosting SYS_EXIT_EXTENDED (an emulator exits with `code`), else spin. */
__attribute__((noreturn)) void kit_exit(int code);

/* Interrupts: external IRQ n (not the vector index) to a handler with an argument. */
typedef void (*kit_irq_fn)(void *arg);
int kit_irq_register(unsigned irq, kit_irq_fn fn, void *arg);
void kit_irq_set_enabled(unsigned irq, int enabled);

/* NPU bring-up; a no-op returning 0 when no driver is linked. */
int kit_npu_init(void);
/* The driver handle (struct ethosu_driver *) or NULL without a driver. */
void *kit_npu_driver(void);

/* Data cache maintenance over a range (no-op without a data cache). */
void kit_dcache_clean(const void *addr, size_t size);
void kit_dcache_invalidate(const void *addr, size_t size);
void kit_dcache_clean_invalidate(const void *addr, size_t size);
/* The whole data cache, for callers that pass no range (the NPU driver may). */
void kit_dcache_clean_invalidate_all(void);

#ifdef __cplusplus
}
#endif

#endif /* KIT_PLATFORM_H */

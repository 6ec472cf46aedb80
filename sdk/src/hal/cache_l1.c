/*
 * HAL cache default for a core with L1 caches (Cortex-M7, M55, M85): enable what
 * [cpu] dcache/icache say the core has, and maintain NPU buffers by address. The
 * registers are architectural (Armv7-M B3.2.8, Armv8-M B11.2); the line size is the
 * board's [cpu] dcache_line.
 */
#include <stdint.h>

#include "kit/cortex_m.h"
#include "kit/hal.h"
#include "kit_board_config.h"

typedef enum { SETWAY_INVALIDATE, SETWAY_CLEAN_INVALIDATE } setway_op_t;

#if KIT_CPU_HAS_DCACHE
/* Walk every set and way of the L1 data cache (CCSIDR geometry). */
static void dcache_setway(setway_op_t op)
{
    SCB_CSSELR = 0; /* level 1, data */
    kit_dsb();
    const uint32_t ccsidr = SCB_CCSIDR;
    const uint32_t sets = ((ccsidr >> 13) & 0x7FFFu) + 1u;
    const uint32_t ways = ((ccsidr >> 3) & 0x3FFu) + 1u;
    const uint32_t line_shift = (ccsidr & 0x7u) + 4u;
    const uint32_t way_shift = ways > 1u ? (uint32_t)__builtin_clz(ways - 1u) : 0u;
    for (uint32_t set = 0; set < sets; ++set) {
        for (uint32_t way = 0; way < ways; ++way) {
            const uint32_t sw = (ways > 1u ? way << way_shift : 0u) | (set << line_shift);
            if (op == SETWAY_INVALIDATE) {
                CACHE_DCISW = sw;
            } else {
                CACHE_DCCISW = sw;
            }
        }
    }
    kit_dsb();
    kit_isb();
}
#endif

void kit_hal_cache_init(void)
{
#if KIT_CPU_HAS_ICACHE
    kit_dsb();
    kit_isb();
    CACHE_ICIALLU = 0;
    kit_dsb();
    kit_isb();
    SCB_CCR |= SCB_CCR_IC;
    kit_dsb();
    kit_isb();
#endif
#if KIT_CPU_HAS_DCACHE
    dcache_setway(SETWAY_INVALIDATE);
    SCB_CCR |= SCB_CCR_DC;
    kit_dsb();
    kit_isb();
#endif
}

static int dcache_on(void) { return KIT_CPU_HAS_DCACHE && (SCB_CCR & SCB_CCR_DC) != 0u; }

static void dcache_range(volatile uint32_t *op, const void *addr, size_t size)
{
    if (!dcache_on() || size == 0u) {
        return;
    }
    uintptr_t line = (uintptr_t)addr & ~(uintptr_t)(KIT_CPU_DCACHE_LINE - 1u);
    const uintptr_t end = (uintptr_t)addr + size;
    kit_dsb();
    for (; line < end; line += KIT_CPU_DCACHE_LINE) {
        *op = (uint32_t)line;
    }
    kit_dsb();
    kit_isb();
}

void kit_hal_dcache_clean(const void *addr, size_t size)
{
    dcache_range(&CACHE_DCCMVAC, addr, size);
}

void kit_hal_dcache_invalidate(const void *addr, size_t size)
{
    dcache_range(&CACHE_DCIMVAC, addr, size);
}

void kit_hal_dcache_clean_invalidate(const void *addr, size_t size)
{
    dcache_range(&CACHE_DCCIMVAC, addr, size);
}

void kit_hal_dcache_clean_invalidate_all(void)
{
#if KIT_CPU_HAS_DCACHE
    if (dcache_on()) {
        dcache_setway(SETWAY_CLEAN_INVALIDATE);
    }
#endif
}

#include "kit/timing.h"

#include "kit/armv8m.h"
#include "kit_board_config.h"
#include "systick.h"

static int dwt_works;
static uint32_t dwt_last;
static uint64_t dwt_high;

void kit_timing_init(void)
{
    DCB_DEMCR |= DCB_DEMCR_TRCENA;
    kit_dsb();
    dwt_works = 0;
    if ((DWT_CTRL & DWT_CTRL_NOCYCCNT) == 0u) {
        DWT_CYCCNT = 0;
        DWT_CTRL |= DWT_CTRL_CYCCNTENA;
        const uint32_t a = DWT_CYCCNT;
        for (volatile int i = 0; i < 16; ++i) {
        }
        /* An emulator without a DWT reads zero: fall back to SysTick. */
        dwt_works = DWT_CYCCNT != a;
    }
    dwt_last = 0;
    dwt_high = 0;
    kit_systick_start();
}

uint64_t kit_cycles(void)
{
    if (!dwt_works) {
        return kit_systick_cycles();
    }
    /* Extend the 32-bit counter: correct while reads come at least every 2^32 cycles. */
    const uint32_t now = DWT_CYCCNT;
    if (now < dwt_last) {
        dwt_high += 1ull << 32;
    }
    dwt_last = now;
    return dwt_high | now;
}

uint32_t kit_cpu_clock_hz(void) { return KIT_CPU_CLOCK_HZ; }

uint64_t kit_cycles_to_us(uint64_t cycles) { return cycles * 1000000ull / KIT_CPU_CLOCK_HZ; }

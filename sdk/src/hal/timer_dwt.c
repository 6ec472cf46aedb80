/*
 * HAL timer default for [cpu] timer = "dwt": the DWT cycle counter extended to 64 bits,
 * and SysTick where the DWT does not count (QEMU models SysTick but not the DWT).
 */
#include "kit/cortex_m.h"
#include "kit/hal.h"
#include "systick.h"

static int dwt_works;
static uint32_t dwt_last;
static uint64_t dwt_high;

void kit_hal_timer_init(void)
{
    DCB_DEMCR |= DCB_DEMCR_TRCENA;
    kit_dsb();
#if __ARM_ARCH == 7
    DWT_LAR = DWT_LAR_UNLOCK; /* Cortex-M7: CYCCNT writes are ignored while locked */
#endif
    dwt_works = 0;
    if ((DWT_CTRL & DWT_CTRL_NOCYCCNT) == 0u) {
        DWT_CYCCNT = 0;
        DWT_CTRL |= DWT_CTRL_CYCCNTENA;
        const uint32_t a = DWT_CYCCNT;
        for (volatile int i = 0; i < 16; ++i) {
        }
        dwt_works = DWT_CYCCNT != a; /* an emulator without a DWT reads zero */
    }
    dwt_last = 0;
    dwt_high = 0;
    if (!dwt_works) {
        kit_systick_start();
    }
}

uint64_t kit_hal_cycles(void)
{
    if (!dwt_works) {
        return kit_systick_cycles();
    }
    /* Correct while reads come at least every 2^32 cycles. */
    const uint32_t now = DWT_CYCCNT;
    if (now < dwt_last) {
        dwt_high += 1ull << 32;
    }
    dwt_last = now;
    return dwt_high | now;
}

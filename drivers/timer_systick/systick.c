#include "systick.h"

#include "kit/armv8m.h"

#define SYSTICK_RELOAD 0x00FFFFFFu /* the counter is 24 bits wide */

static volatile uint64_t wraps;

void kit_systick_start(void)
{
    wraps = 0;
    SYST_RVR = SYSTICK_RELOAD;
    SYST_CVR = 0;
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_TICKINT | SYST_CSR_CLKSOURCE;
}

void SysTick_Handler(void) { wraps = wraps + 1u; }

uint64_t kit_systick_cycles(void)
{
    uint64_t high;
    uint32_t low;
    /* Re-read when the IRQ moved `wraps` under us (needs IRQs enabled to count wraps). */
    do {
        high = wraps;
        low = SYST_CVR;
    } while (high != wraps);
    return high * (uint64_t)(SYSTICK_RELOAD + 1u) + (uint64_t)(SYSTICK_RELOAD - low);
}

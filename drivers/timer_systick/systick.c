#include "systick.h"

#include "kit/cortex_m.h"

#define SYSTICK_RELOAD 0x00FFFFFFu /* the counter is 24 bits wide */

static volatile uint64_t wraps;
static int reloaded; /* CVR has been loaded from RVR since kit_systick_start */

/* Spins at most this long for the first reload (it comes on the next clock edge). */
#define SYSTICK_FIRST_RELOAD_SPINS 100000u

void kit_systick_start(void)
{
    wraps = 0;
    reloaded = 0;
    SYST_RVR = SYSTICK_RELOAD;
    SYST_CVR = 0;
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_TICKINT | SYST_CSR_CLKSOURCE;
    /* Writing CVR clears it, and the counter holds 0 until the next clock loads RVR,
     * without a wrap: a read in between would count a full period that never
     * happened, and the next read would be 2^24 cycles *earlier* (the bring-up
     * printed 4278430329 cycles for a few thousand). Wait for that first reload; an
     * emulator may take longer (QEMU reloads in a host timer callback), so the reader
     * below also counts nothing until it has seen it. */
    for (uint32_t i = 0; i < SYSTICK_FIRST_RELOAD_SPINS && SYST_CVR == 0u; ++i) {
    }
}

void kit_systick_wrap(void) { wraps = wraps + 1u; }

/* Weak: a team's start-up, RTOS or HAL with a SysTick_Handler of its own links over it
 * (no `multiple definition`) and calls kit_systick_wrap() from it (docs/team-tree.md). */
__attribute__((weak)) void SysTick_Handler(void) { kit_systick_wrap(); }

uint64_t kit_systick_cycles(void)
{
    /* With IRQs masked, a wrap shows as a pending SysTick (ICSR.PENDSTSET) that `wraps`
     * has not counted yet; re-reading the counter after seeing it pending gives a value
     * from after that wrap, so time never runs backwards by one period. */
    uint32_t primask;
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
    uint64_t high = wraps;
    uint32_t low = SYST_CVR;
    if (!reloaded) {
        if (low == 0u && high == 0u) {
            __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
            return 0; /* not counting yet: CVR still holds the 0 the start wrote */
        }
        reloaded = 1;
    }
    if ((SCB_ICSR & SCB_ICSR_PENDSTSET) != 0u) {
        low = SYST_CVR;
        high += 1u;
    }
    __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
    return high * (uint64_t)(SYSTICK_RELOAD + 1u) + (uint64_t)(SYSTICK_RELOAD - low);
}

/* Core set-up after the copy/zero tables, before C++ constructors: fault reporting, caches. */
#include "kit/cortex_m.h"
#include "kit/hal.h"
#include "kit/platform.h"

void kit_system_init(void)
{
    /* MemManage, BusFault, UsageFault as their own exceptions (else all are HardFaults). */
    SCB_SHCSR |= SCB_SHCSR_FAULTS_ENA;
    kit_hal_cache_init();
}

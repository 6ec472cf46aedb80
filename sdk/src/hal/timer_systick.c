/* HAL timer default for [cpu] timer = "systick": SysTick extended to 64 bits. */
#include "kit/hal.h"
#include "systick.h"

void kit_hal_timer_init(void) { kit_systick_start(); }

uint64_t kit_hal_cycles(void) { return kit_systick_cycles(); }

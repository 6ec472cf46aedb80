/* Cycle counting on the HAL's timer hook (kit/hal.h: SysTick, DWT or the board's own). */
#include "kit/timing.h"

#include "kit/hal.h"
#include "kit_board_config.h"

void kit_timing_init(void) { kit_hal_timer_init(); }

uint64_t kit_cycles(void) { return kit_hal_cycles(); }

uint32_t kit_cpu_clock_hz(void) { return KIT_CPU_CLOCK_HZ; }

uint64_t kit_cycles_to_us(uint64_t cycles) { return cycles * 1000000ull / KIT_CPU_CLOCK_HZ; }

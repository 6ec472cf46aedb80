/*
 * Time: CPU cycles from the DWT cycle counter where it runs, else a 64-bit count
 * extended from SysTick (QEMU models SysTick but not the DWT).
 */
#ifndef KIT_TIMING_H
#define KIT_TIMING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void kit_timing_init(void);
uint64_t kit_cycles(void);       /* CPU cycles since kit_timing_init */
uint32_t kit_cpu_clock_hz(void); /* the board's CPU clock */
uint64_t kit_cycles_to_us(uint64_t cycles);

#ifdef __cplusplus
}
#endif

#endif /* KIT_TIMING_H */

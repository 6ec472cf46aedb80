/* SysTick as a free-running 64-bit cycle counter: reload at 2^24 - 1, count wraps in the IRQ. */
#ifndef KIT_SYSTICK_H
#define KIT_SYSTICK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void kit_systick_start(void);
uint64_t kit_systick_cycles(void);
void SysTick_Handler(void);

#ifdef __cplusplus
}
#endif

#endif /* KIT_SYSTICK_H */

/* SysTick as a free-running 64-bit cycle counter: reload at 2^24 - 1, count wraps in the IRQ. */
#ifndef KIT_SYSTICK_H
#define KIT_SYSTICK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void kit_systick_start(void);
uint64_t kit_systick_cycles(void);
/* One wrap of the 24-bit counter: what the kit's (weak) SysTick_Handler does. A
 * SysTick_Handler of your own, which replaces it, calls this once per interrupt while
 * the kit's timer runs on SysTick, or the cycle counts lose 2^24 cycles a wrap. */
void kit_systick_wrap(void);
void SysTick_Handler(void);

#ifdef __cplusplus
}
#endif

#endif /* KIT_SYSTICK_H */

/* Arm CMSDK APB UART (transmit side): the console of the Corstone FPGA images and QEMU mps3. */
#ifndef KIT_UART_CMSDK_H
#define KIT_UART_CMSDK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* BAUDDIV and TX enable must be set before the first write, or polling TX-full hangs. */
int kit_uart_cmsdk_init(uintptr_t base, uint32_t clock_hz, uint32_t baud);
void kit_uart_cmsdk_putc(uintptr_t base, char c);

#ifdef __cplusplus
}
#endif

#endif /* KIT_UART_CMSDK_H */

/* Arm PrimeCell UART (PL011), transmit side: the console of many SoCs and of QEMU's virt.
 * Called from the kit's C console (sdk/src/hal/console_uart.c) only. */
#ifndef KIT_UART_PL011_H
#define KIT_UART_PL011_H

#include <stdint.h>

/* 8N1 at `baud` from the UART reference clock `clock_hz`, FIFOs on, transmit enabled.
 * -1 when the divisor does not fit (baud 0, or a clock too slow or too fast for it). */
int kit_uart_pl011_init(uintptr_t base, uint32_t clock_hz, uint32_t baud);

/* Waits while the transmit FIFO is full, then queues `c` (no CR/LF translation). */
void kit_uart_pl011_putc(uintptr_t base, char c);

#endif /* KIT_UART_PL011_H */

/* Arm PrimeCell UART (PL011), from its Technical Reference Manual (ARM DDI 0183), ch. 3. */
#include "uart_pl011.h"

#define UART_DR(b) (*(volatile uint32_t *)((b) + 0x000u))
#define UART_FR(b) (*(volatile uint32_t *)((b) + 0x018u))
#define UART_IBRD(b) (*(volatile uint32_t *)((b) + 0x024u))
#define UART_FBRD(b) (*(volatile uint32_t *)((b) + 0x028u))
#define UART_LCR_H(b) (*(volatile uint32_t *)((b) + 0x02Cu))
#define UART_CR(b) (*(volatile uint32_t *)((b) + 0x030u))
#define UART_IMSC(b) (*(volatile uint32_t *)((b) + 0x038u))

#define UART_FR_BUSY (1u << 3)
#define UART_FR_TXFF (1u << 5)
#define UART_LCR_H_FEN (1u << 4)
#define UART_LCR_H_WLEN_8 (3u << 5)
#define UART_CR_UARTEN (1u << 0)
#define UART_CR_TXE (1u << 8)

int kit_uart_pl011_init(uintptr_t base, uint32_t clock_hz, uint32_t baud)
{
    if (baud == 0u) {
        return -1;
    }
    /* Divisor = clock / (16 * baud) as 16.6 fixed point, rounded (TRM 3.3.6). */
    const uint64_t div64 = ((uint64_t)clock_hz * 4u + baud / 2u) / baud;
    const uint32_t ibrd = (uint32_t)(div64 >> 6);
    const uint32_t fbrd = (uint32_t)(div64 & 0x3Fu);
    if (ibrd == 0u || ibrd > 0xFFFFu) {
        return -1;
    }
    UART_CR(base) = 0; /* disable while reprogramming */
    while ((UART_FR(base) & UART_FR_BUSY) != 0u) {
    }
    UART_IMSC(base) = 0;
    UART_IBRD(base) = ibrd;
    UART_FBRD(base) = fbrd;
    UART_LCR_H(base) = UART_LCR_H_WLEN_8 | UART_LCR_H_FEN; /* the LCR_H write latches the divisor */
    UART_CR(base) = UART_CR_UARTEN | UART_CR_TXE;
    return 0;
}

void kit_uart_pl011_putc(uintptr_t base, char c)
{
    while ((UART_FR(base) & UART_FR_TXFF) != 0u) {
    }
    UART_DR(base) = (uint32_t)(unsigned char)c;
}

/* CMSDK APB UART, from the Cortex-M System Design Kit TRM (ARM DDI 0479), "UART". */
#include "uart_cmsdk.h"

#define UART_DATA(b) (*(volatile uint32_t *)((b) + 0x00u))
#define UART_STATE(b) (*(volatile uint32_t *)((b) + 0x04u))
#define UART_CTRL(b) (*(volatile uint32_t *)((b) + 0x08u))
#define UART_BAUDDIV(b) (*(volatile uint32_t *)((b) + 0x10u))

#define UART_STATE_TX_FULL (1u << 0)
#define UART_CTRL_TX_EN (1u << 0)
#define UART_BAUDDIV_MIN 16u /* the TRM's lower bound */

int kit_uart_cmsdk_init(uintptr_t base, uint32_t clock_hz, uint32_t baud)
{
    if (baud == 0u) {
        return -1;
    }
    uint32_t div = clock_hz / baud;
    if (div < UART_BAUDDIV_MIN) {
        div = UART_BAUDDIV_MIN;
    }
    UART_BAUDDIV(base) = div;
    UART_CTRL(base) = UART_CTRL_TX_EN;
    return 0;
}

void kit_uart_cmsdk_putc(uintptr_t base, char c)
{
    while ((UART_STATE(base) & UART_STATE_TX_FULL) != 0u) {
    }
    UART_DATA(base) = (uint32_t)(unsigned char)c;
}

/*
 * HAL console default for the UART kinds the kit has a driver for, chosen by the
 * board's [console] kind: "cmsdk-apb" (drivers/uart_cmsdk) or "pl011" (drivers/uart_pl011),
 * at KIT_CONSOLE_BASE with KIT_CONSOLE_CLOCK_HZ and KIT_CONSOLE_BAUD.
 */
#include <stdint.h>

#include "kit/hal.h"
#include "kit_board_config.h"

#if defined(KIT_CONSOLE_CMSDK_APB)
#include "uart_cmsdk.h"
#define UART_INIT kit_uart_cmsdk_init
#define UART_PUTC kit_uart_cmsdk_putc
#elif defined(KIT_CONSOLE_PL011)
#include "uart_pl011.h"
#define UART_INIT kit_uart_pl011_init
#define UART_PUTC kit_uart_pl011_putc
#else
#error "console_uart.c is for [console] kind cmsdk-apb or pl011"
#endif

int kit_hal_console_init(void)
{
    return UART_INIT((uintptr_t)KIT_CONSOLE_BASE, KIT_CONSOLE_CLOCK_HZ, KIT_CONSOLE_BAUD);
}

void kit_hal_console_putc(char c)
{
    if (c == '\n') {
        UART_PUTC((uintptr_t)KIT_CONSOLE_BASE, '\r'); /* terminals expect CR LF */
    }
    UART_PUTC((uintptr_t)KIT_CONSOLE_BASE, c);
}

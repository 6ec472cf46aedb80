/*
 * The MPS2 AN500's console, written by the board rather than taken from the kit: the
 * HAL hook "console" (sdk/include/kit/hal.h), named in board.toml's [port].hooks so the
 * kit leaves its own console out. UART0 is an Arm CMSDK APB UART (ARM DDI 0479).
 */
#include <stdint.h>

#include "kit/hal.h"
#include "kit_board_config.h"

#define UART0_BASE KIT_GLUE_UART0_BASE /* board.toml [glue], via kit_board_config.h */
#define UART_DATA (*(volatile uint32_t *)(UART0_BASE + 0x00u))
#define UART_STATE (*(volatile uint32_t *)(UART0_BASE + 0x04u))
#define UART_CTRL (*(volatile uint32_t *)(UART0_BASE + 0x08u))
#define UART_BAUDDIV (*(volatile uint32_t *)(UART0_BASE + 0x10u))
#define UART_STATE_TX_FULL (1u << 0)
#define UART_CTRL_TX_EN (1u << 0)

int kit_hal_console_init(void)
{
    UART_BAUDDIV = KIT_CPU_CLOCK_HZ / KIT_GLUE_UART0_BAUD; /* the UART runs on the CPU clock */
    UART_CTRL = UART_CTRL_TX_EN;
    return 0;
}

void kit_hal_console_putc(char c)
{
    if (c == '\n') {
        kit_hal_console_putc('\r');
    }
    while ((UART_STATE & UART_STATE_TX_FULL) != 0u) {
    }
    UART_DATA = (uint32_t)(unsigned char)c;
}

#include "kit/platform.h"

#include <stdint.h>

#include "kit/armv8m.h"
#include "kit/log.h"
#include "kit/semihosting.h"
#include "kit/timing.h"
#include "kit_board_config.h"
#include "uart_cmsdk.h"

/* Per board (boards/<board>/board.c): whatever differs between SoCs. */
int kit_board_init(void);

static int uart_ready;

int kit_platform_init(void)
{
    if (kit_uart_cmsdk_init((uintptr_t)KIT_UART_BASE, KIT_UART_CLOCK_HZ, KIT_UART_BAUD) != 0) {
        return -1;
    }
    uart_ready = 1;
    kit_timing_init();
    kit_irq_enable_all(); /* SysTick counts wraps in its IRQ */
    if (kit_board_init() != 0) {
        KIT_LOG_ERROR("board init failed (%s)\n", KIT_BOARD_NAME);
        return -2;
    }
    if (kit_npu_init() != 0) {
        KIT_LOG_ERROR("NPU init failed at 0x%08x\n", (unsigned)KIT_NPU_BASE);
        return -3;
    }
    return 0;
}

const char *kit_board_name(void) { return KIT_BOARD_NAME; }

void kit_putc(char c)
{
    if (!uart_ready) {
        return; /* before init there is nowhere to write */
    }
    if (c == '\n') {
        kit_uart_cmsdk_putc((uintptr_t)KIT_UART_BASE, '\r');
    }
    kit_uart_cmsdk_putc((uintptr_t)KIT_UART_BASE, c);
}

void kit_exit(int code)
{
    kit_semihost_exit(code);
    for (;;) { /* no host to tell: park the core */
        kit_wfe();
    }
}

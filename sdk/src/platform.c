/* kit_platform_init and the console: the board-independent half of the HAL (kit/hal.h). */
#include "kit/platform.h"

#include <stdint.h>

#include "kit/armv8m.h"
#include "kit/hal.h"
#include "kit/log.h"
#include "kit/timing.h"
#include "kit_board_config.h"

static int console_ready;

int kit_platform_init(void)
{
    /* Clocks, pins and security first: the console may need all three. */
    const int board = kit_board_init();
    if (kit_hal_console_init() != 0) {
        return -1;
    }
    console_ready = 1;
    if (board != 0) {
        KIT_LOG_ERROR("board init failed (%s): %d\n", KIT_BOARD_NAME, board);
        return -2;
    }
    kit_timing_init();
    kit_irq_enable_all(); /* a timer may count wraps in its IRQ */
    if (kit_npu_init() != 0) {
        KIT_LOG_ERROR("NPU init failed at 0x%08x\n", (unsigned)KIT_NPU_BASE);
        return -3;
    }
    return 0;
}

const char *kit_board_name(void) { return KIT_BOARD_NAME; }

void kit_putc(char c)
{
    if (console_ready) { /* before init there is nowhere to write */
        kit_hal_console_putc(c);
    }
}

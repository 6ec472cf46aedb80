/* kit_platform_init: the start-up sequence over the HAL hooks (kit/hal.h), in one place. */
#include "kit/platform.h"

#include <stdint.h>

#include "kit/console.h"
#include "kit/cortex_m.h"
#include "kit/hal.h"
#include "kit/log.h"
#include "kit/timing.h"
#include "kit_board_config.h"

int kit_platform_init(void)
{
    /* Clocks, pins and security first: the console may need all three. */
    const int board = kit_hal_board_init();
    if (kit_hal_console_init() != 0) {
        return -1;
    }
    kit_console_ready();
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

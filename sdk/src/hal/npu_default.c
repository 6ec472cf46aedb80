/* HAL npu default: the [npu] facts of board.toml; nothing to power up. */
#include <stdint.h>

#include "kit/hal.h"
#include "kit_board_config.h"

int kit_hal_npu_config(kit_hal_npu_t *npu)
{
    npu->base = (uintptr_t)KIT_NPU_BASE;
    npu->irq = KIT_NPU_IRQ;
    npu->secure = KIT_NPU_SECURE;
    npu->privileged = KIT_NPU_PRIVILEGED;
    return 0;
}

/* HAL board_init default: a board that comes out of reset usable needs nothing here. */
#include "kit/hal.h"

int kit_hal_board_init(void) { return 0; }

/* HAL console default for [console] kind = "none": output is discarded, nothing is written. */
#include "kit/hal.h"

int kit_hal_console_init(void) { return 0; }

void kit_hal_console_putc(char c) { (void)c; }

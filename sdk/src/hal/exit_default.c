/* HAL exit default: semihosting SYS_EXIT_EXTENDED, so an emulator exits with the code. */
#include "kit/cortex_m.h"
#include "kit/hal.h"
#include "kit/semihosting.h"

void kit_hal_exit(int code)
{
    kit_semihost_exit(code);
    for (;;) { /* no host to tell: park the core */
        kit_wfe();
    }
}

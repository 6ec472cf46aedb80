/*
 * HAL console default for [console] kind = "semihosting": each character through
 * SYS_WRITEC to the debugger or emulator (QEMU: -semihosting-config enable=on). Without
 * one attached, the BKPT stops the core at the first character: use it under a host.
 */
#include "kit/hal.h"
#include "kit/semihosting.h"

int kit_hal_console_init(void) { return 0; }

void kit_hal_console_putc(char c) { kit_semihost_writec(c); }

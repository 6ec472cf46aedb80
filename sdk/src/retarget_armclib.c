/*
 * Arm Compiler 6's C library hooks (what syscalls.c is for newlib): stdout to the UART,
 * exit through the kit's semihosting exit, no semihosted stdio.
 */
#if defined(__ARMCC_VERSION)
#include <stdio.h>

#include "kit/console.h"
#include "kit/platform.h"

__asm(".global __use_no_semihosting");

void _sys_exit(int code);
void _ttywrch(int c);
int fputc(int c, FILE *f);

void _sys_exit(int code) { kit_hal_exit(code); }

void _ttywrch(int c) { kit_putc((char)c); }

int fputc(int c, FILE *f)
{
    (void)f;
    kit_putc((char)c);
    return c;
}
#else
typedef int kit_retarget_armclib_unused; /* ISO C forbids an empty translation unit */
#endif

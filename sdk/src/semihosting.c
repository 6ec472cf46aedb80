#include "kit/semihosting.h"

#include <stdint.h>

#define SH_SYS_WRITEC 0x03u
#define SH_SYS_EXIT_EXTENDED 0x20u
#define SH_ADP_STOPPED_APPLICATION_EXIT 0x20026u

volatile int kit_semihost_active;

static void semihost_call(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm("r0") = op;
    register const void *r1 __asm("r1") = arg;
    kit_semihost_active = 1;
    __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    kit_semihost_active = 0;
}

void kit_semihost_exit(int code)
{
    /* Block form: plain SYS_EXIT can only say 0 or 1 on AArch32. */
    const uint32_t block[2] = {SH_ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
    semihost_call(SH_SYS_EXIT_EXTENDED, block);
}

void kit_semihost_writec(char c) { semihost_call(SH_SYS_WRITEC, &c); }

#include "kit/semihosting_files.h"

#include <stdint.h>
#include <string.h>

#ifndef KIT_HOST_IO
#define KIT_HOST_IO 1
#endif

#define SH_SYS_OPEN 0x01u
#define SH_SYS_CLOSE 0x02u
#define SH_SYS_WRITE 0x05u
#define SH_SYS_READ 0x06u
#define SH_SYS_FLEN 0x0Cu
#define SH_SYS_GET_CMDLINE 0x15u

extern volatile int kit_semihost_active; /* sdk/src/semihosting.c */

static int32_t call(uint32_t op, void *block)
{
#if KIT_HOST_IO
    register uint32_t r0 __asm("r0") = op;
    register void *r1 __asm("r1") = block;
    kit_semihost_active = 1;
    __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    kit_semihost_active = 0;
    return (int32_t)r0;
#else
    (void)op;
    (void)block;
    return -1;
#endif
}

int kit_semihost_cmdline(char *buf, size_t size)
{
    if (buf == NULL || size < 2u) {
        return -1;
    }
    uint32_t block[2] = {(uint32_t)(uintptr_t)buf, (uint32_t)(size - 1u)};
    buf[0] = '\0';
    if (call(SH_SYS_GET_CMDLINE, block) != 0) {
        buf[0] = '\0';
        return -1;
    }
    buf[block[1] < size ? block[1] : size - 1u] = '\0';
    return 0;
}

int kit_semihost_has_arg(const char *cmdline, const char *word)
{
    const size_t n = strlen(word);
    for (const char *p = cmdline; p != NULL && *p != '\0';) {
        while (*p == ' ') {
            ++p;
        }
        const char *end = strchr(p, ' ');
        const size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) {
            return 1;
        }
        p = end;
    }
    return 0;
}

int kit_semihost_open(const char *name, const char *mode)
{
    /* fopen modes in the order semihosting numbers them */
    static const char *const modes[] = {"r",  "rb",  "r+", "r+b", "w",  "wb",
                                        "w+", "w+b", "a",  "ab",  "a+", "a+b"};
    for (uint32_t m = 0; m < sizeof(modes) / sizeof(modes[0]); ++m) {
        if (strcmp(mode, modes[m]) == 0) {
            uint32_t block[3] = {(uint32_t)(uintptr_t)name, m, (uint32_t)strlen(name)};
            return call(SH_SYS_OPEN, block);
        }
    }
    return -1;
}

int kit_semihost_close(int handle)
{
    uint32_t block[1] = {(uint32_t)handle};
    return call(SH_SYS_CLOSE, block);
}

long kit_semihost_flen(int handle)
{
    uint32_t block[1] = {(uint32_t)handle};
    return (long)call(SH_SYS_FLEN, block);
}

int kit_semihost_at_end(int handle)
{
    uint8_t byte = 0;
    uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)&byte, 1u};
    const int32_t not_read = call(SH_SYS_READ, block); /* the bytes NOT read: 1 at the end */
    return not_read == 1 ? 1 : not_read == 0 ? 0 : -1;
}

int kit_semihost_read(int handle, void *buf, size_t size)
{
    uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)buf, (uint32_t)size};
    return call(SH_SYS_READ, block) == 0 ? 0 : -1; /* returns the bytes NOT read */
}

int kit_semihost_write(int handle, const void *buf, size_t size)
{
    uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)buf, (uint32_t)size};
    return call(SH_SYS_WRITE, block) == 0 ? 0 : -1; /* returns the bytes NOT written */
}

/*
 * Arm semihosting file I/O and the command line (Semihosting v3, AArch32), for apps that
 * exchange data with the host (docs/running.md: `ethosu-kit run --inputs … -o …`).
 *
 * Each call is a BKPT 0xAB the debugger or emulator services; on hardware without one
 * it faults, so an image for such a board is built with ETHOSU_KIT_HOST_IO=OFF
 * (KIT_HOST_IO 0), and then these return -1 without trapping.
 */
#ifndef KIT_SEMIHOSTING_FILES_H
#define KIT_SEMIHOSTING_FILES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* SYS_GET_CMDLINE into buf (NUL-terminated); 0, or -1 when there is none. */
int kit_semihost_cmdline(char *buf, size_t size);
/* 1 when `word` is one of the command line's space-separated words. */
int kit_semihost_has_arg(const char *cmdline, const char *word);
/* SYS_OPEN with an fopen mode ("rb", "wb"): a handle >= 0, or -1. */
int kit_semihost_open(const char *name, const char *mode);
int kit_semihost_close(int handle);
/* SYS_FLEN: the file's length, or -1 (also where the host cannot tell: QEMU 7.2 whose
 * semihosting GDB serves answers -1 for every non-empty file). */
long kit_semihost_flen(int handle);
/* 1 when the file has no byte left at its position (a SYS_READ of one byte moves none),
 * 0 when it has, -1 on an error: how a length is checked where SYS_FLEN cannot say. */
int kit_semihost_at_end(int handle);
/* SYS_READ / SYS_WRITE of exactly `size` bytes: 0, or -1 when fewer were moved. */
int kit_semihost_read(int handle, void *buf, size_t size);
int kit_semihost_write(int handle, const void *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* KIT_SEMIHOSTING_FILES_H */

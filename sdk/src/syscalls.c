/*
 * newlib's system calls for a bare-metal app: stdout/stderr go to the UART, the
 * heap is the plan's kit_heap buffer (bounded by the linker script's __HeapBase /
 * __HeapLimit), and _exit is the kit's exit so that exit(n) reaches the emulator.
 */
#if !defined(__ARMCC_VERSION) /* newlib only; retarget_armclib.c serves Arm Compiler 6 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "kit/console.h"
#include "kit/platform.h"

extern uint8_t __HeapBase[];
extern uint8_t __HeapLimit[];

int _write(int fd, const char *buf, int len);
int _read(int fd, char *buf, int len);
int _close(int fd);
int _lseek(int fd, int offset, int whence);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
int _kill(int pid, int sig);
int _getpid(void);
void *_sbrk(ptrdiff_t incr);
void _exit(int code);
size_t kit_heap_used(void);

static uint8_t *heap_end;

int _write(int fd, const char *buf, int len)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    kit_write(buf, (size_t)len);
    return len;
}

int _read(int fd, char *buf, int len)
{
    (void)fd;
    (void)buf;
    (void)len;
    return 0;
}

int _close(int fd)
{
    (void)fd;
    return -1;
}

int _lseek(int fd, int offset, int whence)
{
    (void)fd;
    (void)offset;
    (void)whence;
    return 0;
}

int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd) { return fd >= 0 && fd <= 2; }

int _kill(int pid, int sig)
{
    (void)pid;
    (void)sig;
    errno = EINVAL;
    return -1;
}

int _getpid(void) { return 1; }

void *_sbrk(ptrdiff_t incr)
{
    if (heap_end == NULL) {
        heap_end = __HeapBase;
    }
    if (incr > __HeapLimit - heap_end || incr < __HeapBase - heap_end) {
        errno = ENOMEM;
        return (void *)-1;
    }
    uint8_t *prev = heap_end;
    heap_end += incr;
    return prev;
}

size_t kit_heap_used(void) { return heap_end == NULL ? 0u : (size_t)(heap_end - __HeapBase); }

void _exit(int code) { kit_hal_exit(code); }
#endif

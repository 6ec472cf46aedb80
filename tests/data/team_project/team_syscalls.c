/* The team's own C-library glue: malloc's heap is the plan's heap (kit_sections.ld's
 * symbols); the other syscalls are newlib's nosys stubs (--specs=nosys.specs). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern uint8_t __kit_heap_base[], __kit_heap_limit[];

void *_sbrk(ptrdiff_t incr);

void *_sbrk(ptrdiff_t incr)
{
    static uint8_t *brk = __kit_heap_base;
    uint8_t *const old = brk;
    if (incr < 0 || incr > __kit_heap_limit - old) { /* this team never gives memory back */
        errno = ENOMEM;
        return (void *)-1;
    }
    brk = old + incr;
    return old;
}

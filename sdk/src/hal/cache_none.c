/* HAL cache default for a core without L1 caches ([cpu] dcache = icache = false). */
#include "kit/hal.h"

void kit_hal_cache_init(void) {}

void kit_hal_dcache_clean(const void *addr, size_t size)
{
    (void)addr;
    (void)size;
}

void kit_hal_dcache_invalidate(const void *addr, size_t size)
{
    (void)addr;
    (void)size;
}

void kit_hal_dcache_clean_invalidate(const void *addr, size_t size)
{
    (void)addr;
    (void)size;
}

void kit_hal_dcache_clean_invalidate_all(void) {}

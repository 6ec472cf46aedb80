#include "kit/alloc.h"

#include "kit/log.h"

void kit_bump_init(kit_bump_t *pool, const char *name, void *base, size_t size)
{
    pool->name = name;
    pool->base = (uint8_t *)base;
    pool->size = size;
    pool->used = 0;
    pool->peak = 0;
}

void *kit_bump_alloc(kit_bump_t *pool, size_t size, size_t align)
{
    if (align == 0u || (align & (align - 1u)) != 0u) {
        KIT_LOG_ERROR("%s: alignment %zu is not a power of two\n", pool->name, align);
        return NULL;
    }
    const uintptr_t start =
        ((uintptr_t)pool->base + pool->used + (align - 1u)) & ~(uintptr_t)(align - 1u);
    const size_t offset = (size_t)(start - (uintptr_t)pool->base);
    if (offset > pool->size || size > pool->size - offset) {
        KIT_LOG_ERROR("%s: %zu bytes (align %zu) do not fit: %zu of %zu used\n", pool->name, size,
                      align, pool->used, pool->size);
        return NULL;
    }
    pool->used = offset + size;
    if (pool->used > pool->peak) {
        pool->peak = pool->used;
    }
    return (void *)start;
}

void kit_bump_reset(kit_bump_t *pool) { pool->used = 0; }

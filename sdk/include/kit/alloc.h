/*
 * A bump allocator over one generated pool (kit_method_pool, kit_temp_pool, ...):
 * the sizes come from the memory plan, so running out is a plan bug worth reporting
 * with numbers, never a silent NULL dereference.
 */
#ifndef KIT_ALLOC_H
#define KIT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *name; /* for messages: "temp_pool" */
    uint8_t *base;
    size_t size;
    size_t used;
    size_t peak;
} kit_bump_t;

void kit_bump_init(kit_bump_t *pool, const char *name, void *base, size_t size);
/* `align` is a power of two; NULL (and a logged line with the numbers) when it does not fit. */
void *kit_bump_alloc(kit_bump_t *pool, size_t size, size_t align);
void kit_bump_reset(kit_bump_t *pool);

#ifdef __cplusplus
}
#endif

#endif /* KIT_ALLOC_H */

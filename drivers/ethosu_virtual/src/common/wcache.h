/* ethosu-porting-kit virtual NPU: the decoded-weight cache of host builds. */
#ifndef VNPU_WCACHE_H
#define VNPU_WCACHE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decoded weights kept between runs (host builds: -DETHOSU_VIRTUAL_WEIGHT_CACHE=<bytes>),
 * shared by the U55/U65 and U85 operations. An entry is found by its key (the decode
 * order, as bytes) and the exact bytes of its weight streams (compared in full, so a
 * changed stream is decoded again). It records the working memory the decode took above
 * `base`, so the high-water mark that sizes firmware workspaces is the same with and
 * without the cache. Firmware builds leave it out: they run each stream once.
 */
struct vnpu_wseg {
    const uint8_t *p;
    size_t len;
};
#ifdef ETHOSU_VIRTUAL_WEIGHT_CACHE
/* The cached weights, or NULL; a hit only if base + need fits ws_size, *used = base + need
 * (what the caller records as used). */
const int16_t *vnpu_wcache_find(const void *key, size_t key_len, const struct vnpu_wseg *segs,
                                int nsegs, size_t base, size_t ws_size, size_t *used);
/* Keeps a copy of the weights; the copy (what a later find returns), or NULL if not kept. */
const int16_t *vnpu_wcache_add(const void *key, size_t key_len, const struct vnpu_wseg *segs,
                               int nsegs, const int16_t *weights, size_t nweights, size_t need);
/*
 * A second form of the cached weights at `weights` (a find's or an add's result), in a kernel's
 * own layout: `bytes` kept with the entry and freed with it, so it is built once per stream.
 * *fresh = 1 when the caller must (re)build it. NULL if no entry holds `weights` or no memory.
 */
void *vnpu_wcache_extra(const int16_t *weights, size_t bytes, int *fresh);
#else
#define vnpu_wcache_find(key, key_len, segs, nsegs, base, ws_size, used)                           \
    ((void)(key), (void)(key_len), (void)(segs), (void)(nsegs), (void)(base), (void)(ws_size),     \
     (void)(used), (const int16_t *)NULL)
#define vnpu_wcache_add(key, key_len, segs, nsegs, weights, nweights, need)                        \
    ((void)(key), (void)(key_len), (void)(segs), (void)(nsegs), (void)(weights), (void)(nweights), \
     (void)(need), (const int16_t *)NULL)
#endif

#endif /* VNPU_WCACHE_H */

/* ethosu-porting-kit virtual NPU: the decoded-weight cache (host builds only). */
#include "common/wcache.h"

#include <string.h>

#ifdef ETHOSU_VIRTUAL_WEIGHT_CACHE
#include <stdlib.h>

#define WCACHE_MAX_SEGS 4
#define WCACHE_MAX_KEY 128

struct wcache_entry {
    struct wcache_entry *next;
    uint64_t hash;
    size_t key_len;
    size_t len[WCACHE_MAX_SEGS]; /* each stream's bytes, stored after the weights */
    int nsegs;
    size_t nweights; /* int16 values */
    size_t need;     /* working memory the decode took above its base */
    void *extra;     /* vnpu_wcache_extra's form of the weights (malloc), or NULL */
    size_t extra_bytes;
    unsigned char key[WCACHE_MAX_KEY];
    int16_t weights[];
};

static struct wcache_entry *wcache_head;
static size_t wcache_bytes;

/* Picks the candidates only (a match is the full memcmp): the lengths and the bytes at both ends. */
static uint64_t wcache_hash(const struct vnpu_wseg *segs, int nsegs)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)nsegs;
    for (int s = 0; s < nsegs; s++) {
        const uint8_t *p = segs[s].p;
        size_t len = segs[s].len;
        h = (h ^ (uint64_t)len) * 1099511628211ull;
        size_t ends = len < 128u ? len : 64u;
        for (size_t i = 0; i < ends; i++) {
            h = (h ^ p[i]) * 1099511628211ull;
            h = (h ^ p[len - 1u - i]) * 1099511628211ull;
        }
    }
    return h;
}

static size_t wcache_stream_bytes(const struct vnpu_wseg *segs, int nsegs)
{
    size_t total = 0;
    for (int s = 0; s < nsegs; s++) {
        total += segs[s].len;
    }
    return total;
}

static int wcache_same(const struct wcache_entry *e, const void *key, size_t key_len,
                       const struct vnpu_wseg *segs, int nsegs)
{
    if (e->nsegs != nsegs || e->key_len != key_len || memcmp(e->key, key, key_len) != 0) {
        return 0;
    }
    const uint8_t *stored = (const uint8_t *)(e->weights + e->nweights);
    for (int s = 0; s < nsegs; s++) {
        if (e->len[s] != segs[s].len || memcmp(stored, segs[s].p, segs[s].len) != 0) {
            return 0;
        }
        stored += segs[s].len;
    }
    return 1;
}

const int16_t *vnpu_wcache_find(const void *key, size_t key_len, const struct vnpu_wseg *segs,
                                int nsegs, size_t base, size_t ws_size, size_t *used)
{
    if (nsegs > WCACHE_MAX_SEGS || key_len > WCACHE_MAX_KEY) {
        return NULL;
    }
    uint64_t h = wcache_hash(segs, nsegs);
    for (struct wcache_entry *e = wcache_head; e != NULL; e = e->next) {
        /* a workspace too small for the decode stays too small with the cache */
        if (e->hash == h && base + e->need <= ws_size &&
            wcache_same(e, key, key_len, segs, nsegs)) {
            *used = base + e->need;
            return e->weights;
        }
    }
    return NULL;
}

const int16_t *vnpu_wcache_add(const void *key, size_t key_len, const struct vnpu_wseg *segs,
                               int nsegs, const int16_t *weights, size_t nweights, size_t need)
{
    if (nsegs > WCACHE_MAX_SEGS || key_len > WCACHE_MAX_KEY) {
        return NULL;
    }
    size_t slen = wcache_stream_bytes(segs, nsegs);
    size_t bytes = sizeof(struct wcache_entry) + nweights * sizeof(int16_t) + slen;
    if (bytes > (size_t)(ETHOSU_VIRTUAL_WEIGHT_CACHE)) {
        return NULL;
    }
    while (wcache_bytes + bytes > (size_t)(ETHOSU_VIRTUAL_WEIGHT_CACHE) && wcache_head != NULL) {
        struct wcache_entry *old =
            wcache_head; /* the newest go first: a model's ops stay together */
        wcache_head = old->next;
        wcache_bytes -= sizeof(struct wcache_entry) + old->nweights * sizeof(int16_t);
        wcache_bytes -= old->extra_bytes;
        free(old->extra);
        for (int s = 0; s < old->nsegs; s++) {
            wcache_bytes -= old->len[s];
        }
        free(old);
    }
    struct wcache_entry *e = (struct wcache_entry *)malloc(bytes);
    if (e == NULL) {
        return NULL;
    }
    memset(e, 0, sizeof(*e));
    e->hash = wcache_hash(segs, nsegs);
    e->key_len = key_len;
    memcpy(e->key, key, key_len);
    e->nsegs = nsegs;
    e->nweights = nweights;
    e->need = need;
    memcpy(e->weights, weights, nweights * sizeof(int16_t));
    uint8_t *stored = (uint8_t *)(e->weights + nweights);
    for (int s = 0; s < nsegs; s++) {
        e->len[s] = segs[s].len;
        memcpy(stored, segs[s].p, segs[s].len);
        stored += segs[s].len;
    }
    e->next = wcache_head;
    wcache_head = e;
    wcache_bytes += bytes;
    return e->weights;
}

void *vnpu_wcache_extra(const int16_t *weights, size_t bytes, int *fresh)
{
    for (struct wcache_entry *e = wcache_head; e != NULL; e = e->next) {
        if (e->weights != weights) {
            continue;
        }
        *fresh = 0;
        if (e->extra == NULL || e->extra_bytes != bytes) {
            free(e->extra);
            wcache_bytes -= e->extra_bytes;
            e->extra_bytes = 0;
            e->extra = malloc(bytes > 0u ? bytes : 1u);
            if (e->extra == NULL) {
                return NULL;
            }
            e->extra_bytes = bytes;
            wcache_bytes += bytes;
            *fresh = 1;
        }
        return e->extra;
    }
    return NULL;
}
#endif

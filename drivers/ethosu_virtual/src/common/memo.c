/* ethosu-porting-kit virtual NPU: the table memo (host builds only). */
#include "common/memo.h"

#ifdef ETHOSU_VIRTUAL_WEIGHT_CACHE
#include "common/mutation.h"

#include <stdlib.h>
#include <string.h>

#define MEMO_BUCKETS 1024u
/* a bound on what a long session of many streams keeps (each table set is 2 KiB) */
#define MEMO_MAX_BYTES (64u * 1024u * 1024u)

struct memo_entry {
    struct memo_entry *next;
    uint64_t hash;
    size_t key_len;
    size_t value_len;
    uint32_t kind;
    uint32_t mutations;
    uint64_t data[]; /* the key, then the value at the next 8-byte boundary */
};

static struct memo_entry *memo_bucket[MEMO_BUCKETS];
static size_t memo_bytes;

static size_t memo_round8(size_t n) { return (n + 7u) & ~(size_t)7u; }

/* Picks the candidates only (a match is the full memcmp). Four words at a time into four
 * sums: one chain of multiplications per word was most of a lookup (every run looks up
 * each table of each operation again, keys of 250 to 500 bytes). */
static uint64_t memo_hash(uint32_t kind, const unsigned char *p, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)kind ^ ((uint64_t)len << 32);
    uint64_t lane[4] = {h, h ^ 1u, h ^ 2u, h ^ 3u};
    size_t i = 0;
    for (; i + 32u <= len; i += 32u) {
        for (int j = 0; j < 4; j++) {
            uint64_t w;
            memcpy(&w, p + i + 8u * (size_t)j, 8u);
            lane[j] = (lane[j] ^ w) * 0xff51afd7ed558ccdull;
            lane[j] ^= lane[j] >> 29;
        }
    }
    for (int j = 0; j < 4; j++) {
        h = (h ^ lane[j]) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    for (; i + 8u <= len; i += 8u) {
        uint64_t w;
        memcpy(&w, p + i, 8u);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    for (; i < len; i++) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

void *vnpu_memo_get(enum vnpu_memo_kind kind, const void *key, size_t key_len, size_t value_len,
                    int *fresh)
{
    uint32_t mutations = VNPU_MUTATIONS();
    uint64_t h = memo_hash((uint32_t)kind, (const unsigned char *)key, key_len);
    struct memo_entry **head = &memo_bucket[h % MEMO_BUCKETS];
    for (struct memo_entry *e = *head; e != NULL; e = e->next) {
        if (e->hash == h && e->kind == (uint32_t)kind && e->mutations == mutations &&
            e->key_len == key_len && e->value_len == value_len &&
            memcmp(e->data, key, key_len) == 0) {
            *fresh = 0;
            return (unsigned char *)e->data + memo_round8(key_len);
        }
    }
    size_t bytes = sizeof(struct memo_entry) + memo_round8(key_len) + value_len;
    if (memo_bytes + bytes > MEMO_MAX_BYTES) {
        return NULL;
    }
    struct memo_entry *e = (struct memo_entry *)malloc(bytes);
    if (e == NULL) {
        return NULL;
    }
    memo_bytes += bytes;
    e->hash = h;
    e->key_len = key_len;
    e->value_len = value_len;
    e->kind = (uint32_t)kind;
    e->mutations = mutations;
    memcpy(e->data, key, key_len);
    e->next = *head;
    *head = e;
    *fresh = 1;
    return (unsigned char *)e->data + memo_round8(key_len);
}
#else
typedef int vnpu_memo_unused; /* an ISO C translation unit is never empty */
#endif

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

/* ---- the stream memo -------------------------------------------------------------------- */

/* Streams kept at once (a model's delegates, a test's models in turn; the oldest goes). */
#define SMEMO_STREAMS 8u
#define SMEMO_MAX_KEY 256u
#define SMEMO_MAX_WORDS (1u << 20)

struct smemo_item {
    struct smemo_item *next;
    unsigned tag;
    uint64_t data[]; /* the kept bytes */
};

struct vnpu_stream_memo {
    uint32_t *words; /* a copy of the stream (NULL: the entry is free) */
    size_t nwords;
    size_t key_len;
    unsigned char key[SMEMO_MAX_KEY];
    struct smemo_item **slots; /* per command word */
    size_t bytes;              /* its items' */
    uint64_t used;             /* the run count when last used */
};

static struct vnpu_stream_memo smemo[SMEMO_STREAMS];
static uint64_t smemo_runs;
static size_t smemo_bytes;

static void smemo_clear(struct vnpu_stream_memo *m)
{
    for (size_t i = 0; m->slots != NULL && i < m->nwords; i++) {
        while (m->slots[i] != NULL) {
            struct smemo_item *next = m->slots[i]->next;
            free(m->slots[i]);
            m->slots[i] = next;
        }
    }
    free(m->slots);
    free(m->words);
    smemo_bytes -= m->bytes;
    memset(m, 0, sizeof(*m));
}

struct vnpu_stream_memo *vnpu_stream_memo(const uint32_t *words, size_t nwords, const void *key,
                                          size_t key_len)
{
    if (nwords == 0u || nwords > SMEMO_MAX_WORDS || key_len > SMEMO_MAX_KEY) {
        return NULL;
    }
    smemo_runs++;
    struct vnpu_stream_memo *oldest = &smemo[0];
    for (unsigned i = 0; i < SMEMO_STREAMS; i++) {
        struct vnpu_stream_memo *m = &smemo[i];
        if (m->words != NULL && m->nwords == nwords && m->key_len == key_len &&
            memcmp(m->key, key, key_len) == 0 &&
            memcmp(m->words, words, nwords * sizeof(uint32_t)) == 0) {
            m->used = smemo_runs;
            return m;
        }
        if (m->used < oldest->used) {
            oldest = m;
        }
    }
    smemo_clear(oldest);
    oldest->words = (uint32_t *)malloc(nwords * sizeof(uint32_t));
    oldest->slots = (struct smemo_item **)calloc(nwords, sizeof(*oldest->slots));
    if (oldest->words == NULL || oldest->slots == NULL) {
        smemo_clear(oldest);
        return NULL;
    }
    memcpy(oldest->words, words, nwords * sizeof(uint32_t));
    oldest->nwords = nwords;
    oldest->key_len = key_len;
    memcpy(oldest->key, key, key_len);
    oldest->used = smemo_runs;
    return oldest;
}

const void *vnpu_stream_memo_find(const struct vnpu_stream_memo *m, size_t word, unsigned tag)
{
    if (m == NULL || word >= m->nwords) {
        return NULL;
    }
    for (const struct smemo_item *it = m->slots[word]; it != NULL; it = it->next) {
        if (it->tag == tag) {
            return it->data;
        }
    }
    return NULL;
}

void vnpu_stream_memo_keep(struct vnpu_stream_memo *m, size_t word, unsigned tag, const void *data,
                           size_t size)
{
    size_t bytes = sizeof(struct smemo_item) + size;
    if (m == NULL || word >= m->nwords || smemo_bytes + bytes > MEMO_MAX_BYTES ||
        vnpu_stream_memo_find(m, word, tag) != NULL) {
        return;
    }
    struct smemo_item *it = (struct smemo_item *)malloc(bytes);
    if (it == NULL) {
        return;
    }
    it->tag = tag;
    memcpy(it->data, data, size);
    it->next = m->slots[word];
    m->slots[word] = it;
    m->bytes += bytes;
    smemo_bytes += bytes;
}
#else
typedef int vnpu_memo_unused; /* an ISO C translation unit is never empty */
#endif

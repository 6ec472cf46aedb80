/* ethosu-porting-kit virtual NPU: tables an operation derives from its registers, kept between
 * runs (host builds). */
#ifndef VNPU_MEMO_H
#define VNPU_MEMO_H

#include "common/rescale.h"

#include <stddef.h>
#include <stdint.h>

/*
 * A repeated inference runs the same operations with the same scales: the 256/512-entry
 * tables of the 8-bit paths are built on its first run and found again after. An entry is
 * found by its kind, the mutation mask and the exact bytes of its key, which holds every
 * input of the table (a changed scale, zero point or LUT byte is a new entry), so a found
 * table is the one the operation would build. Host builds only (with the decoded-weight
 * cache, ETHOSU_VIRTUAL_WEIGHT_CACHE); firmware runs each stream once and builds them.
 */
enum vnpu_memo_kind { VNPU_MEMO_U55_EW8 = 1, VNPU_MEMO_U85_POOL_MAP8, VNPU_MEMO_U85_EW_MAP8 };

/* The fields of `r` that decide vnpu_rescale_by's results, into k[0..5]. */
static inline void vnpu_memo_rescaler(int64_t k[6], const struct vnpu_rescaler *r)
{
    k[0] = r->m;
    k[1] = r->s;
    k[2] = r->mode;
    k[3] = r->fast;
    k[4] = r->c_pos;
    k[5] = r->c_neg;
}

/* The fields of `o` that decide vnpu_out_value's results but its LUT's bytes, into k[0..10]. */
static inline void vnpu_memo_out(int64_t k[11], const struct vnpu_out *o)
{
    k[0] = o->zp;
    k[1] = o->lut;
    k[2] = o->lut_unsigned;
    k[3] = o->simple;
    k[4] = o->lim.clamp;
    k[5] = o->lim.amin;
    k[6] = o->lim.amax;
    k[7] = o->lim.tmin;
    k[8] = o->lim.tmax;
    k[9] = o->lim.lo;
    k[10] = o->lim.hi;
}

/* The bytes of o's LUT that vnpu_out_value reads, into k (256 at most): their count, or -1 for
 * a LUT kind an 8-bit map never has (no memo then). */
static inline int vnpu_memo_lut8(uint8_t k[256], const struct vnpu_out *o)
{
    if (o->lut == 0) {
        return 0;
    }
    if (o->lut != 8) {
        return -1;
    }
    for (int i = 0; i < 256; i++) {
        k[i] = o->table[i];
    }
    return 256;
}

#ifdef ETHOSU_VIRTUAL_WEIGHT_CACHE
/*
 * The `value_len` bytes kept for (kind, key), or NULL if there is no memory for them (the
 * caller builds its table in its own memory). *fresh = 1 when the entry is new: the caller
 * fills all of it before the next call.
 */
void *vnpu_memo_get(enum vnpu_memo_kind kind, const void *key, size_t key_len, size_t value_len,
                    int *fresh);

/*
 * What an operation derives from its registers alone, kept per command word of a stream: the
 * registers at word i are a function of the stream's words before it (a run starts from a
 * zeroed register file), so a run of the same words on the same `key` (whatever else the
 * set-up reads: regions, NPU configuration, mutations) finds the set-up the first run made
 * (a repeated inference of a small model spends much of its time in set-up).
 * vnpu_stream_memo: the memo of these words and key, made or found at the start of a run
 * (NULL: none, no memory). Host builds only.
 */
struct vnpu_stream_memo;
struct vnpu_stream_memo *vnpu_stream_memo(const uint32_t *words, size_t nwords, const void *key,
                                          size_t key_len);
/* The bytes kept for (word, tag), or NULL. */
const void *vnpu_stream_memo_find(const struct vnpu_stream_memo *m, size_t word, unsigned tag);
/* Keep `size` bytes for (word, tag) (nothing if there is no memory for them). */
void vnpu_stream_memo_keep(struct vnpu_stream_memo *m, size_t word, unsigned tag, const void *data,
                           size_t size);
#else
#define vnpu_memo_get(kind, key, key_len, value_len, fresh)                                        \
    ((void)(kind), (void)(key), (void)(key_len), (void)(value_len), (void)(fresh), (void *)NULL)
struct vnpu_stream_memo;
#define vnpu_stream_memo(words, nwords, key, key_len)                                              \
    ((void)(words), (void)(nwords), (void)(key), (void)(key_len), (struct vnpu_stream_memo *)NULL)
#define vnpu_stream_memo_find(m, word, tag)                                                        \
    ((void)(m), (void)(word), (void)(tag), (const void *)NULL)
#define vnpu_stream_memo_keep(m, word, tag, data, size)                                            \
    ((void)(m), (void)(word), (void)(tag), (void)(data), (void)(size))
#endif

#endif /* VNPU_MEMO_H */

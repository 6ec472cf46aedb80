/*
 * ethosu-porting-kit virtual NPU: the 8-bit elementwise path both products share (a residual
 * ADD, a MUL by a mask): each 8-bit operand's scaled value from a 256-entry table, the
 * combination in 32 bits, then the output rescale and one clamp. Only taken when every table
 * value and every combination lie inside (-2^30, 2^30) and the output rescaler has its short
 * form, where vnpu_rescale_by is exactly the few operations below: the same results as the
 * products' per-value paths, in straight-line code the compiler vectorises.
 */
#ifndef VNPU_EW8_H
#define VNPU_EW8_H

#include "common/rescale.h"

#include <stddef.h>
#include <stdint.h>

/* The combinations (the elementwise_mode values of both products). */
enum { EW8_MUL = 0, EW8_ADD = 1, EW8_SUB = 2, EW8_MIN = 3, EW8_MAX = 4 };

/* The output stage of a value inside (-2^30, 2^30): rescale (short form), zero point, clamp. */
struct vnpu_ew8_out {
    int64_t m, c_pos, c_neg, zp, lo, hi;
    unsigned s;
};

/* 1 and q filled if `r` has the short form and `o` is one clamp (o->simple), else 0. */
static inline int vnpu_ew8_out_init(struct vnpu_ew8_out *q, const struct vnpu_rescaler *r,
                                    const struct vnpu_out *o)
{
    if (!r->fast || !o->simple) {
        return 0;
    }
    q->m = r->m;
    q->c_pos = r->c_pos;
    q->c_neg = r->c_neg;
    q->s = r->s;
    q->zp = o->zp;
    q->lo = o->lim.lo;
    q->hi = o->lim.hi;
    return 1;
}

/* The largest magnitude in t[0, n). */
static inline int64_t vnpu_ew8_max_abs(const int64_t *t, int n)
{
    int64_t m = 0;
    for (int i = 0; i < n; i++) {
        int64_t a = t[i] < 0 ? -t[i] : t[i];
        m = a > m ? a : m;
    }
    return m;
}

/* 1 if tables of magnitudes up to max1, max2 keep every a op b inside (-2^30, 2^30). */
static inline int vnpu_ew8_bounded(int mode, int64_t max1, int64_t max2)
{
    const int64_t lim = (int64_t)1 << 30;
    if (max1 >= lim || max2 >= lim) {
        return 0;
    }
    return (mode == EW8_MUL ? max1 * max2 : (mode <= EW8_SUB ? max1 + max2 : 0)) < lim;
}

static inline int32_t vnpu_ew8_combine(int mode, int32_t a, int32_t b)
{
    return mode == EW8_MUL   ? a * b
           : mode == EW8_ADD ? a + b
           : mode == EW8_SUB ? a - b
           : mode == EW8_MIN ? (a < b ? a : b)
                             : (a > b ? a : b);
}

/* n outputs of one run of adjacent bytes: a and o step one byte, b `bstep` (0: the same
 * byte for all, a broadcast or a scalar's index 0). `mode` and `reversed` (b op a) are
 * constants in each caller. */
static inline __attribute__((always_inline)) void
vnpu_ew8_run(const uint8_t *restrict a, const uint8_t *restrict b, ptrdiff_t bstep,
             uint8_t *restrict o, int n, const int32_t *restrict t1, const int32_t *restrict t2,
             const struct vnpu_ew8_out *q, const int mode, const int reversed)
{
    for (int j = 0; j < n; j++) {
        int32_t x1 = t1[a[j]];
        int32_t x2 = t2[b[(ptrdiff_t)j * bstep]];
        int32_t res = reversed ? vnpu_ew8_combine(mode, x2, x1) : vnpu_ew8_combine(mode, x1, x2);
        int64_t p = (int64_t)res * q->m;
        p += p < 0 ? q->c_neg : q->c_pos;
        int64_t v = (p >> q->s) + q->zp;
        o[j] = (uint8_t)(v < q->lo ? q->lo : (v > q->hi ? q->hi : v));
    }
}

#endif /* VNPU_EW8_H */

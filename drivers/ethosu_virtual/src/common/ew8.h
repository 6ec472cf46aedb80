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

/* q from `r` and `o`; 1 if `r` has the short form and `o` is one clamp (o->simple), else 0
 * (q is not to be used then). */
static inline int vnpu_ew8_out_init(struct vnpu_ew8_out *q, const struct vnpu_rescaler *r,
                                    const struct vnpu_out *o)
{
    q->m = r->m;
    q->c_pos = r->c_pos;
    q->c_neg = r->c_neg;
    q->s = r->s;
    q->zp = o->zp;
    q->lo = o->lim.lo;
    q->hi = o->lim.hi;
    return r->fast && o->simple;
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

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#include <immintrin.h>

/* vnpu_ew8_run's output stage for eight values in 64-bit lanes (8 bytes at o, `k` of them). */
static inline __attribute__((always_inline)) void
vnpu_ew8_out8(__m256i res, uint8_t *o, __mmask16 k, const struct vnpu_ew8_out *q)
{
    __m512i p = _mm512_mullo_epi64(_mm512_cvtepi32_epi64(res), _mm512_set1_epi64(q->m));
    __mmask8 neg = _mm512_cmplt_epi64_mask(p, _mm512_setzero_si512());
    p = _mm512_add_epi64(
        p, _mm512_mask_blend_epi64(neg, _mm512_set1_epi64(q->c_pos), _mm512_set1_epi64(q->c_neg)));
    p = _mm512_add_epi64(_mm512_sra_epi64(p, _mm_cvtsi32_si128((int)q->s)),
                         _mm512_set1_epi64(q->zp));
    p = _mm512_min_epi64(_mm512_max_epi64(p, _mm512_set1_epi64(q->lo)), _mm512_set1_epi64(q->hi));
    _mm_mask_storeu_epi8(o, k, _mm512_cvtepi64_epi8(p));
}
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
/* vnpu_ew8_run for n <= 8: gathers of eight lanes, half the cost of sixteen. */
static inline __attribute__((always_inline)) void
vnpu_ew8_run8(const uint8_t *restrict a, const uint8_t *restrict b, ptrdiff_t bstep,
              uint8_t *restrict o, int n, const int32_t *restrict t1, const int32_t *restrict t2,
              const struct vnpu_ew8_out *q, const int mode, const int reversed)
{
    const __mmask8 k8 = (__mmask8)((1u << n) - 1u);
    __m256i ja = _mm256_cvtepu8_epi32(_mm_maskz_loadu_epi8(k8, a));
    __m256i y1 = _mm256_mmask_i32gather_epi32(_mm256_setzero_si256(), k8, ja, t1, 4);
    __m256i y2;
    if (bstep != 0) {
        __m256i jb = _mm256_cvtepu8_epi32(_mm_maskz_loadu_epi8(k8, b));
        y2 = _mm256_mmask_i32gather_epi32(_mm256_setzero_si256(), k8, jb, t2, 4);
    } else {
        y2 = _mm256_set1_epi32(t2[b[0]]);
    }
    __m256i yl = reversed ? y2 : y1;
    __m256i yr = reversed ? y1 : y2;
    __m256i yres = mode == EW8_MUL   ? _mm256_mullo_epi32(yl, yr)
                   : mode == EW8_ADD ? _mm256_add_epi32(yl, yr)
                   : mode == EW8_SUB ? _mm256_sub_epi32(yl, yr)
                   : mode == EW8_MIN ? _mm256_min_epi32(yl, yr)
                                     : _mm256_max_epi32(yl, yr);
    vnpu_ew8_out8(yres, o, (__mmask16)k8, q);
}
#endif

/* n (at most 16) outputs of one run of adjacent bytes: a and o step one byte, b `bstep` (0:
 * the same byte for all, a broadcast or a scalar's index 0). `mode` and `reversed` (b op a)
 * are constants in each caller. AVX-512: eight lanes at once (sixteen as two eights: a gather
 * costs by its lanes, and the output stage works on eight 64-bit values anyway). */
static inline __attribute__((always_inline)) void
vnpu_ew8_run(const uint8_t *restrict a, const uint8_t *restrict b, ptrdiff_t bstep,
             uint8_t *restrict o, int n, const int32_t *restrict t1, const int32_t *restrict t2,
             const struct vnpu_ew8_out *q, const int mode, const int reversed)
{
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
    if (n <= 8) {
        vnpu_ew8_run8(a, b, bstep, o, n, t1, t2, q, mode, reversed);
        return;
    }
    vnpu_ew8_run8(a, b, bstep, o, 8, t1, t2, q, mode, reversed);
    vnpu_ew8_run8(a + 8, b + 8 * bstep, bstep, o + 8, n - 8, t1, t2, q, mode, reversed);
#else
    for (int j = 0; j < n; j++) {
        int32_t x1 = t1[a[j]];
        int32_t x2 = t2[b[(ptrdiff_t)j * bstep]];
        int32_t res = reversed ? vnpu_ew8_combine(mode, x2, x1) : vnpu_ew8_combine(mode, x1, x2);
        int64_t p = (int64_t)res * q->m;
        p += p < 0 ? q->c_neg : q->c_pos;
        int64_t v = (p >> q->s) + q->zp;
        o[j] = (uint8_t)(v < q->lo ? q->lo : (v > q->hi ? q->hi : v));
    }
#endif
}

#endif /* VNPU_EW8_H */

/* ethosu-porting-kit virtual NPU: the convolutions' 8-bit host vector kernel, built with the
 * weight cache (the host library); firmware and the rest take common/conv8_fw.c. */
#include "common/conv8.h"

#include "common/wcache.h"

#include <string.h>

#ifdef ETHOSU_VIRTUAL_WEIGHT_CACHE
#include <stdlib.h>
#include <string.h>
#if defined(__AVX2__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#if defined(__AVX512VNNI__)
/* acc + the pairwise products of b and w: one VPDPWSSD (wrapping, like the add) */
#define CONV8_MADD512(acc, b, w) _mm512_dpwssd_epi32((acc), (b), (w))
#else
#define CONV8_MADD512(acc, b, w) _mm512_add_epi32((acc), _mm512_madd_epi16((b), (w)))
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define CONV8_MADD256(acc, b, w) _mm256_dpwssd_epi32((acc), (b), (w))
#else
#define CONV8_MADD256(acc, b, w) _mm256_add_epi32((acc), _mm256_madd_epi16((b), (w)))
#endif

/* The per-channel arrays of the operation running now (one at a time), grown as needed. */
static void *conv8_arrays;
static size_t conv8_capacity; /* channels */

/* The IFM plane and the receptive field of the operation running now, grown as needed. */
static int16_t *conv8_plane;
static size_t conv8_plane_values;

/* Channels rounded up to a whole vector block, so the kernels need no channel tail. */
#define CONV8_BLOCK 32
/* Output pixels of one row computed together: each weight load serves them all. */
#if defined(__AVX512BW__)
#define CONV8_PIXELS 8 /* 16 accumulators (two per pixel) and two weight vectors: 18 of 32 */
#else
#define CONV8_PIXELS 4
#endif

/* The 8-bit kernel: unsigned activation bytes times int8 weights, VPDPBUSD (four products a
 * 32-bit lane, twice VPDPWSSD's), where the host has it and the operation's values fit. */
#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define CONV8_Q8 1
#else
#define CONV8_Q8 0
#endif

/* The 8-bit kernel's IFM plane and fields (vnpu_conv8_ifm), grown as needed. */
static uint8_t *conv8_plane8;
static size_t conv8_plane8_bytes;

/* The pixels the last vnpu_conv8_pixel computed: row, first column, count (row -1: none). */
static int conv8_block_oy = -1;
static int conv8_block_ox;
static int conv8_block_n;

static int conv8_reserve(struct vnpu_conv8 *c, int depth_out)
{
    size_t n = ((size_t)depth_out + CONV8_BLOCK - 1u) / CONV8_BLOCK * CONV8_BLOCK;
    size_t per = (3u + CONV8_PIXELS) * sizeof(int32_t) + 2u * sizeof(int64_t) + CONV8_PIXELS;
    if (n > conv8_capacity) {
        void *grown = realloc(conv8_arrays, n * per);
        if (grown == NULL) {
            return 0;
        }
        conv8_arrays = grown;
        conv8_capacity = n;
    }
    int64_t *p64 = (int64_t *)conv8_arrays;
    c->c_pos = p64;
    c->c_neg = p64 + n;
    int32_t *p32 = (int32_t *)(void *)(p64 + 2u * n);
    c->bias = p32;
    c->mult = p32 + n;
    c->shift = p32 + 2u * n;
    c->acc = p32 + 3u * n;
    c->out = (uint8_t *)(void *)(p32 + (3u + CONV8_PIXELS) * n);
    return 1;
}

/* W[o][terms] into the lanes-are-channels layout (padded channels and odd terms are 0). */
static void conv8_transpose(int16_t *wt, const int16_t *w, int depth_out, size_t n, size_t terms,
                            int depthwise)
{
    if (depthwise) {
        memset(wt, 0, terms * n * sizeof(int16_t));
        for (size_t t = 0; t < terms; t++) {
            for (int o = 0; o < depth_out; o++) {
                wt[t * n + (size_t)o] = w[(size_t)o * terms + t];
            }
        }
        return;
    }
    size_t pairs = (terms + 1u) / 2u;
    memset(wt, 0, pairs * n * 2u * sizeof(int16_t));
    for (size_t k = 0; k < terms; k++) {
        int16_t *row = wt + (k / 2u) * n * 2u + (k & 1u);
        for (int o = 0; o < depth_out; o++) {
            row[(size_t)o * 2u] = w[(size_t)o * terms + k];
        }
    }
}

/* Each channel's weight sum: 0 (no int8 layout) when a weight does not fit int8. */
static int conv8_sums(int32_t *wsum, const int16_t *w, int depth_out, size_t n, size_t terms)
{
    memset(wsum, 0, n * sizeof(int32_t));
    for (int o = 0; o < depth_out; o++) {
        const int16_t *row = w + (size_t)o * terms;
        int32_t sum = 0;
        for (size_t k = 0; k < terms; k++) {
            if (row[k] < INT8_MIN || row[k] > INT8_MAX) {
                return 0;
            }
            sum += row[k];
        }
        wsum[o] = sum;
    }
    return 1;
}

/* W[o][terms] as int8 quads, each kernel row's `run` terms in qrow quads: term k of row
 * k / run at quad (k / run) * qrow + (k % run) / 4 (padded channels and terms 0). */
static void conv8_quads(int8_t *wq, const int16_t *w, int depth_out, size_t n, size_t terms,
                        size_t run, size_t qrow)
{
    memset(wq, 0, (terms / run) * qrow * n * 4u);
    for (int o = 0; o < depth_out; o++) {
        const int16_t *row = w + (size_t)o * terms;
        for (size_t k = 0; k < terms; k++) {
            size_t j = k % run;
            size_t q = (k / run) * qrow + j / 4u;
            wq[q * n * 4u + (size_t)o * 4u + (j & 3u)] = (int8_t)row[k];
        }
    }
}

int vnpu_conv8_prepare(struct vnpu_conv8 *c, const int16_t *weights, int depth_out, size_t terms,
                       size_t ic, int depthwise)
{
    if (weights == NULL || depth_out <= 0 || terms == 0u || !conv8_reserve(c, depth_out)) {
        return 0;
    }
    size_t n = ((size_t)depth_out + CONV8_BLOCK - 1u) / CONV8_BLOCK * CONV8_BLOCK;
    size_t rows = depthwise ? terms : (terms + 1u) / 2u * 2u;
    size_t bytes16 = (rows * n * sizeof(int16_t) + 63u) & ~(size_t)63u;
    /* the int8 layout's room: each kernel row (at most one a tap) padded by up to 3 terms */
    size_t quads = depthwise || !CONV8_Q8 ? 0u : (terms + 3u * (terms / ic) + 3u) / 4u;
    /* [int16 layout][int8 layout][weight sums][1: every weight fits int8][the int8 layout's
     * kernel row length, 0: not built yet] */
    size_t bytes8 = quads * n * 4u;
    size_t bytes =
        bytes16 + bytes8 + (quads > 0u ? n * sizeof(int32_t) : 0u) + 2u * sizeof(int32_t);
    int fresh = 0;
    uint8_t *extra = (uint8_t *)vnpu_wcache_extra(weights, bytes, &fresh);
    if (extra == NULL) {
        return 0;
    }
    int16_t *wt = (int16_t *)(void *)extra;
    int8_t *wq = (int8_t *)(void *)(extra + bytes16);
    int32_t *wsum = (int32_t *)(void *)(extra + bytes16 + bytes8);
    int32_t *fits = (int32_t *)(void *)(extra + bytes - 2u * sizeof(int32_t));
    if (fresh) {
        conv8_transpose(wt, weights, depth_out, n, terms, depthwise);
        *fits = quads > 0u && conv8_sums(wsum, weights, depth_out, n, terms);
        fits[1] = 0;
    }
    c->wt = wt;
    c->out_stride = n;
    c->wq = *fits ? wq : NULL;
    c->wsum = wsum;
    c->wq_run = fits + 1;
    c->w16 = weights;
    c->wq_quads = quads;
    c->plane8 = NULL;
    c->terms = terms;
    c->ic = ic;
    c->depth_out = depth_out;
    c->depthwise = depthwise;
    for (size_t o = (size_t)depth_out; o < n; o++) {
        c->bias[o] = 0;
    }
    return 1;
}

/* len bytes, each XOR flip. restrict: bytes may alias anything; without it the loop
 * stays a byte at a time. */
static inline void conv8_flip(const uint8_t *restrict src, uint8_t *restrict dst, size_t len,
                              uint8_t flip)
{
    for (size_t j = 0; j < len; j++) {
        dst[j] = (uint8_t)(src[j] ^ flip);
    }
}

/* The iw pixels of an IFM row from its first pixel's bytes at src, flipped, into dst (ic bytes
 * a pixel): one run where the row's bytes are adjacent (NHWC, or NHCWB16 of 16 channels),
 * else a pixel's channels or a run of 16 at a time. */
static void conv8_flip_row(const struct fm *ifm, const uint8_t *src, int iw, uint8_t *dst,
                           uint8_t flip)
{
    const size_t ic = (size_t)ifm->c;
    const ptrdiff_t sx = (ptrdiff_t)ifm->sx;
    if (sx == (ptrdiff_t)ic && (!ifm->brick || ic == 16u)) {
        conv8_flip(src, dst, (size_t)iw * ic, flip);
        return;
    }
    for (size_t c0 = 0; c0 < ic; c0 += ifm->brick ? 16u : ic) {
        const uint8_t *run = src + (ifm->brick ? (ptrdiff_t)(c0 >> 4) * (ptrdiff_t)ifm->sc : 0);
        size_t len = ifm->brick && ic - c0 > 16u ? 16u : ic - c0;
        for (int x = 0; x < iw; x++) {
            if (len == 16u) { /* a constant count: one vector */
                conv8_flip(run + (ptrdiff_t)x * sx, dst + (size_t)x * ic + c0, 16u, flip);
            } else {
                conv8_flip(run + (ptrdiff_t)x * sx, dst + (size_t)x * ic + c0, len, flip);
            }
        }
    }
}

/*
 * The 8-bit kernel's plane: every IFM byte as an unsigned byte u = value - zp + off (signed
 * bytes flipped to x + 128, off = 128 + zp; unsigned ones as they are, off = zp), the padding
 * u = off (value - zp = 0, as the int16 plane's zeros). Then sum((u - off) * w) =
 * sum(u * w) - off * sum(w), exactly the int16 plane's dot product: the bias takes the
 * -off * sum(w). 0 (no memory, or an off outside a byte, or an upscaled IFM): the int16 plane.
 */
static int conv8_ifm8(struct vnpu_conv8 *c, const struct fm *ifm, const struct kernel *k, size_t ph,
                      size_t pw)
{
    const int32_t off = ifm->is_signed ? 128 + ifm->zp : ifm->zp;
    size_t ic = (size_t)ifm->c;
    size_t run = (size_t)c->ukw * ic;
    size_t qrow = (run + 3u) / 4u;
    if (c->wq == NULL || ifm->elem != 1 || k->upscale != 0 || off < 0 || off > 255 ||
        (size_t)c->ukh * run != c->terms || (size_t)c->ukh * qrow > c->wq_quads) {
        return 0;
    }
    if (*c->wq_run != (int32_t)run) { /* the layout for this kernel's rows, once a stream */
        size_t n = c->out_stride;
        conv8_quads(c->wq, c->w16, c->depth_out, n, c->terms, run, qrow);
        *c->wq_run = (int32_t)run;
    }
    c->qrow = qrow;
    /* a field as the kernel rows' quads (+ conv8_copy16's overrun) */
    size_t field = (size_t)c->ukh * qrow * 4u + CONV8_BLOCK;
    c->field8 = field;
    /* the fields' buffers 16 bytes after the plane: conv8_copy16's reads past the plane's
     * last row stay clear of them */
    size_t bytes = ph * pw * ic + 16u + field * CONV8_PIXELS;
    if (bytes > conv8_plane8_bytes) {
        uint8_t *grown = (uint8_t *)realloc(conv8_plane8, bytes);
        if (grown == NULL) {
            return 0;
        }
        conv8_plane8 = grown;
        conv8_plane8_bytes = bytes;
    }
    uint8_t *plane = conv8_plane8;
    /* the slack too: the last quads of a field read past it against zero weights */
    memset(plane, off, bytes);
    const uint8_t flip = ifm->is_signed ? 0x80u : 0u;
    /* one column of tiles: a row's pixels stride_x apart from its first */
    const int by_rows = k->iw <= ifm->w0;
    for (int y = 0; y < k->ih; y++) {
        uint8_t *dst = plane + (((size_t)y + (size_t)k->pad_top) * pw + (size_t)k->pad_left) * ic;
        if (by_rows) {
            conv8_flip_row(ifm, ifm->mem + fm_offset(ifm, y, 0, 0), k->iw, dst, flip);
            continue;
        }
        for (int x = 0; x < k->iw; x++, dst += ic) {
            const uint8_t *src = ifm->mem + fm_offset(ifm, y, x, 0);
            if (!ifm->brick) { /* NHWC: the channels at one address */
                conv8_flip(src, dst, ic, flip);
                continue;
            }
            size_t c0 = 0; /* NHCWB16: runs of 16, sc bytes apart */
            for (; c0 + 16u <= ic; c0 += 16u, src += ifm->sc) {
                conv8_flip(src, dst + c0, 16u, flip); /* a constant count: one vector */
            }
            if (c0 < ic) {
                conv8_flip(src, dst + c0, ic - c0, flip);
            }
        }
    }
    for (int o = 0; o < c->depth_out; o++) {
        c->bias[o] = (int32_t)((int64_t)c->bias[o] - (int64_t)off * c->wsum[o]);
    }
    c->plane8 = plane;
    c->patch8 = plane + ph * pw * ic + 16u;
    /* no int16 plane was built for this operation: a reader of it faults, not reads the last
     * operation's */
    c->plane = NULL;
    c->patch = NULL;
    return 1;
}

/* The iw pixels of an 8-bit IFM row from its first pixel's bytes at `src`, every channel as
 * vnpu_tap16 gives it, into dst (ic values a pixel): one run for adjacent NHWC pixels, else
 * a pixel or a run of 16 bricked channels at a time (one call per pixel was most of the
 * plane's time). */
static void conv8_plane_row(const struct fm *ifm, const uint8_t *src, int iw, int16_t *dst)
{
    const size_t ic = (size_t)ifm->c;
    const ptrdiff_t sx = (ptrdiff_t)ifm->sx;
    const int32_t zp = ifm->zp;
    const int sgn = ifm->is_signed;
    if (!ifm->brick && sx == (ptrdiff_t)ic) {
        vnpu_taps16(src, dst, iw * (int)ic, zp, sgn);
        return;
    }
    if (!ifm->brick) {
        for (int x = 0; x < iw; x++) {
            vnpu_taps16(src + (ptrdiff_t)x * sx, dst + (size_t)x * ic, (int)ic, zp, sgn);
        }
        return;
    }
    for (size_t c0 = 0; c0 < ic; c0 += 16u) {
        const uint8_t *run = src + (ptrdiff_t)(c0 >> 4) * (ptrdiff_t)ifm->sc;
        size_t len = ic - c0 < 16u ? ic - c0 : 16u;
#if defined(__AVX2__)
        if (len == 16u) {
            /* a whole run: one vector (GCC builds vnpu_taps16's 16 from byte inserts); the
             * 16-bit subtraction wraps as the truncation of the 32-bit one does */
            const __m256i vzp = _mm256_set1_epi16((int16_t)zp);
            for (int x = 0; x < iw; x++) {
                __m128i b =
                    _mm_loadu_si128((const __m128i *)(const void *)(run + (ptrdiff_t)x * sx));
                __m256i v = sgn ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
                _mm256_storeu_si256((__m256i *)(void *)(dst + (size_t)x * ic + c0),
                                    _mm256_sub_epi16(v, vzp));
            }
            continue;
        }
#endif
        for (int x = 0; x < iw; x++) {
            vnpu_taps16(run + (ptrdiff_t)x * sx, dst + (size_t)x * ic + c0, (int)len, zp, sgn);
        }
    }
}

int vnpu_conv8_ifm(struct vnpu_conv8 *c, const struct fm *ifm, const struct kernel *k, int ukh,
                   int ukw, int ow)
{
    conv8_block_oy = -1;
    c->plane8 = NULL;
    size_t ph = (size_t)k->pad_top + (size_t)k->ih + (size_t)k->pad_bottom;
    size_t pw = (size_t)k->pad_left + (size_t)k->iw + (size_t)k->pad_right;
    size_t ic = (size_t)ifm->c;
    /* + the odd term's partner; the slack after the plane (CONV8_PIXELS fields, at least
     * CONV8_BLOCK values) also takes the depthwise kernel's reads of padded channels */
    size_t field = (size_t)ukh * (size_t)ukw * ic + CONV8_BLOCK;
    c->row = pw * ic;
    c->sy = k->sy;
    c->sx = k->sx;
    c->dy = k->dy;
    c->dx = k->dx;
    c->ukh = ukh;
    c->ukw = ukw;
    c->field = field;
    c->ow = ow;
    if (!c->depthwise && conv8_ifm8(c, ifm, k, ph, pw)) {
        return 1;
    }
    size_t values = ph * pw * ic + field * CONV8_PIXELS;
    if (values > conv8_plane_values) {
        int16_t *grown = (int16_t *)realloc(conv8_plane, values * sizeof(int16_t));
        if (grown == NULL) {
            return 0;
        }
        conv8_plane = grown;
        conv8_plane_values = values;
    }
    int16_t *plane = conv8_plane;
    /* the padding rows and columns zero, every IFM pixel as the gather reads it */
    memset(plane, 0, ph * pw * ic * sizeof(int16_t));
    /* no upscaling and one column of tiles: a row's pixels stride_x apart from its first */
    int by_rows = k->upscale == 0 && ifm->elem == 1 && k->iw <= ifm->w0;
    for (int y = 0; y < k->ih; y++) {
        int16_t *dst = plane + (((size_t)y + (size_t)k->pad_top) * pw + (size_t)k->pad_left) * ic;
        if (by_rows) {
            conv8_plane_row(ifm, ifm->mem + fm_offset(ifm, y, 0, 0), k->iw, dst);
            continue;
        }
        for (int x = 0; x < k->iw; x++, dst += ic) {
            vnpu_tap16(ifm, k, y, x, dst);
        }
    }
    c->plane = plane;
    c->patch = plane + ph * pw * ic;
    return 1;
}

/* acc[0, n) = bias + sum over the term pairs of the broadcast pair times each channel's pair. */
static void conv8_macs(const struct vnpu_conv8 *c, const int16_t *restrict patch, size_t n,
                       int32_t *restrict acc)
{
    const size_t terms = c->terms;
    const int16_t *restrict wt = c->wt;
    for (size_t o0 = 0; o0 < n; o0 += CONV8_BLOCK) {
#if defined(__AVX512BW__)
        /* 32 channels in two registers, two term pairs an iteration into separate sums */
        const size_t pairs = terms / 2u;
        const size_t step = n * 2u;
        __m512i a0 = _mm512_loadu_si512((const void *)(c->bias + o0));
        __m512i a1 = _mm512_loadu_si512((const void *)(c->bias + o0 + 16));
        __m512i a2 = _mm512_setzero_si512();
        __m512i a3 = _mm512_setzero_si512();
        const int16_t *w = wt + o0 * 2u;
        size_t k = 0;
        for (; k + 1u < pairs; k += 2u, w += 2u * step) {
            uint32_t pair0;
            uint32_t pair1;
            memcpy(&pair0, patch + 2u * k, sizeof(pair0));
            memcpy(&pair1, patch + 2u * k + 2u, sizeof(pair1));
            __m512i b0 = _mm512_set1_epi32((int32_t)pair0);
            __m512i b1 = _mm512_set1_epi32((int32_t)pair1);
            a0 = CONV8_MADD512(a0, b0, _mm512_loadu_si512((const void *)w));
            a1 = CONV8_MADD512(a1, b0, _mm512_loadu_si512((const void *)(w + 32)));
            a2 = CONV8_MADD512(a2, b1, _mm512_loadu_si512((const void *)(w + step)));
            a3 = CONV8_MADD512(a3, b1, _mm512_loadu_si512((const void *)(w + step + 32)));
        }
        for (; k < (terms + 1u) / 2u; k++, w += step) {
            uint32_t pair = (uint16_t)patch[2u * k];
            if (2u * k + 1u < terms) {
                pair |= (uint32_t)(uint16_t)patch[2u * k + 1u] << 16;
            }
            __m512i b = _mm512_set1_epi32((int32_t)pair);
            a0 = CONV8_MADD512(a0, b, _mm512_loadu_si512((const void *)w));
            a1 = CONV8_MADD512(a1, b, _mm512_loadu_si512((const void *)(w + 32)));
        }
        _mm512_storeu_si512((void *)(acc + o0), _mm512_add_epi32(a0, a2));
        _mm512_storeu_si512((void *)(acc + o0 + 16), _mm512_add_epi32(a1, a3));
#elif defined(__AVX2__)
        const size_t pairs = terms / 2u;
        /* 32 channels in four registers; one VPMADDWD is 16 products */
        __m256i a0 = _mm256_loadu_si256((const __m256i *)(const void *)(c->bias + o0));
        __m256i a1 = _mm256_loadu_si256((const __m256i *)(const void *)(c->bias + o0 + 8));
        __m256i a2 = _mm256_loadu_si256((const __m256i *)(const void *)(c->bias + o0 + 16));
        __m256i a3 = _mm256_loadu_si256((const __m256i *)(const void *)(c->bias + o0 + 24));
        const int16_t *w = wt + o0 * 2u;
        for (size_t k = 0; k < pairs; k++, w += n * 2u) {
            uint32_t pair;
            memcpy(&pair, patch + 2u * k, sizeof(pair));
            __m256i b = _mm256_set1_epi32((int32_t)pair);
            const __m256i *pw = (const __m256i *)(const void *)w;
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(b, _mm256_loadu_si256(pw)));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(b, _mm256_loadu_si256(pw + 1)));
            a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(b, _mm256_loadu_si256(pw + 2)));
            a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(b, _mm256_loadu_si256(pw + 3)));
        }
        if (terms & 1u) {
            /* the last term against a zero partner */
            __m256i b = _mm256_set1_epi32((int32_t)(uint16_t)patch[terms - 1u]);
            const __m256i *pw = (const __m256i *)(const void *)w;
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(b, _mm256_loadu_si256(pw)));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(b, _mm256_loadu_si256(pw + 1)));
            a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(b, _mm256_loadu_si256(pw + 2)));
            a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(b, _mm256_loadu_si256(pw + 3)));
        }
        _mm256_storeu_si256((__m256i *)(void *)(acc + o0), a0);
        _mm256_storeu_si256((__m256i *)(void *)(acc + o0 + 8), a1);
        _mm256_storeu_si256((__m256i *)(void *)(acc + o0 + 16), a2);
        _mm256_storeu_si256((__m256i *)(void *)(acc + o0 + 24), a3);
#elif defined(__SSE2__)
        /* every x86-64: 32 channels in eight registers, PMADDWD is 8 products */
        __m128i a[8];
        for (int j = 0; j < 8; j++) {
            a[j] = _mm_loadu_si128((const __m128i *)(const void *)(c->bias + o0 + 4u * (size_t)j));
        }
        const int16_t *w = wt + o0 * 2u;
        for (size_t k = 0; k < (terms + 1u) / 2u; k++, w += n * 2u) {
            uint32_t pair = (uint16_t)patch[2u * k];
            if (2u * k + 1u < terms) {
                pair |= (uint32_t)(uint16_t)patch[2u * k + 1u] << 16;
            }
            __m128i b = _mm_set1_epi32((int32_t)pair);
            const __m128i *pw = (const __m128i *)(const void *)w;
            for (int j = 0; j < 8; j++) {
                a[j] = _mm_add_epi32(a[j], _mm_madd_epi16(b, _mm_loadu_si128(pw + j)));
            }
        }
        for (int j = 0; j < 8; j++) {
            _mm_storeu_si128((__m128i *)(void *)(acc + o0 + 4u * (size_t)j), a[j]);
        }
#else
        int32_t a[CONV8_BLOCK];
        for (int j = 0; j < CONV8_BLOCK; j++) {
            a[j] = c->bias[o0 + (size_t)j];
        }
        const int16_t *w = wt + o0 * 2u;
        for (size_t k = 0; k < (terms + 1u) / 2u; k++, w += n * 2u) {
            int32_t p0 = patch[2u * k];
            int32_t p1 = 2u * k + 1u < terms ? patch[2u * k + 1u] : 0;
            for (int j = 0; j < CONV8_BLOCK; j++) {
                a[j] += p0 * w[2 * j] + p1 * w[2 * j + 1];
            }
        }
        for (int j = 0; j < CONV8_BLOCK; j++) {
            acc[o0 + (size_t)j] = a[j];
        }
#endif
    }
}

/* Depthwise, one block of `width` channels at o0 (32, or 16 for the operation's last block
 * when only its first half holds channels): the sums in registers over every tap. */
static inline __attribute__((always_inline)) void conv8_dw_block(const struct vnpu_conv8 *c,
                                                                 const int16_t *pixel, size_t n,
                                                                 size_t o0, const int width)
{
    const size_t row = (size_t)c->dy * c->row;
    const size_t col = (size_t)c->dx * c->ic;
    int32_t a[CONV8_BLOCK];
    for (int j = 0; j < width; j++) {
        a[j] = c->bias[o0 + (size_t)j];
    }
    const int16_t *w = c->wt + o0;
    for (int ky = 0; ky < c->ukh; ky++) {
        const int16_t *line = pixel + (size_t)ky * row + o0;
        for (int kx = 0; kx < c->ukw; kx++, w += n) {
            const int16_t *restrict p = line + (size_t)kx * col;
            const int16_t *restrict wk = w;
            for (int j = 0; j < width; j++) {
                a[j] += (int32_t)p[j] * (int32_t)wk[j];
            }
        }
    }
    for (int j = 0; j < width; j++) {
        c->acc[o0 + (size_t)j] = a[j];
    }
}

/* Depthwise: acc[o] = bias + sum over taps of the tap's channel o times its weight; the taps
 * read from the plane in place. */
static void conv8_macs_dw(const struct vnpu_conv8 *c, const int16_t *pixel, size_t n)
{
    /* a block of channels at a time; the padded channels of the last block read past the
     * tap's values (inside the plane's slack, see vnpu_conv8_ifm) against zero weights */
    for (size_t o0 = 0; o0 < n; o0 += CONV8_BLOCK) {
        if ((size_t)c->depth_out - o0 <= 16u) {
            conv8_dw_block(c, pixel, n, o0, 16);
        } else {
            conv8_dw_block(c, pixel, n, o0, CONV8_BLOCK);
        }
    }
}

/* The receptive field of (oy, ox) in the weights' term order [ky][kx][ic]: the plane itself
 * for a 1x1 kernel, else copied into dst by whole rows where a row's taps are adjacent. */
static const int16_t *conv8_field(const struct vnpu_conv8 *c, int oy, int ox, int16_t *dst)
{
    const int16_t *pixel =
        c->plane + (size_t)oy * (size_t)c->sy * c->row + (size_t)ox * (size_t)c->sx * c->ic;
    if (c->ukh * c->ukw == 1) {
        return pixel;
    }
    int16_t *field = dst;
    size_t tap = c->ic * sizeof(int16_t);
    for (int ky = 0; ky < c->ukh; ky++) {
        const int16_t *line = pixel + (size_t)ky * (size_t)c->dy * c->row;
        if (c->dx == 1) {
            memcpy(dst, line, (size_t)c->ukw * tap);
            dst += (size_t)c->ukw * c->ic;
            continue;
        }
        for (int kx = 0; kx < c->ukw; kx++, dst += c->ic) {
            memcpy(dst, line + (size_t)kx * (size_t)c->dx * c->ic, tap);
        }
    }
    return field;
}

#if defined(__AVX512BW__)
/*
 * The fields of a batch of pixels as segs runs of seg_words 32-bit words (an int16 kernel's
 * term pairs, the 8-bit kernel's quads of bytes), seg_stride bytes apart: one run of a copied
 * field, or a kernel row each read in place from the plane (no copy) when its taps are
 * adjacent and a whole number of words.
 */
struct conv8_fields {
    const uint8_t *f[CONV8_PIXELS];
    int segs;
    size_t seg_words, seg_stride;
};

/* acc + the products of b's and w's 32-bit words (`bits` 512 or 256): int16 pairs (VPDPWSSD)
 * or, q8, quads of unsigned bytes times int8 (VPDPBUSD); both wrap like the adds, the sums
 * stay far inside. */
#if CONV8_Q8
#define CONV8_MADD(bits, acc, b, w, q8)                                                            \
    ((q8) ? _mm##bits##_dpbusd_epi32((acc), (b), (w)) : CONV8_MADD##bits((acc), (b), (w)))
#else
#define CONV8_MADD(bits, acc, b, w, q8) ((void)(q8), CONV8_MADD##bits((acc), (b), (w)))
#endif

/* The weight words from channel o0 on (either layout: a 32-bit word a channel, n a row). */
static inline const uint8_t *conv8_words(const struct vnpu_conv8 *c, size_t o0, const int q8)
{
    const void *w = q8 ? (const void *)c->wq : (const void *)c->wt;
    return (const uint8_t *)w + o0 * 4u;
}

/* One block of 32 channels at o0 for np fields; nh = 1: only its first 16 lanes hold
 * channels (the operation's last block), the second half is not computed at all. */
static inline __attribute__((always_inline)) void
conv8_block_at(const struct vnpu_conv8 *c, const struct conv8_fields *fs, size_t n,
               int32_t *restrict acc, const int np, size_t o0, const int nh, const int q8)
{
    const size_t step = n * 4u;
    __m512i a[CONV8_PIXELS][2];
    __m512i b0 = _mm512_loadu_si512((const void *)(c->bias + o0));
    __m512i b1 = _mm512_loadu_si512((const void *)(c->bias + o0 + 16));
    for (int i = 0; i < np; i++) {
        a[i][0] = b0;
        a[i][1] = b1;
    }
    const uint8_t *w = conv8_words(c, o0, q8);
    for (int r = 0; r < fs->segs; r++) {
        const size_t at = (size_t)r * fs->seg_stride;
        for (size_t k = 0; k < fs->seg_words; k++, w += step) {
            __m512i w0 = _mm512_loadu_si512((const void *)w);
            __m512i w1 = nh == 2 ? _mm512_loadu_si512((const void *)(w + 64)) : w0;
            for (int i = 0; i < np; i++) {
                uint32_t word;
                memcpy(&word, fs->f[i] + at + 4u * k, sizeof(word));
                __m512i b = _mm512_set1_epi32((int32_t)word);
                a[i][0] = CONV8_MADD(512, a[i][0], b, w0, q8);
                if (nh == 2) {
                    a[i][1] = CONV8_MADD(512, a[i][1], b, w1, q8);
                }
            }
        }
    }
    for (int i = 0; i < np; i++) {
        _mm512_storeu_si512((void *)(acc + (size_t)i * n + o0), a[i][0]);
        if (nh == 2) {
            _mm512_storeu_si512((void *)(acc + (size_t)i * n + o0 + 16), a[i][1]);
        }
    }
}

/* The operation's last block when it holds at most 8 channels: 256-bit vectors, half the
 * lanes of conv8_block_at's nh = 1 (a 512-bit multiply-add costs about 1.5 256-bit ones). */
static inline __attribute__((always_inline)) void
conv8_block8_at(const struct vnpu_conv8 *c, const struct conv8_fields *fs, size_t n,
                int32_t *restrict acc, const int np, size_t o0, const int q8)
{
    const size_t step = n * 4u;
    __m256i a[CONV8_PIXELS];
    __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)(c->bias + o0));
    for (int i = 0; i < np; i++) {
        a[i] = b0;
    }
    const uint8_t *w = conv8_words(c, o0, q8);
    for (int r = 0; r < fs->segs; r++) {
        const size_t at = (size_t)r * fs->seg_stride;
        for (size_t k = 0; k < fs->seg_words; k++, w += step) {
            __m256i w0 = _mm256_loadu_si256((const __m256i *)(const void *)w);
            for (int i = 0; i < np; i++) {
                uint32_t word;
                memcpy(&word, fs->f[i] + at + 4u * k, sizeof(word));
                a[i] = CONV8_MADD(256, a[i], _mm256_set1_epi32((int32_t)word), w0, q8);
            }
        }
    }
    for (int i = 0; i < np; i++) {
        _mm256_storeu_si256((__m256i *)(void *)(acc + (size_t)i * n + o0), a[i]);
    }
}

/* conv8_macs of np fields at once: one load of each weight vector for all of them. A field's
 * last word may hold values past its terms (the plane and the field buffers have room)
 * against zero weights. */
static inline __attribute__((always_inline)) void conv8_macs_block(const struct vnpu_conv8 *c,
                                                                   const struct conv8_fields *fs,
                                                                   size_t n, int32_t *restrict acc,
                                                                   const int np, const int q8)
{
    for (size_t o0 = 0; o0 < n; o0 += CONV8_BLOCK) {
        if ((size_t)c->depth_out - o0 <= 8u) {
            conv8_block8_at(c, fs, n, acc, np, o0, q8);
        } else if ((size_t)c->depth_out - o0 <= 16u) {
            conv8_block_at(c, fs, n, acc, np, o0, 1, q8);
        } else {
            conv8_block_at(c, fs, n, acc, np, o0, 2, q8);
        }
    }
}

/* conv8_macs_block for 1..CONV8_PIXELS fields: constant counts, each its own registers. */
static inline __attribute__((always_inline)) void conv8_macs_count(const struct vnpu_conv8 *c,
                                                                   const struct conv8_fields *fs,
                                                                   size_t n, int count,
                                                                   const int q8)
{
#define CONV8_COUNT(np)                                                                            \
    case np:                                                                                       \
        conv8_macs_block(c, fs, n, c->acc, np, q8);                                                \
        return
    switch (count) {
        CONV8_COUNT(8);
        CONV8_COUNT(7);
        CONV8_COUNT(6);
        CONV8_COUNT(5);
        CONV8_COUNT(4);
        CONV8_COUNT(3);
        CONV8_COUNT(2);
    default:
        conv8_macs_block(c, fs, n, c->acc, 1, q8);
    }
#undef CONV8_COUNT
}

/* conv8_macs_count of the int16 kernel (one copy of its variants). */
static void conv8_macs_i16(const struct vnpu_conv8 *c, const struct conv8_fields *fs, size_t n,
                           int count)
{
    conv8_macs_count(c, fs, n, count, 0);
}
#endif

#if CONV8_Q8
/* conv8_macs_count of the 8-bit kernel (one copy of its variants). */
static void conv8_macs_q8(const struct vnpu_conv8 *c, const struct conv8_fields *fs, size_t n,
                          int count)
{
    conv8_macs_count(c, fs, n, count, 1);
}

/* len bytes from src to dst in copies of 16, up to 15 past both: a call to memcpy for a few
 * bytes costs more. The plane and the field buffers have the room (vnpu_conv8_ifm's slack,
 * CONV8_BLOCK bytes after each field), the next run overwrites what went past. */
static inline void conv8_copy16(uint8_t *dst, const uint8_t *src, size_t len)
{
    for (size_t j = 0; j < len; j += 16u) {
        memcpy(dst + j, src + j, 16u);
    }
}

/* The receptive field of (oy, ox) on the byte plane where its taps are not adjacent (a
 * dilated kernel): kernel row r at dst + r * qrow * 4, a tap at a time. */
static const uint8_t *conv8_field8(const struct vnpu_conv8 *c, int oy, int ox, uint8_t *dst)
{
    const uint8_t *pixel =
        c->plane8 + (size_t)oy * (size_t)c->sy * c->row + (size_t)ox * (size_t)c->sx * c->ic;
    for (int ky = 0; ky < c->ukh; ky++) {
        const uint8_t *line = pixel + (size_t)ky * (size_t)c->dy * c->row;
        uint8_t *to = dst + (size_t)ky * c->qrow * 4u;
        for (int kx = 0; kx < c->ukw; kx++) {
            conv8_copy16(to + (size_t)kx * c->ic, line + (size_t)kx * (size_t)c->dx * c->ic, c->ic);
        }
    }
    return dst;
}

/* The MACs of `count` pixels from (oy, ox) on the byte plane into c->acc: each kernel row's
 * quads read in place where its taps are adjacent (the quads past a row's end against zero
 * weights), else from a copy. */
static void conv8_q8_macs(const struct vnpu_conv8 *c, int oy, int ox, int count, size_t n)
{
    struct conv8_fields fs;
    fs.segs = c->ukh;
    fs.seg_words = c->qrow;
    if (c->dx == 1 || c->ukw == 1) {
        fs.seg_stride = (size_t)c->dy * c->row;
        for (int i = 0; i < count; i++) {
            fs.f[i] = c->plane8 + (size_t)oy * (size_t)c->sy * c->row +
                      (size_t)(ox + i) * (size_t)c->sx * c->ic;
        }
    } else {
        fs.seg_stride = c->qrow * 4u;
        for (int i = 0; i < count; i++) {
            fs.f[i] = conv8_field8(c, oy, ox + i, c->patch8 + (size_t)i * c->field8);
        }
    }
    conv8_macs_q8(c, &fs, n, count);
}
#endif

/* vnpu_out8 of channels [o0, o0 + d) over the arrays: channel o0 + i's byte at out[i]. */
static void conv8_out(const struct vnpu_conv8 *c, const int32_t *restrict acc, size_t o0, size_t d,
                      uint8_t *restrict out, int32_t zp, int32_t lo, int32_t hi)
{
    acc += o0;
    const int32_t *restrict mult = c->mult + o0;
    const int32_t *restrict shift = c->shift + o0;
    const int64_t *restrict c_pos = c->c_pos + o0;
    const int64_t *restrict c_neg = c->c_neg + o0;
    size_t o = 0;
#if defined(__AVX512F__) && defined(__AVX512VL__)
    /* eight channels a step in 64-bit lanes: the same operations as the loop below */
    const __m256i vzp = _mm256_set1_epi32(zp);
    const __m256i vlo = _mm256_set1_epi32(lo);
    const __m256i vhi = _mm256_set1_epi32(hi);
    for (; o + 8u <= d; o += 8u) {
        __m512i a = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(acc + o)));
        __m512i m = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(mult + o)));
        __m512i p = _mm512_mul_epi32(a, m); /* int32 x int32 -> int64, signed */
        __mmask8 neg = _mm512_cmplt_epi64_mask(p, _mm512_setzero_si512());
        p = _mm512_add_epi64(p, _mm512_mask_blend_epi64(neg, _mm512_loadu_si512(c_pos + o),
                                                        _mm512_loadu_si512(c_neg + o)));
        __m256i h = _mm512_cvtepi64_epi32(_mm512_srai_epi64(p, 32)); /* (int32_t)(p >> 32) */
        h = _mm256_srav_epi32(h, _mm256_loadu_si256((const __m256i *)(shift + o)));
        h = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(h, vzp), vlo), vhi);
        _mm_storel_epi64((__m128i *)(void *)(out + o), _mm256_cvtepi32_epi8(h));
    }
#endif
    for (; o < d; o++) {
        int64_t p = (int64_t)acc[o] * (int64_t)mult[o];
        p += p < 0 ? c_neg[o] : c_pos[o];
        int32_t v = ((int32_t)(p >> 32) >> shift[o]) + zp;
        out[o] = (uint8_t)(v < lo ? lo : (v > hi ? hi : v));
    }
}

/* The MACs of `count` pixels from (oy, ox) on the int16 plane into c->acc. */
static void conv8_i16_macs(const struct vnpu_conv8 *c, int oy, int ox, int count, size_t n)
{
#if defined(__AVX512BW__)
    /* constant pixel counts: each call its own registers */
    if (count >= 2) {
        struct conv8_fields fs;
        size_t run = (size_t)c->ukw * c->ic;
        if (c->ukh * c->ukw > 1 && c->dx == 1 && run % 2u == 0u) {
            fs.segs = c->ukh;
            fs.seg_words = run / 2u;
            fs.seg_stride = (size_t)c->dy * c->row * sizeof(int16_t);
            for (int i = 0; i < count; i++) {
                const int16_t *f = c->plane + (size_t)oy * (size_t)c->sy * c->row +
                                   (size_t)(ox + i) * (size_t)c->sx * c->ic;
                fs.f[i] = (const uint8_t *)(const void *)f;
            }
        } else {
            fs.segs = 1;
            fs.seg_words = (c->terms + 1u) / 2u;
            fs.seg_stride = 0;
            for (int i = 0; i < count; i++) {
                const int16_t *f = conv8_field(c, oy, ox + i, c->patch + (size_t)i * c->field);
                fs.f[i] = (const uint8_t *)(const void *)f;
            }
        }
        conv8_macs_i16(c, &fs, n, count);
        return;
    }
#endif
    const int16_t *f[CONV8_PIXELS];
    for (int i = 0; i < count; i++) {
        f[i] = conv8_field(c, oy, ox + i, c->patch + (size_t)i * c->field);
    }
    for (int i = 0; i < count; i++) {
        conv8_macs(c, f[i], n, c->acc + (size_t)i * n);
    }
}

/* The accumulators (bias included) of OFM pixel (oy, ox) and the next ones of its row, at
 * c->acc, n apart: how many (1 to CONV8_PIXELS; a depthwise one pixel). */
static int conv8_batch(const struct vnpu_conv8 *c, int oy, int ox, size_t n)
{
    if (c->depthwise) {
        const int16_t *pixel =
            c->plane + (size_t)oy * (size_t)c->sy * c->row + (size_t)ox * (size_t)c->sx * c->ic;
        conv8_macs_dw(c, pixel, n);
        return 1;
    }
    int count = c->ow - ox < CONV8_PIXELS ? c->ow - ox : CONV8_PIXELS;
    count = count < 1 ? 1 : count;
#if CONV8_Q8
    if (c->plane8 != NULL) {
        conv8_q8_macs(c, oy, ox, count, n);
        return count;
    }
#endif
    conv8_i16_macs(c, oy, ox, count, n);
    return count;
}

const uint8_t *vnpu_conv8_pixel(const struct vnpu_conv8 *c, int oy, int ox, int32_t zp, int32_t lo,
                                int32_t hi)
{
    size_t n = ((size_t)c->depth_out + CONV8_BLOCK - 1u) / CONV8_BLOCK * CONV8_BLOCK;
    if (!c->depthwise && oy == conv8_block_oy && ox >= conv8_block_ox &&
        ox < conv8_block_ox + conv8_block_n) {
        return c->out + (size_t)(ox - conv8_block_ox) * n;
    }
    int count;
    return vnpu_conv8_pixels(c, oy, ox, zp, lo, hi, &count);
}

const uint8_t *vnpu_conv8_pixels(const struct vnpu_conv8 *c, int oy, int ox, int32_t zp, int32_t lo,
                                 int32_t hi, int *count)
{
    size_t n = ((size_t)c->depth_out + CONV8_BLOCK - 1u) / CONV8_BLOCK * CONV8_BLOCK;
    /* this pixel and the next ones of its row (the callers go along rows) */
    int np = conv8_batch(c, oy, ox, n);
    for (int i = 0; i < np; i++) {
        conv8_out(c, c->acc + (size_t)i * n, 0, (size_t)c->depth_out, c->out + (size_t)i * n, zp,
                  lo, hi);
    }
    conv8_block_oy = c->depthwise ? -1 : oy;
    conv8_block_ox = ox;
    conv8_block_n = np;
    *count = np;
    return c->out;
}

void vnpu_conv8_run(const struct vnpu_conv8 *c, const struct vnpu_conv8_ofm *o, int32_t zp,
                    int32_t lo, int32_t hi)
{
    /* the whole operation in one call: no call, batch look-up or copy of its bytes per
     * pixel (most of a small convolution's time), the output stage into the OFM itself */
    const size_t n = ((size_t)c->depth_out + CONV8_BLOCK - 1u) / CONV8_BLOCK * CONV8_BLOCK;
    const size_t d = (size_t)c->depth_out;
    conv8_block_oy = -1;
    for (int oy = 0; oy < o->oh; oy++) {
        uint8_t *row = o->at + (ptrdiff_t)oy * o->sy;
        for (int ox = 0; ox < c->ow;) {
            int count = conv8_batch(c, oy, ox, n);
            for (int i = 0; i < count; i++, ox++) {
                const int32_t *acc = c->acc + (size_t)i * n;
                uint8_t *po = row + (ptrdiff_t)ox * o->sx;
                if (!o->brick) {
                    conv8_out(c, acc, 0, d, po, zp, lo, hi);
                    continue;
                }
                for (size_t c0 = 0; c0 < d; c0 += 16u) {
                    conv8_out(c, acc, c0, d - c0 < 16u ? d - c0 : 16u,
                              po + (ptrdiff_t)(c0 >> 4) * o->sc, zp, lo, hi);
                }
            }
        }
    }
}
#endif

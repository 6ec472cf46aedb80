/* ethosu-porting-kit virtual NPU: the feature-map and region checks every product makes. */
#include "common/fm.h"

#include "common/num.h"

#include <stdio.h>
#include <string.h>

int vnpu_fm_check(const struct fm *f, const char *what, char *why, size_t len)
{
    if (f->h <= 0 || f->w <= 0 || f->c <= 0) {
        return 0;
    }
    /* per tile: rows and columns it covers */
    int rows[4][2] = {{0, f->h0}, {0, f->h1}, {f->h0, f->h}, {f->h1, f->h}};
    int cols[4][2] = {{0, f->w0}, {f->w0, f->w}, {0, f->w0}, {f->w0, f->w}};
    for (int t = 0; t < 4; t++) {
        int y0 = rows[t][0];
        int y1 = rows[t][1] < f->h ? rows[t][1] : f->h;
        int x0 = cols[t][0];
        int x1 = cols[t][1] < f->w ? cols[t][1] : f->w;
        if (y1 <= y0 || x1 <= x0) {
            continue;
        }
        /* within tile t (fm_offset's t: rows from y0, columns from x0) an offset is base[t] +
         * y * sy + x * sx + a channel term, so its extremes are the sums of each term's: 2 + 2
         * + 4 values instead of 16 offsets */
        int64_t ys[2] = {0, (int64_t)(y1 - 1 - y0) * f->sy};
        int64_t xs[2] = {0, (int64_t)(x1 - 1 - x0) * f->sx};
        int cs[4] = {0, f->c - 1, f->c > 16 ? 15 : f->c - 1, f->c > 16 ? 16 : 0};
        int64_t lo = f->base[t] + (ys[0] < ys[1] ? ys[0] : ys[1]) + (xs[0] < xs[1] ? xs[0] : xs[1]);
        int64_t hi = f->base[t] + (ys[0] > ys[1] ? ys[0] : ys[1]) + (xs[0] > xs[1] ? xs[0] : xs[1]);
        int64_t clo = INT64_MAX;
        int64_t chi = INT64_MIN;
        for (int i = 0; i < 4; i++) {
            int64_t o = f->brick ? (int64_t)(cs[i] >> 4) * f->sc + (int64_t)(cs[i] & 15) * f->elem
                                 : (int64_t)cs[i] * f->elem;
            clo = o < clo ? o : clo;
            chi = o > chi ? o : chi;
        }
        lo += clo;
        hi += chi;
        if (lo < 0 || hi + f->elem > (int64_t)f->size) {
            snprintf(why, len, "%s tile %d spans bytes [%s, %s) outside its region of %lu bytes",
                     what, t, VNPU_I64(lo), VNPU_I64(hi + f->elem), (unsigned long)f->size);
            return -1;
        }
    }
    return 0;
}

int vnpu_fm_precision(struct fm *f, uint32_t prec, int bits, const char *what, char *why,
                      size_t len)
{
    uint32_t format = (prec >> 6) & 3u;
    f->elem = 1 << bits;
    f->is_signed = (int)(prec & 1u);
    f->brick = (int)format;
    if (bits == 3) {
        snprintf(why, len, "%s precision B64 is not supported", what);
        return -1;
    }
    if (format > 1) {
        snprintf(why, len, "%s activation_format %lu is not defined", what, (unsigned long)format);
        return -1;
    }
    if (!f->is_signed && f->elem == 4) {
        snprintf(why, len, "%s unsigned 32-bit precision is not supported", what);
        return -1;
    }
    return 0;
}

int vnpu_region(const struct vnpu_env *env, unsigned region, uint8_t **mem, size_t *size,
                const char *what, char *why, size_t len)
{
    if (region >= (unsigned)env->num_regions || env->region[region] == NULL) {
        snprintf(why, len, "%s uses region %u but only %d base addresses were given", what, region,
                 env->num_regions);
        return -1;
    }
    *mem = env->region[region];
    *size = env->region_size[region];
    return 0;
}

/* ---- box copies ---------------------------------------------------------------------------- */

#if defined(__SSE2__)
#include <immintrin.h>

#if defined(__AVX512BW__) && defined(__AVX512VL__)
/* n < 8 bytes at p: a masked load and store (no byte outside them is touched) */
#define FM_LOAD8(p, n)                                                                             \
    ((n) == 8 ? _mm_loadl_epi64((const __m128i *)(const void *)(p))                                \
              : _mm_maskz_loadu_epi8((__mmask16)((1u << (n)) - 1u), (const void *)(p)))
#define FM_STORE8(p, v, n)                                                                         \
    ((n) == 8 ? _mm_storel_epi64((__m128i *)(void *)(p), (v))                                      \
              : _mm_mask_storeu_epi8((void *)(p), (__mmask16)((1u << (n)) - 1u), (v)))
#define FM_PARTIAL 1 /* blocks of fewer than 8 x 8 bytes take the vector path too */
#else
#define FM_LOAD8(p, n) _mm_loadl_epi64((const __m128i *)(const void *)(p))
#define FM_STORE8(p, v, n) _mm_storel_epi64((__m128i *)(void *)(p), (v))
#define FM_PARTIAL 0
#endif

/* One block of dst[y * dr + x] = src[x * sr + y], y < ny, x < nx (at most 8 each): the 8 x 8
 * byte transpose in 12 unpacks. */
static inline void transpose_block(const uint8_t *src, ptrdiff_t sr, uint8_t *dst, ptrdiff_t dr,
                                   int ny, int nx)
{
    __m128i r[8];
    for (int i = 0; i < 8; i++) {
        r[i] = i < nx ? FM_LOAD8(src + (ptrdiff_t)i * sr, ny) : _mm_setzero_si128();
    }
    __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]);
    __m128i a1 = _mm_unpacklo_epi8(r[2], r[3]);
    __m128i a2 = _mm_unpacklo_epi8(r[4], r[5]);
    __m128i a3 = _mm_unpacklo_epi8(r[6], r[7]);
    __m128i b0 = _mm_unpacklo_epi16(a0, a1);
    __m128i b1 = _mm_unpackhi_epi16(a0, a1);
    __m128i b2 = _mm_unpacklo_epi16(a2, a3);
    __m128i b3 = _mm_unpackhi_epi16(a2, a3);
    __m128i c[4] = {_mm_unpacklo_epi32(b0, b2), _mm_unpackhi_epi32(b0, b2),
                    _mm_unpacklo_epi32(b1, b3), _mm_unpackhi_epi32(b1, b3)};
    for (int j = 0; j < ny; j++) {
        __m128i v = (j & 1) ? _mm_srli_si128(c[j >> 1], 8) : c[j >> 1];
        FM_STORE8(dst + (ptrdiff_t)j * dr, v, nx);
    }
}
#endif

/* 8 x 8 bytes a block where the host has vectors (the byte loop was most of the transposing
 * operations' time). */
void vnpu_transpose_bytes(const uint8_t *src, ptrdiff_t sr, uint8_t *dst, ptrdiff_t dr, int h,
                          int w)
{
    int y0 = 0;
#if defined(__SSE2__)
    for (; FM_PARTIAL ? y0 < h : y0 + 8 <= h; y0 += 8) {
        int ny = h - y0 < 8 ? h - y0 : 8;
        int x0 = 0;
        for (; FM_PARTIAL ? x0 < w : x0 + 8 <= w; x0 += 8) {
            transpose_block(src + (ptrdiff_t)x0 * sr + y0, sr, dst + (ptrdiff_t)y0 * dr + x0, dr,
                            ny, w - x0 < 8 ? w - x0 : 8);
        }
        for (int y = y0; y < y0 + ny; y++) {
            for (int x = x0; x < w; x++) {
                dst[(ptrdiff_t)y * dr + x] = src[(ptrdiff_t)x * sr + y];
            }
        }
    }
#endif
    for (int y = y0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            dst[(ptrdiff_t)y * dr + x] = src[(ptrdiff_t)x * sr + y];
        }
    }
}

/* Every element of `bytes` bytes (k <= bytes <= 2k) as two copies of a constant k bytes that
 * overlap in the middle (the same bytes written twice): a call to memcpy, or a switch on the
 * size, per element was most of a multi-channel transpose's time. */
static inline void copy_elems(const uint8_t *src, ptrdiff_t isy, ptrdiff_t isx, uint8_t *dst,
                              ptrdiff_t osy, ptrdiff_t osx, int h, int w, size_t bytes,
                              const size_t k)
{
    for (int y = 0; y < h; y++) {
        const uint8_t *s = src + (ptrdiff_t)y * isy;
        uint8_t *d = dst + (ptrdiff_t)y * osy;
        for (int x = 0; x < w; x++, s += isx, d += osx) {
            memcpy(d, s, k);
            memcpy(d + bytes - k, s + bytes - k, k);
        }
    }
}

void vnpu_copy_box(const uint8_t *src, ptrdiff_t isy, ptrdiff_t isx, uint8_t *dst, ptrdiff_t osy,
                   ptrdiff_t osx, int h, int w, size_t bytes)
{
    if (osy == (ptrdiff_t)bytes && osx != (ptrdiff_t)bytes) {
        /* the OFM's adjacent elements along the inner loop */
        int t = h;
        h = w;
        w = t;
        ptrdiff_t u = isy;
        isy = isx;
        isx = u;
        osy = osx;
        osx = (ptrdiff_t)bytes;
    }
    if (isx == (ptrdiff_t)bytes && osx == (ptrdiff_t)bytes) {
        for (int y = 0; y < h; y++) {
            memcpy(dst + (ptrdiff_t)y * osy, src + (ptrdiff_t)y * isy, (size_t)w * bytes);
        }
        return;
    }
    if (bytes == 1 && osx == 1 && isy == 1) {
        vnpu_transpose_bytes(src, isx, dst, osy, h, w);
        return;
    }
    if (bytes == 1) {
        copy_elems(src, isy, isx, dst, osy, osx, h, w, 1, 1);
    } else if (bytes < 4) {
        copy_elems(src, isy, isx, dst, osy, osx, h, w, bytes, 2);
    } else if (bytes < 8) {
        copy_elems(src, isy, isx, dst, osy, osx, h, w, bytes, 4);
    } else if (bytes < 16) {
        copy_elems(src, isy, isx, dst, osy, osx, h, w, bytes, 8);
    } else if (bytes <= 32) {
        copy_elems(src, isy, isx, dst, osy, osx, h, w, bytes, 16);
    } else {
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                memcpy(dst + (ptrdiff_t)y * osy + (ptrdiff_t)x * osx,
                       src + (ptrdiff_t)y * isy + (ptrdiff_t)x * isx, bytes);
            }
        }
    }
}

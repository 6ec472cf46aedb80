/* ethosu-porting-kit virtual NPU: the convolutions' 8-bit firmware kernel, every build (the
 * host library takes common/conv8.c's vector kernel where it has one, and this one else). */
#include "common/conv8.h"

#include <string.h>

/*
 * QEMU, where firmware runs the virtual NPU, chains its translated blocks only within a 1 KiB
 * page on an M-profile core: any other jump costs a lookup (as many host instructions as
 * ~20 guest ones). Everything a pixel runs is this one function, aligned to a page: GCC 12's
 * -O3 convolution kernel is about 1 KiB (0x406 bytes for the M55), its loops in the first
 * page and only cold entry code past it; the depthwise kernel is smaller.
 */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__GNUC__)
#define CONV8_FW_PAGE __attribute__((aligned(1024)))
#else
#define CONV8_FW_PAGE
#endif

/* QEMU 7.2 runs SMLABB as a helper call (for its Q flag), MUL and ADD inline: an empty asm
 * hides that a value is 16-bit, so the compiler keeps MLA for its products. */
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__)
#define CONV8_OPAQUE(v) __asm__("" : "+r"(v))
#else
#define CONV8_OPAQUE(v) ((void)0)
#endif

#if defined(__ARM_FEATURE_SIMD32) && defined(__ARMEL__)
#if defined(__GNUC__)
/*
 * lo += the products of the pairs a and b, as SMLALD with a high word `hi` nobody reads: the
 * low word of a 64-bit sum is the 32-bit sum whatever the high word holds (the 8-bit path's
 * sums stay inside 32 bits). The same cost as SMLAD on a Cortex-M core; in QEMU 7.2 fewer
 * host instructions, as it sets no Q flag.
 */
#define CONV8_MAC2(lo, hi, a, b)                                                                   \
    __asm__("smlald %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(a), "r"(b))
#else
#define CONV8_MAC2(lo, hi, a, b) ((void)(hi), (lo) = __smlad((a), (b), (lo)))
#endif
#endif

/* The bias of an operation without one: every channel reads it, 0 bytes apart. */
static const int64_t conv8_no_bias = 0;

/*
 * The operation's values as locals, in the form the loops use: the channel records as
 * pointers that walk `stride` bytes a channel. The output stores are bytes, which may alias
 * anything: read through *k, every value would be loaded again after each store (about
 * half the instructions of a pixel, each load a softmmu lookup in QEMU, and a load on a
 * real core too).
 */
struct conv8_run {
    const char *bias; /* channel 0's int64 bias */
    size_t bstride;   /* bytes between channels' biases (0: no bias) */
    const char *rec;  /* channel 0's struct vnpu_rescale32 */
    size_t stride;
    int32_t zp, lo, hi;
    int brick; /* the OFM's channels in runs of 16, sc bytes apart (else cs bytes apart) */
    ptrdiff_t sc, cs;
};

static inline struct conv8_run conv8_run_of(const struct vnpu_conv8_fw *k)
{
    struct conv8_run r = {
        .bias = (const char *)(const void *)(k->bias != NULL ? k->bias : &conv8_no_bias),
        .bstride = k->bias != NULL ? k->stride : 0u,
        .rec = (const char *)(const void *)k->r32,
        .stride = k->stride,
        .zp = k->zp,
        .lo = k->lo,
        .hi = k->hi,
        .brick = k->brick,
        .sc = k->sc,
        .cs = k->cs,
    };
    return r;
}

/* Channel j's (from the run's pointers) bias and output byte. */
static inline int32_t conv8_bias(const struct conv8_run *r, int j)
{
    return (int32_t)*(const int64_t *)(const void *)(r->bias + (size_t)j * r->bstride);
}

static inline uint8_t conv8_out8(const struct conv8_run *r, int j, int32_t acc)
{
    const struct vnpu_rescale32 *q =
        (const struct vnpu_rescale32 *)(const void *)(r->rec + (size_t)j * r->stride);
    /* vnpu_out8's clamp as max then min: the same for lo <= hi (every caller's: an output
     * stage without LUT whose clamps overlap), and no branch out of line (on another page) */
    int32_t v = vnpu_rescale32(q, acc) + r->zp;
    v = v > r->lo ? v : r->lo;
    v = v < r->hi ? v : r->hi;
    return (uint8_t)v;
}

static inline void conv8_next(struct conv8_run *r, int channels)
{
    r->bias += (size_t)channels * r->bstride;
    r->rec += (size_t)channels * r->stride;
}

/* The offset of channel oc's output byte in the pixel. */
static inline ptrdiff_t conv8_off(const struct conv8_run *r, int oc)
{
    return r->brick ? (ptrdiff_t)(oc >> 4) * r->sc + (oc & 15) : (ptrdiff_t)oc * r->cs;
}

/*
 * s0..s3 += field . the four weight rows from w, `terms` apart: each load of the field serves
 * four channels. Cortex-M with DSP: two products an instruction (CONV8_MAC2) on word loads.
 */
static inline void conv8_dot4(const int16_t *field, const int16_t *w, size_t terms, int32_t s[4])
{
    /* the sums as locals, unlike conv8_dot2x2: on s[] directly, the host's vectorised copy
     * of the kernel is a register move longer per four channels (GCC 12, -O3) */
    int32_t s0 = s[0];
    int32_t s1 = s[1];
    int32_t s2 = s[2];
    int32_t s3 = s[3];
    size_t i = 0;
#if defined(__ARM_FEATURE_SIMD32) && defined(__ARMEL__)
    const vnpu_pair16 *pa = (const vnpu_pair16 *)(const void *)field;
    const vnpu_pair16 *p0 = (const vnpu_pair16 *)(const void *)w;
    const vnpu_pair16 *p1 = (const vnpu_pair16 *)(const void *)(w + terms);
    const vnpu_pair16 *p2 = (const vnpu_pair16 *)(const void *)(w + 2u * terms);
    const vnpu_pair16 *p3 = (const vnpu_pair16 *)(const void *)(w + 3u * terms);
    int32_t hi = 0;
    for (size_t j = 0; j < terms / 2u; j++) {
        int16x2_t x = pa[j];
        CONV8_MAC2(s0, hi, x, p0[j]);
        CONV8_MAC2(s1, hi, x, p1[j]);
        CONV8_MAC2(s2, hi, x, p2[j]);
        CONV8_MAC2(s3, hi, x, p3[j]);
    }
    i = terms & ~(size_t)1u;
#endif
    for (; i < terms; i++) {
        int32_t v = field[i];
        s0 += v * w[i];
        s1 += v * w[terms + i];
        s2 += v * w[2u * terms + i];
        s3 += v * w[3u * terms + i];
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
}

CONV8_FW_PAGE void vnpu_conv8_fw_conv(const struct vnpu_conv8_fw *k, const int16_t *field,
                                      uint8_t *po)
{
    const size_t terms = k->terms;
    const int depth_out = k->depth_out;
    const int16_t *w = k->weights;
    struct conv8_run r = conv8_run_of(k);
    /* four channels from a multiple of 4 are adjacent in a run of 16, or cs bytes apart */
    const ptrdiff_t step = r.brick ? 1 : r.cs;
    int oc = 0;
    for (; oc + 3 < depth_out; oc += 4) {
        int32_t s[4] = {conv8_bias(&r, 0), conv8_bias(&r, 1), conv8_bias(&r, 2), conv8_bias(&r, 3)};
        conv8_dot4(field, w, terms, s);
        uint8_t *p = po + conv8_off(&r, oc);
        for (int j = 0; j < 4; j++) {
            p[j * step] = conv8_out8(&r, j, s[j]);
        }
        w += 4u * terms;
        conv8_next(&r, 4);
    }
    for (; oc < depth_out; oc++) { /* the last 1-3 channels: short, not worth the code */
        int32_t acc = conv8_bias(&r, 0);
        for (size_t i = 0; i < terms; i++) {
            acc += (int32_t)field[i] * w[i];
        }
        po[conv8_off(&r, oc)] = conv8_out8(&r, 0, acc);
        w += terms;
        conv8_next(&r, 1);
    }
}

/*
 * Two pixels' sums of two channels, s = {p0 c0, p0 c1, p1 c0, p1 c1} += fields f0, f1 . the
 * weight rows w and w + terms: each load serves two products of pairs (four loads for eight
 * products, against five in conv8_dot4); two pairs an iteration, so the four pointers
 * step once for both.
 */
static inline void conv8_dot2x2(const int16_t *f0, const int16_t *f1, const int16_t *w,
                                size_t terms, int32_t s[4])
{
    size_t i = 0;
#if defined(__ARM_FEATURE_SIMD32) && defined(__ARMEL__)
    const vnpu_pair16 *pa = (const vnpu_pair16 *)(const void *)f0;
    const vnpu_pair16 *pb = (const vnpu_pair16 *)(const void *)f1;
    const vnpu_pair16 *p0 = (const vnpu_pair16 *)(const void *)w;
    const vnpu_pair16 *p1 = (const vnpu_pair16 *)(const void *)(w + terms);
    size_t j = 0;
    int32_t hi = 0; /* the high words of CONV8_MAC2's SMLALD: shared, never read */
    for (; j + 2u <= terms / 2u; j += 2u, pa += 2, pb += 2, p0 += 2, p1 += 2) {
        CONV8_MAC2(s[0], hi, pa[0], p0[0]);
        CONV8_MAC2(s[1], hi, pa[0], p1[0]);
        CONV8_MAC2(s[2], hi, pb[0], p0[0]);
        CONV8_MAC2(s[3], hi, pb[0], p1[0]);
        CONV8_MAC2(s[0], hi, pa[1], p0[1]);
        CONV8_MAC2(s[1], hi, pa[1], p1[1]);
        CONV8_MAC2(s[2], hi, pb[1], p0[1]);
        CONV8_MAC2(s[3], hi, pb[1], p1[1]);
    }
    if (j < terms / 2u) {
        CONV8_MAC2(s[0], hi, pa[0], p0[0]);
        CONV8_MAC2(s[1], hi, pa[0], p1[0]);
        CONV8_MAC2(s[2], hi, pb[0], p0[0]);
        CONV8_MAC2(s[3], hi, pb[0], p1[0]);
    }
    i = terms & ~(size_t)1u;
#endif
    for (; i < terms; i++) {
        s[0] += f0[i] * w[i];
        s[1] += f0[i] * w[terms + i];
        s[2] += f1[i] * w[i];
        s[3] += f1[i] * w[terms + i];
    }
}

CONV8_FW_PAGE void vnpu_conv8_fw_conv2(const struct vnpu_conv8_fw *k, const int16_t *f0,
                                       const int16_t *f1, uint8_t *po0, uint8_t *po1)
{
    const size_t terms = k->terms;
    const int depth_out = k->depth_out;
    const int16_t *w = k->weights;
    struct conv8_run r = conv8_run_of(k);
    /* two channels from an even one are adjacent in a run of 16, or cs bytes apart */
    const ptrdiff_t step = r.brick ? 1 : r.cs;
    int oc = 0;
    for (; oc + 1 < depth_out; oc += 2) {
        int32_t b0 = conv8_bias(&r, 0);
        int32_t b1 = conv8_bias(&r, 1);
        int32_t s[4] = {b0, b1, b0, b1};
        conv8_dot2x2(f0, f1, w, terms, s);
        ptrdiff_t off = conv8_off(&r, oc);
        po0[off] = conv8_out8(&r, 0, s[0]);
        po0[off + step] = conv8_out8(&r, 1, s[1]);
        po1[off] = conv8_out8(&r, 0, s[2]);
        po1[off + step] = conv8_out8(&r, 1, s[3]);
        w += 2u * terms;
        conv8_next(&r, 2);
    }
    if (oc < depth_out) { /* an odd last channel */
        int32_t a0 = conv8_bias(&r, 0);
        int32_t a1 = a0;
        for (size_t i = 0; i < terms; i++) {
            a0 += (int32_t)f0[i] * w[i];
            a1 += (int32_t)f1[i] * w[i];
        }
        ptrdiff_t off = conv8_off(&r, oc);
        po0[off] = conv8_out8(&r, 0, a0);
        po1[off] = conv8_out8(&r, 0, a1);
    }
}

CONV8_FW_PAGE void vnpu_conv8_fw_depthwise(const struct vnpu_conv8_fw *k, const int16_t *field,
                                           uint8_t *po)
{
    const size_t taps = k->terms;
    const size_t ic = k->ic;
    const int depth_out = k->depth_out;
    const int16_t *w = k->weights;
    struct conv8_run r = conv8_run_of(k);
    for (int oc = 0; oc < depth_out; oc++) {
        int32_t acc = conv8_bias(&r, 0);
        const int16_t *f = field + oc;
        for (size_t t = 0; t < taps; t++) {
            int32_t v = f[t * ic];
            CONV8_OPAQUE(v);
            acc += v * w[t];
        }
        po[conv8_off(&r, oc)] = conv8_out8(&r, 0, acc);
        w += taps;
        conv8_next(&r, 1);
    }
}

/* Channel j (0, 1) of a halfword of two 8-bit IFM values. */
static inline int32_t conv8_byte(uint32_t x, int j, const int is_signed)
{
    uint32_t b = (x >> (8 * j)) & 0xffu;
    return is_signed ? (int32_t)(int8_t)b : (int32_t)b;
}

/*
 * vnpu_conv8_fw_dw8 for signed or unsigned IFM values: two channels a step, their two IFM
 * values of a tap in one halfword load (adjacent in NHWC and in a 16-channel run), the zero
 * point taken off in registers: 3 loads for 2 products, against 4 loads and a store per
 * product for a gathered field and the kernel reading it. (Four channels a step would need
 * more registers than the core has: the accumulators went to the stack.)
 */
static inline __attribute__((always_inline)) void
conv8_dw8(const struct vnpu_conv8_fw *k, const uint8_t *src, uint8_t *po, const int is_signed,
          const int ukw, const int ky0, const int ky1, const int kx0, const int kx1)
{
    const size_t taps = k->terms;
    const int depth_out = k->depth_out;
    const ptrdiff_t ystep = k->ystep;
    const ptrdiff_t xstep = k->xstep;
    const int32_t zp = k->ifm_zp;
    const int ibrick = k->ifm_brick;
    const ptrdiff_t isc = k->ifm_sc;
    const int16_t *w = k->weights;
    struct conv8_run r = conv8_run_of(k);
    const ptrdiff_t step = r.brick ? 1 : r.cs;
    int oc = 0;
    for (; oc + 1 < depth_out; oc += 2) {
        const uint8_t *p = src + (ibrick ? (ptrdiff_t)(oc >> 4) * isc + (oc & 15) : oc);
        int32_t a0 = conv8_bias(&r, 0);
        int32_t a1 = conv8_bias(&r, 1);
        const int16_t *wr = w + ky0 * ukw;
        for (int ky = ky0; ky < ky1; ky++, p += ystep, wr += ukw) {
            const uint8_t *q = p;
            const int16_t *wt = wr + kx0;
            for (int kx = kx0; kx < kx1; kx++, q += xstep, wt++) {
                /* channel oc's byte in bits 0-7 on every host (a memcpy would swap the
                 * channels on a big-endian one); one halfword load on a little-endian core */
                const uint16_t x = (uint16_t)(q[0] | (q[1] << 8));
                a0 += (conv8_byte(x, 0, is_signed) - zp) * wt[0];
                a1 += (conv8_byte(x, 1, is_signed) - zp) * wt[taps];
            }
        }
        uint8_t *o = po + conv8_off(&r, oc);
        o[0] = conv8_out8(&r, 0, a0);
        o[step] = conv8_out8(&r, 1, a1);
        w += 2u * taps;
        conv8_next(&r, 2);
    }
    if (oc < depth_out) { /* an odd last channel */
        const uint8_t *p = src + (ibrick ? (ptrdiff_t)(oc >> 4) * isc + (oc & 15) : oc);
        int32_t acc = conv8_bias(&r, 0);
        const int16_t *wr = w + ky0 * ukw;
        for (int ky = ky0; ky < ky1; ky++, p += ystep, wr += ukw) {
            for (int kx = kx0; kx < kx1; kx++) {
                acc += (conv8_byte(p[(ptrdiff_t)(kx - kx0) * xstep], 0, is_signed) - zp) * wr[kx];
            }
        }
        po[conv8_off(&r, oc)] = conv8_out8(&r, 0, acc);
    }
}

/* Each variant in its own page (its loops chain in QEMU); the 3x3 kernels (most of them)
 * with constant loops, the taps' loads one after another without a loop's set-up per
 * kernel row. */
static CONV8_FW_PAGE __attribute__((noinline)) void conv8_dw8_s33(const struct vnpu_conv8_fw *k,
                                                                  const uint8_t *src, uint8_t *po)
{
    conv8_dw8(k, src, po, 1, 3, 0, 3, 0, 3);
}

static CONV8_FW_PAGE __attribute__((noinline)) void conv8_dw8_u33(const struct vnpu_conv8_fw *k,
                                                                  const uint8_t *src, uint8_t *po)
{
    conv8_dw8(k, src, po, 0, 3, 0, 3, 0, 3);
}

static CONV8_FW_PAGE __attribute__((noinline)) void conv8_dw8_s(const struct vnpu_conv8_fw *k,
                                                                const uint8_t *src, uint8_t *po,
                                                                int ky0, int ky1, int kx0, int kx1)
{
    conv8_dw8(k, src, po, 1, k->ukw, ky0, ky1, kx0, kx1);
}

static CONV8_FW_PAGE __attribute__((noinline)) void conv8_dw8_u(const struct vnpu_conv8_fw *k,
                                                                const uint8_t *src, uint8_t *po,
                                                                int ky0, int ky1, int kx0, int kx1)
{
    conv8_dw8(k, src, po, 0, k->ukw, ky0, ky1, kx0, kx1);
}

void vnpu_conv8_fw_dw8_taps(const struct vnpu_conv8_fw *k, const uint8_t *src, uint8_t *po, int ky0,
                            int ky1, int kx0, int kx1)
{
    (k->ifm_signed ? conv8_dw8_s : conv8_dw8_u)(k, src, po, ky0, ky1, kx0, kx1);
}

void vnpu_conv8_fw_dw8(const struct vnpu_conv8_fw *k, const uint8_t *src, uint8_t *po)
{
    if (k->ukh == 3 && k->ukw == 3) {
        (k->ifm_signed ? conv8_dw8_s33 : conv8_dw8_u33)(k, src, po);
    } else {
        vnpu_conv8_fw_dw8_taps(k, src, po, 0, k->ukh, 0, k->ukw);
    }
}

/*
 * ethosu-porting-kit virtual NPU: kernel geometry (POOL/CONV/DEPTHWISE, the same registers on
 * every product), receptive-field taps, pool accumulation and the dot products.
 */
#ifndef VNPU_KERNEL_H
#define VNPU_KERNEL_H

#include "common/fm.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__ARM_FEATURE_SIMD32) && defined(__ARMEL__)
#include <arm_acle.h>
#endif

/* Kernel geometry of a POOL/CONV/DEPTHWISE (same registers on the U55, U65 and U85). */
struct kernel {
    int kh, kw; /* dilated size (register value + 1) */
    int sy, sx; /* strides */
    int dy, dx; /* dilation */
    int pad_top, pad_left, pad_bottom, pad_right;
    int upscale; /* 0 none, 1 nearest, 2 zeros */
    int ih, iw;  /* logical (upscaled) IFM extent the kernel sweeps */
};

/* The kernel from the cmd0 registers p0[0x00..0xff] (0x100..0x1ff) for an OFM of oh x ow; 0, or
 * non-zero with the reason in why[len]. */
int vnpu_kernel_setup(struct kernel *k, const uint16_t *p0, int oh, int ow, char *why, size_t len);

/* Logical IFM value at (y, x) of the upscaled map, minus the zero point; *valid = 0 for padding. */
static inline int64_t ifm_tap(const struct fm *ifm, const struct kernel *k, int y, int x, int c,
                              int *valid)
{
    if (y < 0 || x < 0 || y >= k->ih || x >= k->iw) {
        *valid = 0;
        return 0;
    }
    *valid = 1;
    if (k->upscale == 1) {
        y >>= 1;
        x >>= 1;
    } else if (k->upscale == 2) {
        if ((y | x) & 1) {
            return 0;
        }
        y >>= 1;
        x >>= 1;
    }
    return fm_read(ifm, y, x, c) - ifm->zp;
}

/*
 * The first valid and one past the last valid tap index of a kernel axis: taps at
 * start + i * step for i in [0, n), valid inside [0, extent). Inline: the pool's and the
 * depthwise edge's per-pixel loops call it with their own constants.
 */
static inline void vnpu_valid_taps(int start, int step, int n, int extent, int *lo, int *hi)
{
    int a = 0;
    int b = n;
    while (a < b && start + a * step < 0) {
        a++;
    }
    while (b > a && start + (b - 1) * step >= extent) {
        b--;
    }
    *lo = a;
    *hi = b;
}

/*
 * dst[i] = src[i] minus the zero point for len 8-bit values at consecutive bytes: a tap's
 * channels (vnpu_tap16) or a row of them (the convolutions' IFM planes). restrict: the IFM
 * is bytes, which may alias anything; without it the int16 stores keep the conversion one
 * value at a time.
 */
static inline void vnpu_taps16(const uint8_t *restrict src, int16_t *restrict dst, int len,
                               int32_t zp, int is_signed)
{
    if (is_signed) {
        for (int i = 0; i < len; i++) {
            dst[i] = (int16_t)((int8_t)src[i] - zp);
        }
    } else {
        for (int i = 0; i < len; i++) {
            dst[i] = (int16_t)(src[i] - zp);
        }
    }
}

/*
 * All channels [0, ifm->c) of the tap (y, x) of an 8-bit IFM as ifm_tap gives them,
 * truncated to int16, at dst[0..c): the convolutions' receptive-field gather.
 */
void vnpu_tap16(const struct fm *ifm, const struct kernel *k, int y, int x, int16_t *dst);

/*
 * Gather the receptive field of output (oy, ox) for a kh x kw kernel into patch, once
 * (padding = 0 after the zero point): tap-major, all IFM channels per tap; as int16
 * (vnpu_tap16) when `narrow`, else as int32 (ifm_tap). Shared by the U55 and U85 convolutions.
 */
static inline void vnpu_gather(const struct fm *ifm, const struct kernel *k, int32_t *patch, int kh,
                               int kw, int narrow, int oy, int ox)
{
    int16_t *patch16 = (int16_t *)(void *)patch;
    size_t n = 0;
    for (int ky = 0; ky < kh; ky++) {
        for (int kx = 0; kx < kw; kx++) {
            int y = oy * k->sy - k->pad_top + ky * k->dy;
            int x = ox * k->sx - k->pad_left + kx * k->dx;
            if (narrow) {
                vnpu_tap16(ifm, k, y, x, patch16 + n);
                n += (size_t)ifm->c;
                continue;
            }
            for (int c = 0; c < ifm->c; c++) {
                int valid;
                patch[n++] = (int32_t)ifm_tap(ifm, k, y, x, c, &valid);
            }
        }
    }
}

/*
 * The accumulator of one pool output (oy, ox, c): mode 0 MAX, 5 MIN, 2 REDUCE_SUM (over
 * the IFM's channels), otherwise the sum of the valid taps. *count = the valid taps.
 */
int64_t vnpu_pool_acc(const struct fm *ifm, const struct kernel *k, int mode, int oy, int ox, int c,
                      int *count);

/* Dot product of 16-bit operands into 32 bits (the caller bounds n so it cannot overflow). */
static inline int32_t dot16(const int16_t *a, const int16_t *b, size_t n)
{
    int32_t sum = 0;
#if defined(__ARM_FEATURE_SIMD32) && defined(__ARMEL__)
    /* Cortex-M with DSP: SMLAD, two products per instruction, four per iteration (1.75
     * instructions a product instead of 4; under QEMU too) */
    int32_t sum2 = 0;
    for (; n >= 4u; n -= 4u, a += 4, b += 4) {
        int16x2_t a0;
        int16x2_t a1;
        int16x2_t b0;
        int16x2_t b1;
        memcpy(&a0, a, sizeof(a0));
        memcpy(&a1, a + 2, sizeof(a1));
        memcpy(&b0, b, sizeof(b0));
        memcpy(&b1, b + 2, sizeof(b1));
        sum = __smlad(a0, b0, sum);
        sum2 = __smlad(a1, b1, sum2);
    }
    sum += sum2;
#endif
    for (; n > 0u; n--) {
        sum += (int32_t)*a++ * (int32_t)*b++;
    }
    return sum;
}

#if defined(__ARM_FEATURE_SIMD32) && defined(__ARMEL__)
/* two int16 lanes read as one word (the arrays are int16: may_alias; 2-byte aligned) */
typedef int16x2_t __attribute__((may_alias, aligned(2))) vnpu_pair16;
#endif

#endif /* VNPU_KERNEL_H */

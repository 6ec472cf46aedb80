/* ethosu-porting-kit virtual NPU: kernel geometry, taps and pool accumulation (every product). */
#include "common/kernel.h"

#include <stdio.h>
#include <string.h>

int vnpu_kernel_setup(struct kernel *k, const uint16_t *p0, int oh, int ow, char *why, size_t len)
{
    uint32_t ks = p0[0x22]; /* KERNEL_STRIDE */
    k->kh = p0[0x21] + 1;   /* KERNEL_HEIGHT_M1 */
    k->kw = p0[0x20] + 1;   /* KERNEL_WIDTH_M1 */
    k->sx = (int)((ks & 1u) | (((ks >> 6) & 1u) << 1)) + 1;
    k->sy = (int)(((ks >> 1) & 1u) | (((ks >> 9) & 1u) << 1)) + 1;
    k->dx = ((ks >> 3) & 1u) ? 2 : 1;
    k->dy = ((ks >> 4) & 1u) ? 2 : 1;
    k->pad_top = p0[0x00] & 0x7f;
    k->pad_left = p0[0x01] & 0x7f;
    k->pad_right = p0[0x02] & 0xff;
    k->pad_bottom = p0[0x03] & 0xff;
    k->upscale = (int)(p0[0x07] & 3u); /* IFM_UPSCALE */
    if (k->upscale == 3) {
        snprintf(why, len, "IFM upscale mode 3 is not defined");
        return -1;
    }
    k->ih = (oh - 1) * k->sy + k->kh - k->pad_top - k->pad_bottom;
    k->iw = (ow - 1) * k->sx + k->kw - k->pad_left - k->pad_right;
    if (k->ih <= 0 || k->iw <= 0) {
        snprintf(why, len, "the kernel, stride and padding leave an empty IFM (%d x %d)", k->ih,
                 k->iw);
        return -1;
    }
    return 0;
}

/* REDUCE_SUM's accumulator: the sum over the IFM's channels of ifm_tap(y, x, c), as the
 * sum of the stored values minus depth x the zero point (integers: the same value), the
 * values of one pixel read in place. */
static int64_t reduce_sum(const struct fm *ifm, const struct kernel *k, int y, int x)
{
    if (y < 0 || x < 0 || y >= k->ih || x >= k->iw || (k->upscale == 2 && ((y | x) & 1))) {
        return 0; /* padding, or a zero the upscale inserts: every channel's tap is 0 */
    }
    if (k->upscale != 0) {
        y >>= 1;
        x >>= 1;
    }
    const uint8_t *p = ifm->mem + fm_offset(ifm, y, x, 0);
    int64_t sum = 0;
    if (ifm->elem == 1 && !ifm->brick) {
        int32_t s32 = 0; /* at most 65536 bytes of 255: no overflow */
        if (ifm->is_signed) {
            for (int c = 0; c < ifm->c; c++) {
                s32 += (int8_t)p[c];
            }
        } else {
            for (int c = 0; c < ifm->c; c++) {
                s32 += p[c];
            }
        }
        sum = s32;
    } else {
        const int kind = ifm->elem * 2 + ifm->is_signed;
        for (int c = 0; c < ifm->c; c++) {
            sum += load_elem(p + fm_chan(ifm, c), kind);
        }
    }
    return sum - (int64_t)ifm->zp * ifm->c;
}

/* MAX (0), MIN (5) or the sum of the stored values of a window of rows x cols taps from p
 * (steps ystep, xstep), elements of `kind` (load_elem): the caller removes the zero point. */
static inline int64_t window_acc(const uint8_t *p, ptrdiff_t ystep, ptrdiff_t xstep, int rows,
                                 int cols, int mode, const int kind)
{
    int64_t acc = load_elem(p, kind);
    int first = 1;
    for (int y = 0; y < rows; y++, p += ystep) {
        const uint8_t *q = p;
        for (int x = 0; x < cols; x++, q += xstep) {
            int64_t v = load_elem(q, kind);
            if (first) {
                first = 0;
                continue; /* acc holds it */
            }
            if (mode == 0) {
                acc = v > acc ? v : acc;
            } else if (mode == 5) {
                acc = v < acc ? v : acc;
            } else {
                acc += v;
            }
        }
    }
    return acc;
}

int64_t vnpu_pool_acc(const struct fm *ifm, const struct kernel *k, int mode, int oy, int ox, int c,
                      int *count)
{
    int64_t acc = 0;
    int valid;
    *count = 0;
    if (mode == 2) {
        return reduce_sum(ifm, k, oy * k->sy - k->pad_top, ox * k->sx - k->pad_left);
    }
    /* (dilation 1 skips the divisions: this runs once per output value) */
    int ukh = k->dy == 1 ? k->kh : (k->kh - 1) / k->dy + 1;
    int ukw = k->dx == 1 ? k->kw : (k->kw - 1) / k->dx + 1;
    int y0 = oy * k->sy - k->pad_top;
    int x0 = ox * k->sx - k->pad_left;
    if (ukh == 1 && ukw == 1) {
        /* one tap (the 1x1 pools of rescales and transposes): ifm_tap's value alone */
        int64_t v = ifm_tap(ifm, k, y0, x0, c, &valid);
        *count = valid;
        return v;
    }
    if (k->upscale == 0) {
        /* the valid taps first; when they all lie in the first tile, the window is read by
         * pointer steps: the same values and order as ifm_tap's, without its per-tap tile
         * choice and bounds (MAX/MIN/sum of v - zp: of the stored values, then - zp) */
        int ky0;
        int ky1;
        int kx0;
        int kx1;
        vnpu_valid_taps(y0, k->dy, ukh, k->ih, &ky0, &ky1);
        vnpu_valid_taps(x0, k->dx, ukw, k->iw, &kx0, &kx1);
        if (ky0 >= ky1 || kx0 >= kx1) {
            return 0;
        }
        if (y0 + (ky1 - 1) * k->dy < ifm->h0 && x0 + (kx1 - 1) * k->dx < ifm->w0) {
            int rows = ky1 - ky0;
            int cols = kx1 - kx0;
            const uint8_t *p = ifm->mem + fm_offset(ifm, y0 + ky0 * k->dy, x0 + kx0 * k->dx, c);
            ptrdiff_t ystep = (ptrdiff_t)k->dy * (ptrdiff_t)ifm->sy;
            ptrdiff_t xstep = (ptrdiff_t)k->dx * (ptrdiff_t)ifm->sx;
            const int kind = ifm->elem * 2 + ifm->is_signed;
            int64_t stored = kind == 3 ? window_acc(p, ystep, xstep, rows, cols, mode, 3)
                                       : window_acc(p, ystep, xstep, rows, cols, mode, kind);
            *count = rows * cols;
            int64_t zp = ifm->zp;
            return mode == 0 || mode == 5 ? stored - zp : stored - zp * (int64_t)*count;
        }
    }
    for (int ky = 0; ky < ukh; ky++) {
        for (int kx = 0; kx < ukw; kx++) {
            int64_t v = ifm_tap(ifm, k, y0 + ky * k->dy, x0 + kx * k->dx, c, &valid);
            if (!valid) {
                continue;
            }
            if (mode == 0) {
                acc = (*count == 0 || v > acc) ? v : acc;
            } else if (mode == 5) {
                acc = (*count == 0 || v < acc) ? v : acc;
            } else {
                acc += v;
            }
            (*count)++;
        }
    }
    return acc;
}

void vnpu_tap16(const struct fm *ifm, const struct kernel *k, int y, int x, int16_t *dst)
{
    if (y < 0 || x < 0 || y >= k->ih || x >= k->iw) {
        memset(dst, 0, (size_t)ifm->c * sizeof(int16_t)); /* padding */
        return;
    }
    if (k->upscale != 0) {
        for (int c = 0; c < ifm->c; c++) {
            int valid;
            dst[c] = (int16_t)ifm_tap(ifm, k, y, x, c, &valid);
        }
        return;
    }
    /* no upscaling: the tap's channels are bytes at one address (NHWC), or runs of 16 (NHCWB16) */
    const uint8_t *pixel = ifm->mem + fm_offset(ifm, y, x, 0);
    if (!ifm->brick) {
        vnpu_taps16(pixel, dst, ifm->c, ifm->zp, ifm->is_signed);
        return;
    }
    int c0 = 0;
    for (; c0 + 16 <= ifm->c; c0 += 16) { /* a constant count: one vector */
        vnpu_taps16(pixel + (int64_t)(c0 >> 4) * ifm->sc, dst + c0, 16, ifm->zp, ifm->is_signed);
    }
    if (c0 < ifm->c) {
        vnpu_taps16(pixel + (int64_t)(c0 >> 4) * ifm->sc, dst + c0, ifm->c - c0, ifm->zp,
                    ifm->is_signed);
    }
}

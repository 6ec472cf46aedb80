/* ethosu-porting-kit virtual NPU: Ethos-U55/U65 POOL. */
#include "u55/u55.h"

#include <string.h>

/* Lowest and one past the highest byte of the h x w one-byte box at `base` with these strides. */
static void box_span(ptrdiff_t base, int h, int w, ptrdiff_t sy, ptrdiff_t sx, ptrdiff_t *lo,
                     ptrdiff_t *hi)
{
    ptrdiff_t dy = (ptrdiff_t)(h - 1) * sy;
    ptrdiff_t dx = (ptrdiff_t)(w - 1) * sx;
    *lo = base + (dy < 0 ? dy : 0) + (dx < 0 ? dx : 0);
    *hi = base + (dy > 0 ? dy : 0) + (dx > 0 ? dx : 0) + 1;
}

/*
 * The single-channel byte copy of a one-tile IFM to a one-tile OFM (the NCHW<->NHWC transposes:
 * a row read in order, written down a column): with the inner loop along the dimension whose
 * stores are adjacent, and no per-byte pointer steps through memory. Only when the two boxes
 * share no byte (then the order of the copies cannot matter); 1 if done, else 0.
 */
static int copy_bytes_2d(const struct fm *ifm, const struct fm *ofm)
{
    int h = ofm->h;
    int w = ofm->w;
    ptrdiff_t isy = (ptrdiff_t)ifm->sy;
    ptrdiff_t isx = (ptrdiff_t)ifm->sx;
    ptrdiff_t osy = (ptrdiff_t)ofm->sy;
    ptrdiff_t osx = (ptrdiff_t)ofm->sx;
    ptrdiff_t ilo, ihi, olo, ohi;
    box_span((ptrdiff_t)ifm->base[0], h, w, isy, isx, &ilo, &ihi);
    box_span((ptrdiff_t)ofm->base[0], h, w, osy, osx, &olo, &ohi);
    if (ifm->mem + ilo < ofm->mem + ohi && ofm->mem + olo < ifm->mem + ihi) {
        return 0;
    }
    if (osy == 1 && osx != 1) {
        /* columns adjacent in the OFM: walk them as the inner loop */
        int t = h;
        h = w;
        w = t;
        ptrdiff_t u = isy;
        isy = isx;
        isx = u;
        osy = osx;
        osx = 1;
    }
    const uint8_t *restrict src = ifm->mem + ifm->base[0];
    uint8_t *restrict dst = ofm->mem + ofm->base[0];
    for (int y = 0; y < h; y++) {
        const uint8_t *restrict s = src + (ptrdiff_t)y * isy;
        uint8_t *restrict d = dst + (ptrdiff_t)y * osy;
        if (isx == 1 && osx == 1) {
            memcpy(d, s, (size_t)w);
        } else if (osx == 1) {
            int x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* eight gathered bytes a store: the loop was one store and its steps a byte */
            for (; x + 8 <= w; x += 8) {
                uint64_t v = 0;
                for (int j = 0; j < 8; j++) {
                    v |= (uint64_t)s[(ptrdiff_t)(x + j) * isx] << (8 * j);
                }
                memcpy(d + x, &v, sizeof(v));
            }
#endif
            for (; x < w; x++) {
                d[x] = s[(ptrdiff_t)x * isx];
            }
        } else {
            for (int x = 0; x < w; x++) {
                d[(ptrdiff_t)x * osx] = s[(ptrdiff_t)x * isx];
            }
        }
    }
    return 1;
}

/* ---- POOL ---------------------------------------------------------------------------------- */

int u55_op_pool(struct vnpu_exec *run, uint32_t param)
{
    uint32_t mode = param & 7u;
    struct regs *r = &run->regs;
    struct kernel_op op;
    if (mode > 2) {
        return vnpu_fail(run, "pooling_mode %lu is not defined for U55", (unsigned long)mode);
    }
    if (u55_setup_kernel_op(run, &op, mode == 2) != 0) {
        return -1;
    }
    const struct fm ifm = op.ifm;
    const struct fm ofm = op.ofm;
    const struct kernel k = op.k;
    const struct vnpu_out o = op.o;
    if (mode == 2 && ofm.c != 1) {
        return vnpu_fail(run, "REDUCE_SUM with OFM depth %d (expected 1)", ofm.c);
    }
    uint32_t scale = W1(OFM_SCALE);
    unsigned shift = P1(OFM_SCALE) & 0x3fu;
    int round = op.round;
    int padded = k.pad_top | k.pad_left | k.pad_bottom | k.pad_right;

    /* 1x1 identity copy: the NCHW<->NHWC transposes that dominate ExecuTorch streams */
    int identity_scale =
        (scale == 1 && shift == 0) || (scale == 0x80000001u && shift == 31 && round == ROUND_DBL);
    if (mode == 1 && k.kh == 1 && k.kw == 1 && k.sx == 1 && k.sy == 1 && !padded && !k.upscale &&
        identity_scale && ifm.zp == 0 && o.zp == 0 && o.lut == 0 && ifm.elem == ofm.elem &&
        ifm.is_signed == ofm.is_signed && ifm.elem < 4 &&
        (!o.lim.clamp || (o.lim.amin <= o.lim.tmin && o.lim.amax >= o.lim.tmax))) {
        size_t bytes = (size_t)ofm.c * (size_t)ofm.elem;
        if (!ifm.brick && !ofm.brick && ifm.w <= ifm.w0 && ifm.h <= ifm.h0 && ofm.w <= ofm.w0 &&
            ofm.h <= ofm.h0) {
            /* one tile each (fm_check proved the box): plain strided copies */
            if (bytes == 1 && copy_bytes_2d(&ifm, &ofm)) {
                return 0;
            }
            for (int y = 0; y < ofm.h; y++) {
                const uint8_t *src = ifm.mem + ifm.base[0] + (int64_t)y * ifm.sy;
                uint8_t *dst = ofm.mem + ofm.base[0] + (int64_t)y * ofm.sy;
                for (int x = 0; x < ofm.w; x++, src += ifm.sx, dst += ofm.sx) {
                    if (bytes == 1) {
                        *dst = *src;
                    } else {
                        memmove(dst, src, bytes);
                    }
                }
            }
            return 0;
        }
        for (int y = 0; y < ofm.h; y++) {
            for (int x = 0; x < ofm.w; x++) {
                if (!ifm.brick && !ofm.brick) {
                    const uint8_t *src = ifm.mem + fm_offset(&ifm, y, x, 0);
                    uint8_t *dst = ofm.mem + fm_offset(&ofm, y, x, 0);
                    memmove(dst, src, bytes);
                } else {
                    for (int c = 0; c < ofm.c; c++) {
                        fm_write(&ofm, y, x, c, fm_read(&ifm, y, x, c));
                    }
                }
            }
        }
        return 0;
    }

    for (int oy = 0; oy < ofm.h; oy++) {
        for (int ox = 0; ox < ofm.w; ox++) {
            for (int c = 0; c < ofm.c; c++) {
                int count;
                int64_t acc = vnpu_pool_acc(&ifm, &k, (int)mode, oy, ox, c, &count);
                if (mode == 1 && padded && count > 0) {
                    /* the hardware divides by the valid taps, rounding half away from zero */
                    int64_t m = acc < 0 ? -acc : acc;
                    int64_t q = (m + count / 2) / count;
                    acc = acc < 0 ? -q : q;
                }
                fm_write(&ofm, oy, ox, c,
                         vnpu_out_value(&o, vnpu_rescale(acc, scale, shift, round)));
            }
        }
    }
    return 0;
}

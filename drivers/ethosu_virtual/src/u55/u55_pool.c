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

/* 1 if the boxes of the one-tile IFM and OFM (ofm->h x ofm->w pixels of `bytes`) share a byte. */
static int boxes_overlap(const struct fm *ifm, const struct fm *ofm, size_t bytes)
{
    int h = ofm->h;
    int w = ofm->w;
    ptrdiff_t ilo, ihi, olo, ohi;
    box_span((ptrdiff_t)ifm->base[0], h, w, (ptrdiff_t)ifm->sy, (ptrdiff_t)ifm->sx, &ilo, &ihi);
    box_span((ptrdiff_t)ofm->base[0], h, w, (ptrdiff_t)ofm->sy, (ptrdiff_t)ofm->sx, &olo, &ohi);
    ihi += (ptrdiff_t)bytes - 1;
    ohi += (ptrdiff_t)bytes - 1;
    return ifm->mem + ilo < ofm->mem + ohi && ofm->mem + olo < ifm->mem + ihi;
}

/*
 * REDUCE_SUM of an 8-bit NHWC IFM without padding or upscaling, both maps in one tile: each
 * pixel's channels summed in place, its output at a pointer step (vnpu_pool_acc's values, the
 * same output stage; per output, its call, tile choice and generic loads were most of the
 * operation's time). 1 if done, else 0.
 */
static int reduce_sum8(const struct fm *ifm, const struct fm *ofm, const struct kernel *k,
                       const struct vnpu_rescaler *rs, const struct vnpu_out *o)
{
    if (ifm->elem != 1 || ifm->brick || k->upscale != 0 ||
        (k->pad_top | k->pad_left | k->pad_bottom | k->pad_right) != 0 || ifm->h > ifm->h0 ||
        ifm->w > ifm->w0 || ofm->h > ofm->h0 || ofm->w > ofm->w0 || ifm->c > 65536) {
        return 0;
    }
    const int c = ifm->c;
    const int64_t zc = (int64_t)ifm->zp * c;
    const ptrdiff_t isy = (ptrdiff_t)k->sy * (ptrdiff_t)ifm->sy;
    const ptrdiff_t isx = (ptrdiff_t)k->sx * (ptrdiff_t)ifm->sx;
    for (int oy = 0; oy < ofm->h; oy++) {
        const uint8_t *p = ifm->mem + ifm->base[0] + (ptrdiff_t)oy * isy;
        uint8_t *q = ofm->mem + ofm->base[0] + (ptrdiff_t)oy * (ptrdiff_t)ofm->sy;
        for (int ox = 0; ox < ofm->w; ox++, p += isx, q += ofm->sx) {
            int32_t s32 = 0; /* at most 65536 bytes of 255: no overflow */
            if (ifm->is_signed) {
                for (int i = 0; i < c; i++) {
                    s32 += (int8_t)p[i];
                }
            } else {
                for (int i = 0; i < c; i++) {
                    s32 += p[i];
                }
            }
            store_elem(q, ofm->elem, vnpu_out_value(o, vnpu_rescale_by(rs, s32 - zc)));
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
            /* one tile each (fm_check proved the box): plain strided copies, in any order
             * when the boxes are apart */
            if (!boxes_overlap(&ifm, &ofm, bytes)) {
                vnpu_copy_box(ifm.mem + ifm.base[0], (ptrdiff_t)ifm.sy, (ptrdiff_t)ifm.sx,
                              ofm.mem + ofm.base[0], (ptrdiff_t)ofm.sy, (ptrdiff_t)ofm.sx, ofm.h,
                              ofm.w, bytes);
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

    /* the scale's rounding constants once (vnpu_rescale_by: vnpu_rescale's values) */
    struct vnpu_rescaler rs;
    vnpu_rescaler_init(&rs, scale, shift, round);
    if (mode == 2 && reduce_sum8(&ifm, &ofm, &k, &rs, &o)) {
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
                fm_write(&ofm, oy, ox, c, vnpu_out_value(&o, vnpu_rescale_by(&rs, acc)));
            }
        }
    }
    return 0;
}

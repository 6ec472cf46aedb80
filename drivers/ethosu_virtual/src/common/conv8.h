/*
 * ethosu-porting-kit virtual NPU: the convolutions' 8-bit path, as a host vector kernel and
 * as the firmware's kernel.
 *
 * The 8-bit path (U55 and U85 conv_channels / conv_setup_channels) computes, per OFM pixel
 * and channel, bias + the dot product of the int16 receptive field with the channel's weight
 * row, then a 32-bit rescale, zero point and clamp. On the host that runs one channel at a
 * time, each a short dot product ending in a horizontal sum. This kernel runs all channels
 * of a pixel at once instead: the weights transposed so the channels are the vector lanes
 * (kept beside the decoded weights in the weight cache, built once per stream), each pair of
 * receptive-field values broadcast against them, and the output stage over arrays of the
 * channels' rescale records. Integer arithmetic in a different order only: the 8-bit path's
 * bounds (every partial sum inside (-2^30, 2^30)) leave the results identical.
 * That vector kernel is the host's only (it lives on the weight cache,
 * -DETHOSU_VIRTUAL_WEIGHT_CACHE).
 *
 * Without it (firmware; a host library without the cache) vnpu_conv8_fw_pixel computes one
 * pixel from the field vnpu_gather gives, in no memory of its own, laid out for QEMU, where
 * firmware runs it: a convolution four channels per load of the field (SMLAD on a Cortex-M
 * with DSP), a depthwise one MUL and ADD per tap (QEMU runs SMLABB as a helper call).
 */
#ifndef VNPU_CONV8_H
#define VNPU_CONV8_H

#include "common/kernel.h"
#include "common/rescale.h"

#include <stddef.h>
#include <stdint.h>

/* One operation's kernel: the transposed weights and the per-channel arrays it runs on. */
struct vnpu_conv8 {
    const int16_t *wt; /* conv: [ceil(terms/2)][depth_out][2]; depthwise: [taps][depth_out] */
    int32_t *bias, *mult, *shift;
    int64_t *c_pos, *c_neg;
    int32_t *acc;
    uint8_t *out;      /* the pixel's depth_out output bytes */
    size_t out_stride; /* vnpu_conv8_pixels: bytes from one pixel's outputs to the next's */
    /* the IFM as the receptive fields read it: int16 minus the zero point, the padding as
     * zeros around it, [pad_top + ih + pad_bottom][pad_left + iw + pad_right][ic] */
    const int16_t *plane;
    size_t row;     /* values per plane row */
    int16_t *patch; /* conv: one pixel's receptive field */
    size_t field;   /* values of one receptive field's buffer */
    /* conv on an AVX-512 VNNI host: the weights as int8 when every one fits, else NULL, with
     * each channel's weight sum: four terms a 32-bit lane, each kernel row's terms padded to
     * whole quads (qrow), [ukh][qrow][depth_out][4] (built by vnpu_conv8_ifm for its ukw,
     * which it records at wq_run) */
    int8_t *wq;
    const int32_t *wsum;
    int32_t *wq_run;
    const int16_t *w16; /* the weights W[o][terms] the layouts are built from */
    size_t wq_quads;    /* the room at wq: quads */
    size_t qrow;
    /* the IFM as unsigned bytes, value + off8 (the padding off8), in the plane's layout,
     * when wq is set and every value fits: the 8-bit kernel's input (else NULL) */
    const uint8_t *plane8;
    uint8_t *patch8;
    size_t field8; /* bytes of one receptive field's buffer at patch8 */
    int sy, sx, dy, dx, ukh, ukw;
    int ow;       /* OFM width: the pixels of a row computed together stop there */
    size_t terms; /* conv: taps x IFM depth; depthwise: taps */
    size_t ic;    /* depthwise: the receptive field's values per tap */
    int depth_out;
    int depthwise;
};

/* Where an operation's OFM bytes go: pixel (oy, ox) at at + oy * sy + ox * sx (one tile),
 * its channel c at + (c >> 4) * sc + (c & 15) for NHCWB16 (brick), else + c. */
struct vnpu_conv8_ofm {
    uint8_t *at;
    ptrdiff_t sy, sx, sc;
    int oh;
    int brick;
};

#ifdef ETHOSU_VIRTUAL_WEIGHT_CACHE
/*
 * Prepare the kernel for weights W[o][terms] (`weights`: what vnpu_wcache_find or _add gave,
 * the cache's copy). 1 ready (the caller then fills bias/mult/shift/c_pos/c_neg per
 * channel with vnpu_conv8_channel), 0 not available (not cached, no memory): the caller
 * takes its own path.
 */
int vnpu_conv8_prepare(struct vnpu_conv8 *c, const int16_t *weights, int depth_out, size_t terms,
                       size_t ic, int depthwise);
/* The IFM plane (ifm_tap's values, vnpu_tap16 each pixel) for the kernel k of ukh x ukw taps
 * and an OFM `ow` wide: 1 ready, 0 no memory (the caller takes its own path). After
 * vnpu_conv8_prepare; it starts the operation (no pixel computed yet). */
int vnpu_conv8_ifm(struct vnpu_conv8 *c, const struct fm *ifm, const struct kernel *k, int ukh,
                   int ukw, int ow);
/* Every channel's output byte of OFM pixel (oy, ox): depth_out bytes. A convolution computes
 * the next pixels of the row with it and hands them out on their calls (zp, lo, hi: the
 * operation's, the same on every call). */
const uint8_t *vnpu_conv8_pixel(const struct vnpu_conv8 *c, int oy, int ox, int32_t zp, int32_t lo,
                                int32_t hi);
/* A convolution's (not depthwise) OFM pixels (oy, ox) on along the row, as many as the kernel
 * computes together (*count, at least 1): pixel i's depth_out bytes at i * out_stride. A
 * caller taking them all at once stores each run of them in one go. */
const uint8_t *vnpu_conv8_pixels(const struct vnpu_conv8 *c, int oy, int ox, int32_t zp, int32_t lo,
                                 int32_t hi, int *count);
/* Every pixel of the OFM at once (instead of vnpu_conv8_pixel per pixel), after vnpu_conv8_ifm. */
void vnpu_conv8_run(const struct vnpu_conv8 *c, const struct vnpu_conv8_ofm *o, int32_t zp,
                    int32_t lo, int32_t hi);
#else
#define vnpu_conv8_prepare(c, weights, depth_out, terms, ic, depthwise)                            \
    ((void)(c), (void)(weights), (void)(depth_out), (void)(terms), (void)(ic), (void)(depthwise), 0)
#define vnpu_conv8_ifm(c, ifm, k, ukh, ukw, ow)                                                    \
    ((void)(c), (void)(ifm), (void)(k), (void)(ukh), (void)(ukw), (void)(ow), 0)
/* (never called: vec8 stays 0; not NULL, which a memcpy of it would be warned about) */
#define vnpu_conv8_pixel(c, oy, ox, zp, lo, hi)                                                    \
    ((void)(oy), (void)(ox), (void)(zp), (void)(lo), (void)(hi), (const uint8_t *)(c)->out)
#define vnpu_conv8_pixels(c, oy, ox, zp, lo, hi, count)                                            \
    ((void)(oy), (void)(ox), (void)(zp), (void)(lo), (void)(hi), *(count) = 1,                     \
     (const uint8_t *)(c)->out)
#define vnpu_conv8_run(c, o, zp, lo, hi) ((void)(c), (void)(o), (void)(zp), (void)(lo), (void)(hi))
#endif

/*
 * The 8-bit path where the vector kernel is not built or not available (firmware): one OFM
 * pixel from its receptive field as vnpu_gather gives it, every channel's bias + the field
 * times its weight row, rescaled and clamped (vnpu_out8). The executors' channel records
 * differ, so the bias and rescale of channel oc are read `stride` bytes a channel apart.
 */
struct vnpu_conv8_fw {
    const int16_t *weights; /* W[o][terms] */
    size_t terms;           /* conv: taps x IFM depth; depthwise: taps */
    size_t ic;              /* depthwise: the field's values per tap */
    int depth_out;
    int depthwise;
    const int64_t *bias;              /* channel 0's (NULL: no bias) */
    const struct vnpu_rescale32 *r32; /* channel 0's */
    size_t stride;                    /* bytes from one channel's records to the next's */
    int32_t zp, lo, hi;               /* lo <= hi */
    int brick; /* the OFM's channels in runs of 16, sc bytes apart (else cs bytes apart) */
    ptrdiff_t sc, cs;
    /* depthwise from the IFM in place (vnpu_conv8_fw_dw8): its 8-bit values, zero point,
     * channel runs of 16 (ifm_sc bytes apart) or adjacent, and the taps' steps in bytes */
    int ifm_signed, ifm_brick;
    int32_t ifm_zp;
    ptrdiff_t ifm_sc, ystep, xstep;
    int ukh, ukw;
};

void vnpu_conv8_fw_conv(const struct vnpu_conv8_fw *k, const int16_t *field, uint8_t *po);
void vnpu_conv8_fw_depthwise(const struct vnpu_conv8_fw *k, const int16_t *field, uint8_t *po);
/* vnpu_conv8_fw_conv of two pixels (fields f0, f1; outputs at po0, po1) at once: each
 * weight load serves both. */
void vnpu_conv8_fw_conv2(const struct vnpu_conv8_fw *k, const int16_t *f0, const int16_t *f1,
                         uint8_t *po0, uint8_t *po1);

/*
 * A depthwise OFM pixel whose taps all lie inside the IFM's first tile (no padding, no
 * upscale): read from the 8-bit IFM in place, `src` its first tap's channel 0. No receptive
 * field is gathered for it (a depthwise field is every tap's channels: 9 values converted
 * per output value of a 3x3 kernel, most of the work of a depthwise pixel otherwise).
 */
void vnpu_conv8_fw_dw8(const struct vnpu_conv8_fw *k, const uint8_t *src, uint8_t *po);
/* vnpu_conv8_fw_dw8 of the taps [ky0, ky1) x [kx0, kx1) only (the others are padding, whose
 * values are 0 after the zero point: they add nothing), `src` tap (ky0, kx0)'s channel 0. */
void vnpu_conv8_fw_dw8_taps(const struct vnpu_conv8_fw *k, const uint8_t *src, uint8_t *po, int ky0,
                            int ky1, int kx0, int kx1);

/* Every channel of one OFM pixel: the output bytes at po + each channel's offset. */
static inline void vnpu_conv8_fw_pixel(const struct vnpu_conv8_fw *k, const int16_t *field,
                                       uint8_t *po)
{
    if (k->depthwise) {
        vnpu_conv8_fw_depthwise(k, field, po);
    } else {
        vnpu_conv8_fw_conv(k, field, po);
    }
}

/* Channel oc's bias and 32-bit rescale. */
static inline void vnpu_conv8_channel(struct vnpu_conv8 *c, int oc, int32_t bias,
                                      const struct vnpu_rescale32 *r)
{
    c->bias[oc] = bias;
    c->mult[oc] = r->m;
    c->shift[oc] = (int32_t)r->shift;
    c->c_pos[oc] = r->c_pos;
    c->c_neg[oc] = r->c_neg;
}

#endif /* VNPU_CONV8_H */

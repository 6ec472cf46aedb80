/* ethosu-porting-kit virtual NPU: Ethos-U55/U65 CONV and DEPTHWISE, and their MLW weight order. */
#include "u55/u55.h"

#include "common/conv8.h"
#include "common/mlw.h"
#include "common/mutation.h"
#include "common/num.h"
#include "common/wcache.h"
#include "ethosu_virtual.h"

#include <string.h>

/* ---- weights ------------------------------------------------------------------------------- */

/* What decides where each value of an MLW weight stream lands in W[o][ky][kx][i]. */
struct weight_order {
    int depth_out, depth_in, ukh, ukw, depthwise;
    int ifm_ublock, ofm_ublock, part_kernel, ofm_block, ifm_block;
    int decomp_y, decomp_x, round_taps;
};

/*
 * dst[0, n) = src[0, n), n in [1, 8] (a micro-block's IFM depth). A switch, not a loop: the
 * compilers make a copy loop a memcpy call, per micro-block of every weight stream (in
 * QEMU, where firmware runs this, a call to another page and an indirect return are two
 * translated-block lookups, more than the copy).
 */
static inline void copy_ublock(int16_t *dst, const int16_t *src, int n)
{
    switch (n) {
    case 8:
        dst[7] = src[7];
        /* fall through */
    case 7:
        dst[6] = src[6];
        /* fall through */
    case 6:
        dst[5] = src[5];
        /* fall through */
    case 5:
        dst[4] = src[4];
        /* fall through */
    case 4:
        dst[3] = src[3];
        /* fall through */
    case 3:
        dst[2] = src[2];
        /* fall through */
    case 2:
        dst[1] = src[1];
        /* fall through */
    default:
        dst[0] = src[0];
    }
}

/*
 * Decode a weight stream in brick order into W[o][ky][kx][i] (`weights`, zeroed here).
 * `mem` is the decoder's slice memory; *need is set to what the largest slice took.
 */
static int decode_weights(struct vnpu_exec *run, const struct weight_order *g,
                          const uint8_t *stream, size_t len, int16_t *weights, uint8_t *mem,
                          size_t mem_size, size_t *need)
{
    const int depth_out = g->depth_out;
    const int depth_in = g->depth_in;
    const int ukh = g->ukh;
    const int ukw = g->ukw;
    const int depthwise = g->depthwise;
    const int ofm_ublock = g->ofm_ublock;
    memset(weights, 0,
           (size_t)depth_out * (size_t)ukh * (size_t)ukw * (size_t)depth_in * sizeof(int16_t));
    struct vnpu_mlw dec;
    vnpu_mlw_init(&dec, stream, len, mem, mem_size);
    for (int oz0 = 0; oz0 < depth_out; oz0 += g->ofm_block) {
        int ofm_blk = depth_out - oz0 < g->ofm_block ? depth_out - oz0 : g->ofm_block;
        for (int iz0 = 0; iz0 < depth_in; iz0 += (depthwise ? depth_in : g->ifm_block)) {
            int ifm_blk =
                depthwise ? g->ifm_ublock
                          : (g->part_kernel
                                 ? (depth_in - iz0 < g->ifm_block ? depth_in - iz0 : g->ifm_block)
                                 : g->ifm_block);
            for (int sy = 0; sy < ukh; sy += g->decomp_y) {
                for (int sx = 0; sx < ukw; sx += g->decomp_x) {
                    int sub_h = ukh - sy < g->decomp_y ? ukh - sy : g->decomp_y;
                    int sub_w = ukw - sx < g->decomp_x ? ukw - sx : g->decomp_x;
                    int n_taps =
                        (sub_h * sub_w + g->round_taps - 1) / g->round_taps * g->round_taps;
                    int outer_end = g->part_kernel ? ifm_blk : 1;
                    int outer_step = g->part_kernel ? g->ifm_ublock : 1;
                    for (int iu_o = 0; iu_o < outer_end; iu_o += outer_step) {
                        for (int ou = 0; ou < ofm_blk; ou += ofm_ublock) {
                            for (int t = 0; t < n_taps; t++) {
                                int kx = t % sub_w;
                                int ky = t / sub_w;
                                int inner_end = g->part_kernel ? 1 : ifm_blk;
                                int inner_step = g->part_kernel ? 1 : g->ifm_ublock;
                                for (int iu_i = 0; iu_i < inner_end; iu_i += inner_step) {
                                    /* the micro-block's ofm_ublock x iz_end values in one read */
                                    int iz_end = depthwise ? 1 : g->ifm_ublock;
                                    int16_t vals[8 * 8];
                                    int got;
                                    size_t count = (size_t)ofm_ublock * (size_t)iz_end;
                                    if (vnpu_mlw_read(&dec, vals, count, &got) != count) {
                                        *need = dec.need;
                                        if (got < 0 && dec.need > mem_size) {
                                            return -1; /* the caller names the bytes */
                                        }
                                        return vnpu_fail(run,
                                                         "weight stream %s (weight decoder fault)",
                                                         got == 0 ? "ended early" : "is malformed");
                                    }
                                    int ic0 = iz0 + iu_o + iu_i;
                                    int ic_n = depth_in - ic0 < iz_end ? depth_in - ic0 : iz_end;
                                    if (ky >= sub_h || ic_n <= 0) {
                                        continue;
                                    }
                                    for (int oz = 0; oz < ofm_ublock; oz++) {
                                        int oc = oz0 + ou + oz;
                                        if (oc >= depth_out || oc >= oz0 + ofm_blk) {
                                            break;
                                        }
                                        int16_t *dst =
                                            weights +
                                            (((size_t)oc * (size_t)ukh + (size_t)(sy + ky)) *
                                                 (size_t)ukw +
                                             (size_t)(sx + kx)) *
                                                (size_t)depth_in +
                                            (size_t)ic0;
                                        copy_ublock(dst, vals + oz * iz_end, ic_n);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    *need = dec.need;
    return 0;
}

/* One OFM channel's scale record (10 bytes in the stream: 40-bit bias, 32-bit scale, 6-bit shift). */
struct chan_rec {
    int64_t bias;
    struct vnpu_rescaler rescale;
    struct vnpu_rescale32 r32; /* when the operation takes the 8-bit path */
};

/* ---- CONV / DEPTHWISE ------------------------------------------------------------------- */

/* One convolution as its stages hand it on: set-up, weights, channel records, the loops. */
struct conv55 {
    struct kernel_op op;
    int depthwise;
    int depth_in, depth_out;
    size_t taps;           /* undilated kernel taps */
    const uint8_t *scales; /* the scale/bias records */
    const int16_t *weights;
    int32_t *patch; /* the receptive field (int16 when small_products) */
    struct chan_rec *chans;
    int small_products; /* 8-bit IFM minus a zero point in [-256, 256] and 9-bit weights */
    int fast8;          /* the 8-bit path (conv_channels) */
    int vec8;           /* the 8-bit path as the host's vector kernel (common/conv8.h) */
    struct vnpu_conv8 k8;
    int no_bias;
};

/* The registers' kernel operation and the scale stream: 10 bytes per OFM channel. */
static int conv_setup(struct vnpu_exec *run, struct conv55 *cv, int depthwise)
{
    struct regs *r = &run->regs;
    if (R0(PARALLEL_MODE) & 1u) {
        return vnpu_fail(run, "PARALLEL_MODE 1 (dual-core U65) is not modelled");
    }
    if (u55_setup_kernel_op(run, &cv->op, !depthwise) != 0) {
        return -1;
    }
    if ((R0(OFM_PRECISION) >> 8) & 1u) {
        return vnpu_fail(run, "OFM scale_mode GLOBAL for a convolution is not modelled");
    }
    cv->depthwise = depthwise;
    cv->depth_in = depthwise ? 1 : cv->op.ifm.c;
    cv->depth_out = cv->op.ofm.c;
    cv->taps = (size_t)cv->op.ukh * (size_t)cv->op.ukw;
    uint8_t *smem = NULL;
    size_t ssize = 0;
    if (vnpu_region_of(run, R0(SCALE_REGION) & 7u, &smem, &ssize, "scale stream") != 0) {
        return -1;
    }
    uint64_t sbase = W1(SCALE_BASE);
    uint64_t slen = W1(SCALE_LENGTH) & 0xfffffu;
    if (slen < (uint64_t)cv->depth_out * 10u || sbase + slen > ssize) {
        return vnpu_fail(
            run, "scale stream [%s, +%s) does not hold %d records inside its region of %lu bytes",
            VNPU_U64(sbase), VNPU_U64(slen), cv->depth_out, (unsigned long)ssize);
    }
    cv->scales = smem + sbase;
    return 0;
}

/* The decode order of this convolution's MLW stream. */
static void conv_order(const struct vnpu_exec *run, const struct conv55 *cv, struct weight_order *g)
{
    const struct regs *r = &run->regs;
    const struct kernel *k = &cv->op.k;
    memset(g, 0, sizeof(*g));
    uint32_t macs_log2 = run->env->config & 0xfu;
    g->depth_out = cv->depth_out;
    g->depth_in = cv->depth_in;
    g->ukh = cv->op.ukh;
    g->ukw = cv->op.ukw;
    g->depthwise = cv->depthwise;
    /* Vela's micro-blocks: OFM 4 deep on the Ethos-U55-32, else 8; IFM 8 deep */
    g->ofm_ublock = macs_log2 <= 5 ? 4 : 8;
    g->ifm_ublock = 8;
    g->part_kernel = !cv->depthwise && ((R0(KERNEL_STRIDE) >> 2) & 1u);
    g->ofm_block = R0(OFM_BLK_DEPTH_M1) + 1;
    g->ifm_block = (g->part_kernel || cv->op.ifm.elem == 2) ? 16 : 32;
    g->decomp_y = 8 / k->dy;
    g->decomp_x = 8 / k->dx;
    g->round_taps = cv->depthwise ? 4 : (g->part_kernel ? (cv->op.ifm.elem == 2 ? 2 : 4) : 1);
}

/*
 * The weights W[o][ky][kx][i] at the start of the workspace (decoded, or the cache's), the
 * receptive field after them, then the channel records: *fixed is where those start.
 */
static int conv_weights(struct vnpu_exec *run, struct conv55 *cv, size_t *fixed)
{
    struct regs *r = &run->regs;
    struct vnpu_env *env = run->env;
    uint8_t *wmem = NULL;
    size_t wsize = 0;
    if (vnpu_region_of(run, R0(WEIGHT_REGION) & 7u, &wmem, &wsize, "weight stream") != 0) {
        return -1;
    }
    uint64_t wbase = W1(WEIGHT_BASE);
    uint64_t wlen = W1(WEIGHT_LENGTH);
    if (wbase + wlen > wsize) {
        return vnpu_fail(run, "weight stream [%s, +%s) outside its region of %lu bytes",
                         VNPU_U64(wbase), VNPU_U64(wlen), (unsigned long)wsize);
    }
    size_t ws_size = env->workspace_size;
    uint8_t *ws = env->workspace;
    size_t nweights = (size_t)cv->depth_out * cv->taps * (size_t)cv->depth_in;
    size_t wbytes = (nweights * sizeof(int16_t) + 7u) & ~(size_t)7u;
    size_t pbytes = (cv->taps * (size_t)cv->op.ifm.c * sizeof(int32_t) + 7u) & ~(size_t)7u;
    *fixed = wbytes + pbytes;
    /* the weight decoder claims its slice memory above `fixed` itself */
    if (vnpu_workspace_claim(run, *fixed, *fixed, NULL, 0) != 0) {
        return -1;
    }
    struct weight_order g;
    conv_order(run, cv, &g);
    cv->patch = (int32_t *)(void *)(ws + wbytes);
    struct vnpu_wseg seg = {wmem + wbase, (size_t)wlen};
    size_t used = 0;
    cv->weights = vnpu_wcache_find(&g, sizeof(g), &seg, 1, 0, ws_size, &used);
    if (cv->weights != NULL) {
        vnpu_workspace_used(env, used);
        return 0;
    }
    int16_t *decoded = (int16_t *)(void *)ws;
    size_t slice_need = 0;
    if (decode_weights(run, &g, wmem + wbase, (size_t)wlen, decoded, ws + *fixed, ws_size - *fixed,
                       &slice_need) != 0) {
        return *fixed + slice_need > ws_size
                   ? vnpu_workspace_claim(run, *fixed + slice_need, *fixed, "weight slice",
                                          slice_need)
                   : -1;
    }
    if (vnpu_workspace_claim(run, *fixed + slice_need, *fixed, "weight slice", slice_need) != 0) {
        return -1;
    }
    const int16_t *kept =
        vnpu_wcache_add(&g, sizeof(g), &seg, 1, decoded, nweights, *fixed + slice_need);
    cv->weights = kept != NULL ? kept : decoded;
    return 0;
}

/* The per-channel bias/scale/shift records, decoded once (where the decoder's slices were). */
static int conv_channels(struct vnpu_exec *run, struct conv55 *cv, size_t fixed)
{
    struct vnpu_env *env = run->env;
    struct chan_rec *chans = (struct chan_rec *)(void *)(env->workspace + fixed);
    size_t cbytes = (size_t)cv->depth_out * sizeof(struct chan_rec);
    if (vnpu_workspace_claim(run, fixed + cbytes, fixed, "channel records", cbytes) != 0) {
        return -1;
    }
    for (int oc = 0; oc < cv->depth_out; oc++) {
        const uint8_t *rec = cv->scales + (size_t)oc * 10u;
        uint64_t braw = (uint64_t)rec[0] | ((uint64_t)rec[1] << 8) | ((uint64_t)rec[2] << 16) |
                        ((uint64_t)rec[3] << 24) | ((uint64_t)rec[4] << 32);
        chans[oc].bias = (braw & ((uint64_t)1 << 39))
                             ? (int64_t)(braw | ~(((uint64_t)1 << 40) - 1u))
                             : (int64_t)braw;
        uint32_t scale = (uint32_t)rec[5] | ((uint32_t)rec[6] << 8) | ((uint32_t)rec[7] << 16) |
                         ((uint32_t)rec[8] << 24);
        vnpu_rescaler_init(&chans[oc].rescale, scale, rec[9] & 0x3fu, cv->op.round);
    }
    cv->chans = chans;
    cv->no_bias = VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_NO_BIAS);
    const struct fm *ifm = &cv->op.ifm;
    cv->small_products = ifm->elem == 1 && ifm->zp >= -256 && ifm->zp <= 256;
    /*
     * The 8-bit path: 16-bit operands, an 8-bit OFM without LUT, and every channel's
     * bias + sum of products (each |p| < 2^17) inside (-2^30, 2^30), so the accumulator,
     * the rescale (vnpu_rescale32) and the clamp run in 32 bits. The same values as the
     * general path below; most of an 8-bit network's time is this per-output stage.
     */
    size_t terms = cv->depthwise ? cv->taps : cv->taps * (size_t)cv->depth_in;
    int fast8 = cv->small_products && cv->op.ofm.elem == 1 && cv->op.o.simple && terms < 4096u;
    for (int oc = 0; fast8 && oc < cv->depth_out; oc++) {
        int64_t bias = cv->no_bias ? 0 : chans[oc].bias;
        int64_t bound = ((int64_t)1 << 30) - ((int64_t)terms << 17);
        fast8 = vnpu_rescale32_init(&chans[oc].r32, &chans[oc].rescale) && bias > -bound &&
                bias < bound;
    }
    cv->fast8 = fast8;
    cv->vec8 = fast8 && vnpu_conv8_prepare(&cv->k8, cv->weights, cv->depth_out,
                                           cv->depthwise ? cv->taps : terms, (size_t)cv->op.ifm.c,
                                           cv->depthwise);
    for (int oc = 0; cv->vec8 && oc < cv->depth_out; oc++) {
        vnpu_conv8_channel(&cv->k8, oc, cv->no_bias ? 0 : (int32_t)chans[oc].bias, &chans[oc].r32);
    }
    cv->vec8 = cv->vec8 && vnpu_conv8_ifm(&cv->k8, &cv->op.ifm, &cv->op.k, cv->op.ukh, cv->op.ukw,
                                          cv->op.ofm.w);
    return 0;
}

/* The vector kernel's output bytes of one pixel to the OFM (8-bit: NHWC or 16-channel bricks). */
static inline void conv_store8(const struct fm *ofm, uint8_t *po, const uint8_t *out, int depth)
{
    if (!ofm->brick) {
        memcpy(po, out, (size_t)depth);
        return;
    }
    for (int c = 0; c < depth; c += 16) {
        memcpy(po + (ptrdiff_t)(c >> 4) * (ptrdiff_t)ofm->sc, out + c,
               (size_t)(depth - c < 16 ? depth - c : 16));
    }
}

/* The accumulator of channel oc over the gathered field (bias included). */
static inline int64_t conv_acc(const struct conv55 *cv, int oc)
{
    const int16_t *patch16 = (const int16_t *)(const void *)cv->patch;
    const int32_t *patch = cv->patch;
    const size_t taps = cv->taps;
    const size_t ic = (size_t)cv->op.ifm.c;
    const int16_t *wrow = cv->weights + (size_t)oc * taps * (size_t)cv->depth_in;
    int64_t acc = cv->no_bias ? 0 : cv->chans[oc].bias;
    if (cv->depthwise) {
        if (cv->small_products) {
            for (size_t t = 0; t < taps; t++) {
                acc += (int32_t)patch16[t * ic + (size_t)oc] * wrow[t];
            }
        } else {
            for (size_t t = 0; t < taps; t++) {
                acc += (int64_t)patch[t * ic + (size_t)oc] * wrow[t];
            }
        }
        return acc;
    }
    size_t n_terms = taps * (size_t)cv->depth_in;
    if (cv->small_products) {
        /* |product| < 2^17: 4096 of them cannot overflow 32 bits */
        for (size_t i0 = 0; i0 < n_terms; i0 += 4096u) {
            size_t i1 = n_terms - i0 < 4096u ? n_terms : i0 + 4096u;
            acc += dot16(patch16 + i0, wrow + i0, i1 - i0);
        }
        return acc;
    }
    int64_t sum = 0;
    for (size_t i = 0; i < n_terms; i++) {
        sum += (int64_t)patch[i] * wrow[i];
    }
    return acc + sum;
}

/* The outputs [*lo, *hi) of an axis of n whose taps o * stride - pad + [0, span] all lie in
 * [0, extent). */
static void conv_inner(int pad, int stride, int span, int extent, int n, int *lo, int *hi)
{
    int a = 0;
    while (a < n && a * stride - pad < 0) {
        a++;
    }
    int b = a;
    while (b < n && b * stride - pad + span < extent) {
        b++;
    }
    *lo = a;
    *hi = b;
}

/* A depthwise edge pixel by its valid taps from the IFM in place (padding adds nothing): 1
 * done, 0 when it has none or some lie outside the IFM's first tile (the caller gathers). */
static int conv_dw8_edge(const struct vnpu_conv8_fw *fw, const struct fm *ifm,
                         const struct kernel *k, int oy, int ox, uint8_t *po)
{
    int y0 = oy * k->sy - k->pad_top;
    int x0 = ox * k->sx - k->pad_left;
    int ky0;
    int ky1;
    int kx0;
    int kx1;
    vnpu_valid_taps(y0, k->dy, fw->ukh, k->ih, &ky0, &ky1);
    vnpu_valid_taps(x0, k->dx, fw->ukw, k->iw, &kx0, &kx1);
    if (ky0 >= ky1 || kx0 >= kx1 || y0 + (ky1 - 1) * k->dy >= ifm->h0 ||
        x0 + (kx1 - 1) * k->dx >= ifm->w0) {
        return 0;
    }
    vnpu_conv8_fw_dw8_taps(fw, ifm->mem + fm_offset(ifm, y0 + ky0 * k->dy, x0 + kx0 * k->dx, 0), po,
                           ky0, ky1, kx0, kx1);
    return 1;
}

static int op_conv(struct vnpu_exec *run, int depthwise)
{
    struct conv55 cv;
    size_t fixed = 0;
    if (conv_setup(run, &cv, depthwise) != 0 || conv_weights(run, &cv, &fixed) != 0 ||
        conv_channels(run, &cv, fixed) != 0) {
        return -1;
    }
    /* the loops' values as locals: the OFM stores below cannot alias them */
    const struct fm ifm = cv.op.ifm;
    const struct fm ofm = cv.op.ofm;
    const struct kernel k = cv.op.k;
    const struct vnpu_out o = cv.op.o;
    const struct chan_rec *chans = cv.chans;
    const int16_t *patch16 = (const int16_t *)(const void *)cv.patch;
    const size_t taps = cv.taps;
    const int depth_out = cv.depth_out;
    const int32_t out_lo = (int32_t)o.lim.lo;
    const int32_t out_hi = (int32_t)o.lim.hi;
    const struct vnpu_conv8_fw fw = {
        .weights = cv.weights,
        .terms = depthwise ? taps : taps * (size_t)cv.depth_in,
        .ic = (size_t)ifm.c,
        .depth_out = cv.depth_out,
        .depthwise = depthwise,
        .bias = cv.no_bias ? NULL : &cv.chans[0].bias,
        .r32 = &cv.chans[0].r32,
        .stride = sizeof(struct chan_rec),
        .zp = o.zp,
        .lo = out_lo,
        .hi = out_hi,
        .brick = ofm.brick,
        .sc = (ptrdiff_t)ofm.sc,
        .cs = 1,
        .ifm_signed = ifm.is_signed,
        .ifm_brick = ifm.brick,
        .ifm_zp = ifm.zp,
        .ifm_sc = (ptrdiff_t)ifm.sc,
        .ystep = (ptrdiff_t)k.dy * (ptrdiff_t)ifm.sy,
        .xstep = (ptrdiff_t)k.dx * (ptrdiff_t)ifm.sx,
        .ukh = cv.op.ukh,
        .ukw = cv.op.ukw,
    };
    if (cv.vec8 && ofm.h <= ofm.h0 && ofm.w <= ofm.w0) { /* one tile: the OFM in one call */
        const struct vnpu_conv8_ofm dst = {.at = ofm.mem + ofm.base[0],
                                           .sy = (ptrdiff_t)ofm.sy,
                                           .sx = (ptrdiff_t)ofm.sx,
                                           .sc = (ptrdiff_t)ofm.sc,
                                           .oh = ofm.h,
                                           .brick = ofm.brick};
        vnpu_conv8_run(&cv.k8, &dst, o.zp, out_lo, out_hi);
        return 0;
    }
    /* A depthwise 8-bit pixel whose taps inside the IFM all lie in its first tile (no
     * upscale) reads the IFM in place (vnpu_conv8_fw_dw8): the rows and columns where no
     * tap is padding, [ylo, yhi) x [xlo, xhi), and the edges by their valid taps. */
    const int dw8 = depthwise && cv.fast8 && !cv.vec8 && k.upscale == 0;
    int ylo = 0;
    int yhi = 0;
    int xlo = 0;
    int xhi = 0;
    if (dw8) {
        conv_inner(k.pad_top, k.sy, (cv.op.ukh - 1) * k.dy, k.ih < ifm.h0 ? k.ih : ifm.h0, ofm.h,
                   &ylo, &yhi);
        conv_inner(k.pad_left, k.sx, (cv.op.ukw - 1) * k.dx, k.iw < ifm.w0 ? k.iw : ifm.w0, ofm.w,
                   &xlo, &xhi);
    }
    /* A convolution's 8-bit path takes pixels two at a time: the second field after the
     * first in the patch (sized for int32 values: two int16 fields fit, the second from an
     * even value, in its rounding to 8 bytes when the field's length is odd). */
    const int pair = !depthwise && cv.fast8 && !cv.vec8;
    const size_t field = taps * (size_t)ifm.c;
    const int16_t *second = patch16 + ((field + 1u) & ~(size_t)1u);
    for (int oy = 0; oy < ofm.h; oy++) {
        const int inner = oy >= ylo && oy < yhi;
        for (int ox = 0; ox < ofm.w; ox++) {
            uint8_t *po = ofm.mem + fm_offset(&ofm, oy, ox, 0);
            if (inner && ox >= xlo && ox < xhi) {
                vnpu_conv8_fw_dw8(
                    &fw,
                    ifm.mem + fm_offset(&ifm, oy * k.sy - k.pad_top, ox * k.sx - k.pad_left, 0),
                    po);
                continue;
            }
            if (dw8 && conv_dw8_edge(&fw, &ifm, &k, oy, ox, po)) {
                continue;
            }
            if (cv.vec8) {
                conv_store8(&ofm, po, vnpu_conv8_pixel(&cv.k8, oy, ox, o.zp, out_lo, out_hi),
                            depth_out);
                continue;
            }
            if (pair && ox + 1 < ofm.w) {
                /* two pixels a call: the kernel loads each weight once for both */
                vnpu_gather(&ifm, &k, cv.patch, cv.op.ukh, cv.op.ukw, 1, oy, ox);
                vnpu_gather(&ifm, &k, (int32_t *)(void *)second, cv.op.ukh, cv.op.ukw, 1, oy,
                            ox + 1);
                vnpu_conv8_fw_conv2(&fw, patch16, second, po,
                                    ofm.mem + fm_offset(&ofm, oy, ox + 1, 0));
                ox++;
                continue;
            }
            vnpu_gather(&ifm, &k, cv.patch, cv.op.ukh, cv.op.ukw, cv.small_products, oy, ox);
            if (!cv.fast8) {
                for (int oc = 0; oc < depth_out; oc++) {
                    int64_t acc = conv_acc(&cv, oc);
                    store_elem(po + fm_chan(&ofm, oc), ofm.elem,
                               vnpu_out_value(&o, vnpu_rescale_by(&chans[oc].rescale, acc)));
                }
                continue;
            }
            vnpu_conv8_fw_pixel(&fw, patch16, po);
        }
    }
    return 0;
}

int u55_op_conv(struct vnpu_exec *run, uint32_t param)
{
    (void)param;
    return op_conv(run, 0);
}

int u55_op_depthwise(struct vnpu_exec *run, uint32_t param)
{
    (void)param;
    return op_conv(run, 1);
}

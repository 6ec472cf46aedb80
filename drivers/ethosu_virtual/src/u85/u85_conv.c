/* ethosu-porting-kit virtual NPU: Ethos-U85 CONV, DEPTHWISE and the matrix multiply (weights_ifm2). */
#include "u85/u85.h"

#include "common/mlw.h"
#include "common/mutation.h"
#include "common/num.h"
#include "common/conv8.h"
#include "common/wcache.h"
#include "ethosu_virtual.h"

#include <string.h>
#if defined(ETHOSU_VIRTUAL_WEIGHT_CACHE) && defined(__AVX512VBMI__) && defined(__AVX512VL__)
#include <immintrin.h>
#define CONV_VBMI 1 /* the host vector kernel's transposed stores: an 8x8 byte transpose */
#else
#define CONV_VBMI 0
#endif

/* The matrix multiply over every output, on copies no pointer reaches (the OFM stores cannot
 * alias them). IFM2 has one row per OFM row, or one for all. */
static void matmul_run(const struct fm ifm, const struct fm ifm2, const struct ofm85 ofm,
                       const struct vnpu_out o, const struct ofm_scale os)
{
    const int rows2 = ifm2.h;
    for (int y = 0; y < ofm.h; y++) {
        for (int x = 0; x < ofm.w; x++) {
            for (int oc = 0; oc < ofm.c; oc++) {
                int64_t acc = 0;
                for (int i = 0; i < ifm.c; i++) {
                    acc += (fm_read(&ifm, y, x, i) - ifm.zp) *
                           (fm_read(&ifm2, rows2 > 1 ? y : 0, oc, i) - ifm2.zp);
                }
                ofm_put(&ofm, y, x, oc,
                        vnpu_out_value(&o, vnpu_rescale(acc, os.scale, os.shift, os.round)));
            }
        }
    }
}

/*
 * CONV with weights_ifm2: a matrix multiply whose right-hand side is a feature map.
 * OFM (y, x, o) = sum over i of (IFM (y, x, i) - zp) * (IFM2 (y, o, i) - zp2): IFM2 holds
 * the transposed right-hand matrix, one per row y (or one for all if its height is 1).
 * No bias; the OFM scale is global.
 */
static int op_matmul(struct run85 *run)
{
    struct regs *r = &run->x.regs;
    struct fm ifm;
    struct fm ifm2;
    struct ofm85 ofm;
    struct vnpu_out o;
    int storage = STORAGE_TILE2X2;
    if (R0(KERNEL_WIDTH_M1) != 0 || R0(KERNEL_HEIGHT_M1) != 0 ||
        (R0(KERNEL_STRIDE) & 0x25bu) != 0) {
        return vnpu_fail(&run->x,
                         "weights_ifm2 with a kernel other than 1x1 stride 1 is not modelled");
    }
    if (u85_check_acc(run) != 0 || u85_setup_ofm(run, &ofm) != 0 ||
        u85_setup_out(run, &o, &ofm.fm) != 0 ||
        u85_setup_fm(run, &ifm, FM_IFM, &storage, "IFM") != 0 ||
        u85_setup_fm(run, &ifm2, FM_IFM2, &storage, "IFM2") != 0) {
        return -1;
    }
    if (storage == STORAGE_NONE) {
        return vnpu_fail(&run->x, "weights_ifm2 from a scalar IFM2 is not modelled");
    }
    if (((R0(OFM_PRECISION) >> 8) & 1u) == 0) {
        return vnpu_fail(&run->x, "weights_ifm2 with OFM scale_mode PER_CHANNEL is not modelled");
    }
    ifm.h = ofm.h;
    ifm.w = ofm.w;
    ifm.c = (int)R0(IFM_DEPTH_M1) + 1;
    int rows2 = (R0(IFM2_HEIGHT0_M1) + 1 >= ofm.h) ? ofm.h : 1;
    ifm2.h = rows2;
    ifm2.w = ofm.c;
    ifm2.c = ifm.c;
    if (vnpu_check_fm(&run->x, &ifm, "IFM") != 0 || vnpu_check_fm(&run->x, &ifm2, "IFM2") != 0) {
        return -1;
    }
    struct ofm_scale os;
    if (u85_ofm_scale(run, &os) != 0) {
        return -1;
    }
    matmul_run(ifm, ifm2, ofm, o, os);
    u85_chain_release(run, &ifm, &ifm2);
    u85_ofm_done(run, &ofm);
    return 0;
}

/* ---- CONV / DEPTHWISE ------------------------------------------------------------------- */

/* One channel's scale record, read once (and its 32-bit rescale for the 8-bit path). */
struct chan_scale {
    int64_t bias;
    uint32_t scale;
    uint32_t shift;
    struct vnpu_rescale32 r32;
};

/* One convolution as its stages hand it on: maps, weights, channel records, the loops. */
struct conv85 {
    struct fm ifm;
    struct ofm85 ofm;
    struct kernel k;
    struct vnpu_out o;
    struct operand acc_in; /* acc_input IFM2: the partial sums */
    int depthwise, keep, hold, from_ifm2, ifm2_ignored, round;
    int64_t *kept; /* kept accumulators, or NULL */
    struct wgeom g;
    size_t taps, n_terms;
    int narrow; /* 8-bit IFM: the receptive field as int16 */
    const int16_t *weights;
    int32_t *patch;
    struct chan_scale *chans;
    struct vnpu_conv8_fw fw; /* the 8-bit path where the vector kernel is not */
    int fast8;
    int vec8; /* the 8-bit path as the host's vector kernel (common/conv8.h) */
    struct vnpu_conv8 k8;
    struct axis_map oa[3];
};

/* The OFM, IFM, kernel, output stage and accumulator sources from the registers. */
static int conv_setup_maps(struct run85 *run, struct conv85 *cv, int depthwise)
{
    struct regs *r = &run->x.regs;
    uint32_t acc_fmt = R0(ACC_FORMAT);
    /* acc_input IFM2: the accumulators start from a 32-bit (Acc48: 64-bit) IFM2, a partial
     * sum an earlier CONV wrote (Vela's Conv3D: one CONV per kernel depth step) */
    cv->depthwise = depthwise;
    cv->from_ifm2 = ((acc_fmt >> 4) & 3u) == 2;
    cv->ifm2_ignored = cv->from_ifm2 && VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_CONV_IFM2_IGNORED);
    if (cv->from_ifm2 ? (run->acc.live || ((acc_fmt >> 6) & 1u))
                      : u85_kept_modes(run, "a convolution", &cv->keep, &cv->hold) != 0) {
        return cv->from_ifm2
                   ? vnpu_fail(&run->x, "acc_input IFM2 with kept accumulators is not modelled")
                   : -1;
    }
    run->b64_fm = (acc_fmt & 3u) == 1 ? FM_OFM : -1; /* Acc48 accumulators written out */
    run->ofm_none = cv->hold;
    int ofm_rc = u85_setup_ofm(run, &cv->ofm);
    run->b64_fm = -1;
    run->ofm_none = 0;
    int depth = depthwise ? cv->ofm.c : (int)R0(IFM_DEPTH_M1) + 1;
    if (ofm_rc != 0 || vnpu_setup_kernel(&run->x, &cv->k, cv->ofm.h, cv->ofm.w) != 0 ||
        u85_setup_out(run, &cv->o, &cv->ofm.fm) != 0 ||
        u85_setup_kernel_ifm(run, &cv->ifm, &cv->k, depth) != 0 ||
        u85_kept_buffer(run, &cv->ofm, cv->keep, cv->hold, &cv->kept) != 0) {
        return -1;
    }
    if (cv->from_ifm2) {
        run->b64_fm = (acc_fmt & 3u) == 1 ? FM_IFM2 : -1;
        int rc = u85_setup_operand(run, &cv->acc_in, FM_IFM2, &cv->ofm, 0);
        run->b64_fm = -1;
        if (rc != 0) {
            return -1;
        }
        if (cv->acc_in.scalar || cv->acc_in.fm.elem < 4) {
            return vnpu_fail(
                &run->x,
                "acc_input IFM2 for a convolution needs a 32-bit or 64-bit IFM2 feature map");
        }
    }
    if ((R0(OFM_PRECISION) >> 8) & 1u) {
        return vnpu_fail(&run->x, "OFM scale_mode GLOBAL for a convolution is not modelled");
    }
    cv->round = u85_ofm_round(run, P1(OFM_SCALE), "OFM_SCALE");
    return cv->round < 0 ? -1 : 0;
}

/*
 * The workspace after the live chain buffers: the decoded weights, the receptive field (int32,
 * or int16 for 8-bit IFMs: a vectorisable dot product), then each channel's scale record.
 */
static int conv_weights(struct run85 *run, struct conv85 *cv)
{
    struct vnpu_env *env = run->x.env;
    uint8_t *ws = env->workspace;
    size_t used = run->chain_end;
    const struct wgeom *g = &cv->g;
    cv->taps = (size_t)g->kh * (size_t)g->kw;
    cv->n_terms = cv->taps * (size_t)g->ifm_depth;
    size_t nweights = (size_t)cv->ofm.c * cv->n_terms;
    size_t wbytes = (nweights * sizeof(int16_t) + 7u) & ~(size_t)7u;
    cv->narrow = cv->ifm.elem == 1;
    size_t pbytes =
        (cv->taps * (size_t)cv->ifm.c * (cv->narrow ? sizeof(int16_t) : sizeof(int32_t)) + 7u) &
        ~(size_t)7u;
    pbytes += (size_t)cv->ofm.c * sizeof(struct chan_scale);
    size_t fixed = used + wbytes + pbytes;
    /* the weight decoder claims its slice memory above `fixed` itself (none for FWD weights) */
    if (vnpu_workspace_claim(&run->x, fixed, fixed, NULL, 0) != 0) {
        return -1;
    }
    cv->patch = (int32_t *)(void *)(ws + used + wbytes);
    cv->chans =
        (struct chan_scale *)(void *)(ws + fixed - (size_t)cv->ofm.c * sizeof(struct chan_scale));
    return u85_decode_weights(run, g, used, fixed, nweights, &cv->weights);
}

/*
 * Each channel's record; the 8-bit path (as the U55's): an 8-bit OFM without LUT, one tile,
 * and every channel's bias + sum of products (each |p| < 2^17) inside (-2^30, 2^30), so the
 * accumulator, the rescale (vnpu_rescale32) and the clamp run in 32 bits, two output channels
 * a pass over the receptive field. The same values as the general path.
 */
static int conv_setup_channels(struct run85 *run, struct conv85 *cv)
{
    struct scale_stream ss;
    if (u85_setup_scales(run, &ss, cv->ofm.c) != 0) {
        return -1;
    }
    int no_bias = VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_NO_BIAS);
    struct chan_scale *chans = cv->chans;
    for (int oc = 0; oc < cv->ofm.c; oc++) {
        unsigned shift;
        u85_scale_record(&ss, oc, &chans[oc].bias, &chans[oc].scale, &shift);
        chans[oc].shift = shift;
        chans[oc].bias = no_bias ? 0 : chans[oc].bias;
    }
    size_t terms = cv->depthwise ? cv->taps : cv->n_terms;
    /* (an OFM whose bricked channel axis is reversed takes the general path) */
    int fast8 = cv->narrow && cv->o.simple && terms < 4096u && cv->kept == NULL && !cv->from_ifm2 &&
                u85_axes_of(&cv->ofm.fm, cv->ofm.axis, cv->ofm.reverse, cv->oa) &&
                !(cv->oa[2].brick && cv->oa[2].rev);
    for (int oc = 0; fast8 && oc < cv->ofm.c; oc++) {
        struct vnpu_rescaler rs;
        vnpu_rescaler_init(&rs, chans[oc].scale, chans[oc].shift, cv->round);
        int64_t bound = ((int64_t)1 << 30) - ((int64_t)terms << 17);
        fast8 = vnpu_rescale32_init(&chans[oc].r32, &rs) && chans[oc].bias > -bound &&
                chans[oc].bias < bound;
    }
    cv->fast8 = fast8;
    const struct axis_map *oc_axis = &cv->oa[2];
    cv->fw = (struct vnpu_conv8_fw){
        .weights = cv->weights,
        .terms = terms,
        .ic = (size_t)cv->ifm.c,
        .depth_out = cv->ofm.c,
        .depthwise = cv->depthwise,
        .bias = &chans[0].bias,
        .r32 = &chans[0].r32,
        .stride = sizeof(struct chan_scale),
        .zp = cv->o.zp,
        .lo = (int32_t)cv->o.lim.lo,
        .hi = (int32_t)cv->o.lim.hi,
        .brick = oc_axis->brick,
        .sc = (ptrdiff_t)oc_axis->sc,
        /* reversed: channel 0's byte is the last, the others below it (conv_pixel8) */
        .cs = (ptrdiff_t)(oc_axis->rev ? -oc_axis->stride : oc_axis->stride),
    };
    cv->vec8 = fast8 && vnpu_conv8_prepare(&cv->k8, cv->weights, cv->ofm.c, terms,
                                           (size_t)cv->ifm.c, cv->depthwise);
    for (int oc = 0; cv->vec8 && oc < cv->ofm.c; oc++) {
        vnpu_conv8_channel(&cv->k8, oc, (int32_t)chans[oc].bias, &chans[oc].r32);
    }
    cv->vec8 = cv->vec8 && vnpu_conv8_ifm(&cv->k8, &cv->ifm, &cv->k, cv->g.kh, cv->g.kw, cv->ofm.w);
    return 0;
}

/* One pixel's depth_out bytes from the vector kernel to po when the OFM's channels are adjacent
 * bytes or runs of 16 (NHCWB16): 1 stored, 0 (another layout) not. */
static inline int conv_store8(uint8_t *po, const uint8_t *out, const struct axis_map *oa,
                              int depth_out)
{
    if (!oa[2].brick && !oa[2].rev && oa[2].stride == 1) {
        memcpy(po, out, (size_t)depth_out);
        return 1;
    }
    if (oa[2].brick && !oa[2].rev) { /* NHCWB16: runs of 16 channels */
        int c = 0;
        for (; c + 16 <= depth_out; c += 16) {
            memcpy(po + (c >> 4) * oa[2].sc, out + c, 16u); /* a constant size: one vector */
        }
        if (c < depth_out) {
            memcpy(po + (c >> 4) * oa[2].sc, out + c, (size_t)(depth_out - c));
        }
        return 1;
    }
    return 0;
}

/* The 8-bit path's OFM pixel (oy, ox): the host's vector kernel, or the firmware's
 * (vnpu_conv8_fw_pixel). `cv` is conv_run's own copy: no store reaches it. */
static inline void conv_pixel8(const struct conv85 *cv, int oy, int ox)
{
    const int16_t *patch16 = (const int16_t *)(const void *)cv->patch;
    const struct axis_map *oa = cv->oa;
    const int depth_out = cv->ofm.c;
    const int32_t zp = cv->o.zp;
    const int32_t lo = (int32_t)cv->o.lim.lo;
    const int32_t hi = (int32_t)cv->o.lim.hi;
    uint8_t *po = cv->ofm.fm.mem + cv->ofm.fm.base[0] + axis_off(&oa[0], oy) + axis_off(&oa[1], ox);
    if (cv->vec8) {
        const uint8_t *out = vnpu_conv8_pixel(&cv->k8, oy, ox, zp, lo, hi);
        if (!conv_store8(po, out, oa, depth_out)) {
            for (int c = 0; c < depth_out; c++) {
                po[axis_off(&oa[2], c)] = out[c];
            }
        }
        return;
    }
    vnpu_conv8_fw_pixel(&cv->fw, patch16, po + axis_off(&oa[2], 0));
}

/* One channel of n pixels: the byte every ns from src to every xs from dst. restrict: a byte
 * store may alias anything, the loop's own values included. */
static inline void conv_scatter8(uint8_t *restrict dst, const uint8_t *restrict src, int n,
                                 size_t ns, ptrdiff_t xs)
{
    for (int i = 0; i < n; i++) {
        dst[(ptrdiff_t)i * xs] = src[(size_t)i * ns];
    }
}

#if CONV_VBMI
/*
 * conv_scatter8 of channels [c0, c0 + 8) (those below depth_out) for n <= 8 pixels whose x
 * steps are one byte (a transposed OFM's rows): their 8x8 bytes transposed in one VPERMB,
 * then a masked store of n bytes per channel, where a byte at a time was 6-8 stores and as
 * many loads.
 */
static void conv_transpose8(uint8_t *px, const struct axis_map *ca, const uint8_t *out, int n,
                            size_t ns, int c0, int depth_out)
{
    /* byte 8 * j + i of the result (channel j, pixel i) is byte 8 * i + j of the pixels' */
    static const uint8_t order[64] = {0, 8,  16, 24, 32, 40, 48, 56, 1, 9,  17, 25, 33, 41, 49, 57,
                                      2, 10, 18, 26, 34, 42, 50, 58, 3, 11, 19, 27, 35, 43, 51, 59,
                                      4, 12, 20, 28, 36, 44, 52, 60, 5, 13, 21, 29, 37, 45, 53, 61,
                                      6, 14, 22, 30, 38, 46, 54, 62, 7, 15, 23, 31, 39, 47, 55, 63};
    uint64_t q[8] = {0};
    for (int i = 0; i < n; i++) {
        memcpy(&q[i], out + (size_t)i * ns + (size_t)c0, sizeof(q[i]));
    }
    __m512i t = _mm512_permutexvar_epi8(_mm512_loadu_si512((const void *)order),
                                        _mm512_loadu_si512((const void *)q));
    uint8_t by_channel[64];
    _mm512_storeu_si512((void *)by_channel, t);
    const __mmask16 mask = (__mmask16)((1u << n) - 1u);
    const int m = depth_out - c0 < 8 ? depth_out - c0 : 8;
    for (int j = 0; j < m; j++) {
        _mm_mask_storeu_epi8(px + axis_off(ca, c0 + j), mask,
                             _mm_loadl_epi64((const __m128i *)(const void *)(by_channel + 8 * j)));
    }
}
#endif

/*
 * The host vector kernel's convolution (not depthwise) over every OFM pixel, from a copy of
 * the set-up no pointer reaches: the pixels the kernel computes together along a row are taken
 * in one call, and an OFM whose channels are not adjacent bytes (transposed, reversed) is
 * written a channel at a time over them, one channel's offset for the run.
 */
static void conv_run_vec8(const struct conv85 *setup)
{
    const struct conv85 cv = *setup;
    const struct axis_map *oa = cv.oa;
    const int depth_out = cv.ofm.c;
    const size_t ns = cv.k8.out_stride;
    const int32_t zp = cv.o.zp;
    const int32_t lo = (int32_t)cv.o.lim.lo;
    const int32_t hi = (int32_t)cv.o.lim.hi;
    for (int oy = 0; oy < cv.ofm.h; oy++) {
        uint8_t *row = cv.ofm.fm.mem + cv.ofm.fm.base[0] + axis_off(&oa[0], oy);
        int count = 1;
        for (int ox = 0; ox < cv.ofm.w; ox += count) {
            const uint8_t *out = vnpu_conv8_pixels(&cv.k8, oy, ox, zp, lo, hi, &count);
            count = count < cv.ofm.w - ox ? count : cv.ofm.w - ox;
            int stored = 1;
            for (int i = 0; stored && i < count; i++) {
                stored = conv_store8(row + axis_off(&oa[1], ox + i), out + (size_t)i * ns, oa,
                                     depth_out);
            }
            if (stored) {
                continue;
            }
            /* a transposed x axis may be the memory's bricked one: a byte at a time there; a
             * reversed one steps back */
            uint8_t *px = row + axis_off(&oa[1], ox);
            const ptrdiff_t xs = (ptrdiff_t)(oa[1].rev ? -oa[1].stride : oa[1].stride);
#if CONV_VBMI
            if (xs == 1 && !oa[1].brick && count <= 8) {
                for (int c = 0; c < depth_out; c += 8) {
                    conv_transpose8(px, &oa[2], out, count, ns, c, depth_out);
                }
                continue;
            }
#endif
            for (int c = 0; c < depth_out; c++) {
                if (!oa[1].brick) {
                    conv_scatter8(px + axis_off(&oa[2], c), out + c, count, ns, xs);
                    continue;
                }
                for (int i = 0; i < count; i++) {
                    row[axis_off(&oa[1], ox + i) + axis_off(&oa[2], c)] =
                        out[(size_t)i * ns + (size_t)c];
                }
            }
        }
    }
}

/*
 * Every OFM pixel, from a copy of the set-up no pointer reaches: the stores into the OFM
 * cannot alias it, so its fields stay in registers. The general path: kept and IFM2
 * accumulators, any OFM.
 */
static void conv_run(const struct conv85 *setup)
{
    const struct conv85 cv = *setup;
    const struct ofm85 *ofm = &cv.ofm;
    const struct chan_scale *chans = cv.chans;
    const int16_t *weights = cv.weights;
    const int32_t *patch = cv.patch;
    const int16_t *patch16 = (const int16_t *)(const void *)patch;
    const size_t taps = cv.taps;
    const size_t n_terms = cv.n_terms;
    const size_t ic = (size_t)cv.ifm.c;
    const int from_ifm2 = cv.from_ifm2 && !cv.ifm2_ignored;
    const struct fm ifm = cv.ifm; /* the gather's, apart from what its stores reach */
    const struct kernel k = cv.k;
    for (int oy = 0; oy < ofm->h; oy++) {
        for (int ox = 0; ox < ofm->w; ox++) {
            if (!cv.vec8) {
                vnpu_gather(&ifm, &k, cv.patch, cv.g.kh, cv.g.kw, cv.narrow, oy, ox);
            }
            if (cv.fast8) {
                conv_pixel8(&cv, oy, ox);
                continue;
            }
            for (int oc = 0; oc < ofm->c; oc++) {
                size_t ki =
                    ((size_t)oy * (size_t)ofm->w + (size_t)ox) * (size_t)ofm->c + (size_t)oc;
                /* the bias is the output stage's: the operation that writes the OFM adds its own */
                int64_t acc = (cv.keep ? cv.kept[ki] : 0) + (cv.hold ? 0 : chans[oc].bias) +
                              (from_ifm2 ? operand_at(&cv.acc_in, oy, ox, oc) : 0);
                const int16_t *wrow = weights + (size_t)oc * n_terms;
                if (cv.depthwise) {
                    for (size_t t = 0; t < taps; t++) {
                        size_t i = t * ic + (size_t)oc;
                        acc += (int64_t)(cv.narrow ? patch16[i] : patch[i]) * wrow[t];
                    }
                } else if (cv.narrow) {
                    /* |patch| <= 511, |w| <= 256: 16384 products cannot overflow 32 bits */
                    for (size_t i0 = 0; i0 < n_terms; i0 += 16384u) {
                        size_t i1 = n_terms - i0 < 16384u ? n_terms : i0 + 16384u;
                        acc += dot16(patch16 + i0, wrow + i0, i1 - i0);
                    }
                } else {
                    for (size_t i = 0; i < n_terms; i++) {
                        acc += (int64_t)patch[i] * wrow[i];
                    }
                }
                if (cv.hold) {
                    cv.kept[ki] = acc;
                    continue;
                }
                ofm_put(ofm, oy, ox, oc,
                        vnpu_out_value(
                            &cv.o, vnpu_rescale(acc, chans[oc].scale, chans[oc].shift, cv.round)));
            }
        }
    }
}

static int op_conv(struct run85 *run, int depthwise, uint32_t param)
{
    if (!depthwise && (param & 1u)) {
        return op_matmul(run);
    }
    struct conv85 cv;
    memset(&cv, 0, sizeof(cv));
    if (conv_setup_maps(run, &cv, depthwise) != 0 ||
        u85_weight_order(run, &cv.k, depthwise, &cv.ifm, cv.ofm.c, &cv.g) != 0 ||
        conv_weights(run, &cv) != 0 || conv_setup_channels(run, &cv) != 0) {
        return -1;
    }
    if (cv.vec8 && !cv.depthwise) {
        conv_run_vec8(&cv);
    } else {
        conv_run(&cv);
    }
    run->acc.live = cv.hold;
    u85_chain_release(run, &cv.ifm, cv.from_ifm2 ? &cv.acc_in.fm : NULL);
    u85_ofm_done(run, &cv.ofm);
    return 0;
}

int u85_op_conv(struct vnpu_exec *x, uint32_t param) { return op_conv(u85_run(x), 0, param); }

int u85_op_depthwise(struct vnpu_exec *x, uint32_t param) { return op_conv(u85_run(x), 1, param); }

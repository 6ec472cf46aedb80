/*
 * ethosu-porting-kit virtual NPU: the command interpreter and the kernel operations
 * of an Ethos-U55/U65 (single core), bit-exact with the arithmetic in the kit's
 * command-stream reference (sections 5-10).
 *
 * One register file for the whole stream (Vela only emits changes), snapshotted at
 * each NPU_OP_*. Every operation runs to completion in stream order, which gives the
 * architected result. Anything outside the modelled scope stops the stream with an
 * error that names the command and the value.
 */
#include "vnpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- register file ---------------------------------------------------------------------- */

/* this architecture's own registers (the shared ones are in vnpu.h) */
enum {
    PARALLEL_MODE = 0x123,
    IFM2_SCALAR = 0x181,
    /* cmd1 */
    OPA_SCALE = 0x025,
    OPB_SCALE = 0x026,
};

struct run {
    struct vnpu_env *env;
    struct regs regs;
    size_t word; /* index of the command being executed, for error messages */
    uint32_t code;
};

static int fail(struct run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct run *run, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnpu_error(run->env, &vnpu_isa_u55, run->code, run->word, "", fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- integer arithmetic ---------------------------------------------------------------- */

/* ---- feature maps ------------------------------------------------------------------------ */

/* Bytes from a pixel's first channel to channel c (fm_offset is pixel + this); in pointer-sized
 * arithmetic: fm_check proved the box inside its region, and it runs once per output value. */
static inline ptrdiff_t fm_chan(const struct fm *f, int c)
{
    return f->brick ? (ptrdiff_t)(c >> 4) * (ptrdiff_t)f->sc + (ptrdiff_t)((c & 15) * f->elem)
                    : (ptrdiff_t)(c * f->elem);
}

/* Prove every address the box [0,h)x[0,w)x[0,c) touches lies in the region. */
static int fm_check(struct run *run, const struct fm *f, const char *what)
{
    char why[112];
    return vnpu_fm_check(f, what, why, sizeof(why)) != 0 ? fail(run, "%s", why) : 0;
}

static int region_of(struct run *run, unsigned region, uint8_t **mem, size_t *size,
                     const char *what)
{
    char why[112];
    return vnpu_region(run->env, region, mem, size, what, why, sizeof(why)) != 0
               ? fail(run, "%s", why)
               : 0;
}

/* Feature map `which` (FM_IFM, FM_IFM2, FM_OFM) from the registers. */
static int setup_fm(struct run *run, struct fm *f, int which, const char *what)
{
    struct regs *r = &run->regs;
    const struct vnpu_fm_regs *d = vnpu_fm_regs(which);
    int bits;
    uint32_t prec = vnpu_fm_read_regs(r, d, f, &bits);
    for (int t = 0; t < 4; t++) {
        f->base[t] = W1(d->base0 + t);
    }
    f->sx = (int32_t)W1(d->stride_x);
    f->sy = (int32_t)W1(d->stride_y);
    f->sc = (int32_t)W1(d->stride_c);
    char why[112];
    if (vnpu_fm_precision(f, prec, bits, what, why, sizeof(why)) != 0) {
        return fail(run, "%s", why);
    }
    return region_of(run, R0(d->region) & 7u, &f->mem, &f->size, what);
}

/* ---- output stage ------------------------------------------------------------------------- */

static int setup_out(struct run *run, struct vnpu_out *o, const struct fm *ofm)
{
    struct regs *r = &run->regs;
    uint32_t act = R0(ACTIVATION);
    uint32_t func = act & 0x1fu;
    uint32_t clip = (act >> 12) & 7u;
    o->zp = ofm->zp;
    o->lut = 0;
    o->table = NULL;
    if (func >= 16 && func <= 23) {
        uint32_t shram = ((run->env->config >> 8) & 0xffu) * 1024u;
        (void)shram;
        unsigned slot = func - 16u;
        if (ofm->elem == 2) {
            if (slot != 0) {
                return fail(run, "int16 LUT in TABLE_%u: the 2 KiB table only fits from slot 0",
                            slot);
            }
            o->lut = 16;
        } else {
            o->lut = 8;
        }
        o->table = run->env->lut + slot * 256u;
        o->lut_unsigned = clip == 2 || (clip == 0 && !ofm->is_signed);
        if (clip != 0 && clip != 2 && clip != 3 && !(clip == 5 && o->lut == 16)) {
            return fail(run, "activation_clip_range %lu with a LUT is not modelled",
                        (unsigned long)clip);
        }
    } else if (func != 0) {
        return fail(run, "activation_function %lu (built-in TANH/SIGMOID) is not modelled",
                    (unsigned long)func);
    } else if (clip != 0) {
        return fail(run, "activation_clip_range %lu without a LUT is not modelled",
                    (unsigned long)clip);
    }
    vnpu_limits_init(&o->lim, ofm, R0(ACTIVATION_MIN), R0(ACTIVATION_MAX),
                     ofm->elem < 4 || (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_CLAMP_32BIT));
    o->simple = o->lut == 0 && o->lim.lo <= o->lim.hi;
    return 0;
}

/* ---- kernel geometry ---------------------------------------------------------------------- */

static int setup_kernel(struct run *run, struct kernel *k, int oh, int ow)
{
    char why[112];
    return vnpu_kernel_setup(k, run->regs.p0, oh, ow, why, sizeof(why)) != 0 ? fail(run, "%s", why)
                                                                             : 0;
}

static void stored_extent(const struct kernel *k, int *h, int *w)
{
    *h = k->upscale ? (k->ih + 1) / 2 : k->ih;
    *w = k->upscale ? (k->iw + 1) / 2 : k->iw;
}

static int setup_ofm(struct run *run, struct fm *ofm)
{
    struct regs *r = &run->regs;
    if (setup_fm(run, ofm, FM_OFM, "OFM") != 0) {
        return -1;
    }
    ofm->h = R0(OFM_HEIGHT_M1) + 1;
    ofm->w = R0(OFM_WIDTH_M1) + 1;
    ofm->c = R0(OFM_DEPTH_M1) + 1;
    return fm_check(run, ofm, "OFM");
}

/*
 * What every kernel operation (POOL, CONV, DEPTHWISE) sets up the same way: OFM, IFM, the
 * kernel geometry, the output stage and the OFM rounding, each checked against its region.
 */
struct kernel_op {
    struct fm ifm;
    struct fm ofm;
    struct kernel k;
    struct vnpu_out o;
    int round;    /* OFM round_mode */
    int ukh, ukw; /* undilated kernel taps */
};

/* ifm_depth_reg: the IFM depth is IFM_DEPTH_M1 + 1 (else the OFM's depth). */
static int setup_kernel_op(struct run *run, struct kernel_op *op, int ifm_depth_reg)
{
    struct regs *r = &run->regs;
    if (setup_ofm(run, &op->ofm) != 0 || setup_fm(run, &op->ifm, FM_IFM, "IFM") != 0 ||
        setup_kernel(run, &op->k, op->ofm.h, op->ofm.w) != 0 ||
        setup_out(run, &op->o, &op->ofm) != 0) {
        return -1;
    }
    stored_extent(&op->k, &op->ifm.h, &op->ifm.w);
    op->ifm.c = ifm_depth_reg ? (int)R0(IFM_DEPTH_M1) + 1 : op->ofm.c;
    if (fm_check(run, &op->ifm, "IFM") != 0) {
        return -1;
    }
    op->round = (int)((R0(OFM_PRECISION) >> 14) & 3u);
    if (op->round == 3) {
        return fail(run, "OFM round_mode 3 is not defined");
    }
    op->ukh = (op->k.kh - 1) / op->k.dy + 1;
    op->ukw = (op->k.kw - 1) / op->k.dx + 1;
    return 0;
}

/* ---- POOL ---------------------------------------------------------------------------------- */

static int op_pool(struct run *run, uint32_t mode)
{
    struct regs *r = &run->regs;
    struct kernel_op op;
    if (mode > 2) {
        return fail(run, "pooling_mode %lu is not defined for U55", (unsigned long)mode);
    }
    if (setup_kernel_op(run, &op, mode == 2) != 0) {
        return -1;
    }
    const struct fm ifm = op.ifm;
    const struct fm ofm = op.ofm;
    const struct kernel k = op.k;
    const struct vnpu_out o = op.o;
    if (mode == 2 && ofm.c != 1) {
        return fail(run, "REDUCE_SUM with OFM depth %d (expected 1)", ofm.c);
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

/* ---- ELEMENTWISE -------------------------------------------------------------------------- */

/* What an elementwise operation does to each operand before combining them. */
struct ew55 {
    int mode, scale_mode, iround, fixed_shift;
    uint32_t opa;
    unsigned opa_shift;
    int64_t opa16, opb16;
};

/* Operand v (zero point removed) as the operation combines it: `first` is operand a (after
 * any swap). ADD/SUB scale their operands (scale_mode 0: OPA/OPB 16-bit; 1: a rescaled, b
 * shifted; 2: the other way round); the other operations take them as they are. */
static inline int64_t ew55_pre(const struct ew55 *e, int first, int64_t v)
{
    if (e->mode != 1 && e->mode != 2) {
        return v;
    }
    if (e->scale_mode == 0) {
        return v * (first ? e->opa16 : e->opb16);
    }
    if ((e->scale_mode == 1) == (first != 0)) {
        return vnpu_rescale(v, e->opa, e->opa_shift, e->iround);
    }
    return v * ((int64_t)1 << e->fixed_shift);
}

static int op_elementwise(struct run *run, uint32_t mode)
{
    struct regs *r = &run->regs;
    struct fm ifm;
    struct fm ifm2;
    struct fm ofm;
    struct vnpu_out o;
    static const char *const names[] = {"MUL",   "ADD", "SUB", "MIN", "MAX",
                                        "LRELU", "ABS", "CLZ", "SHR", "SHL"};
    if (mode == 5 || mode >= 7) {
        return fail(run, "elementwise_mode %lu (%s) is not modelled", (unsigned long)mode,
                    mode < 10 ? names[mode] : "undefined");
    }
    int unary = mode == 6;
    if (setup_ofm(run, &ofm) != 0 || setup_fm(run, &ifm, FM_IFM, "IFM") != 0 ||
        setup_out(run, &o, &ofm) != 0) {
        return -1;
    }
    ifm.h = ofm.h;
    ifm.w = ofm.w;
    ifm.c = ofm.c;
    if (fm_check(run, &ifm, "IFM") != 0) {
        return -1;
    }
    uint32_t bc = R0(IFM2_BROADCAST);
    int scalar = !unary && ((bc >> 7) & 1u);
    int reversed = !unary && ((bc >> 6) & 1u);
    int64_t scalar_value = 0;
    if (!unary) {
        if (setup_fm(run, &ifm2, FM_IFM2, "IFM2") != 0) {
            return -1;
        }
        if (scalar) {
            uint32_t raw = R0(IFM2_SCALAR);
            scalar_value = (ifm2.is_signed ? (int64_t)(int16_t)raw : (int64_t)raw) - ifm2.zp;
        } else {
            ifm2.h = (bc & 1u) ? 1 : ofm.h;
            ifm2.w = (bc & 2u) ? 1 : ofm.w;
            ifm2.c = (bc & 4u) ? 1 : ofm.c;
            if (fm_check(run, &ifm2, "IFM2") != 0) {
                return -1;
            }
        }
    }
    uint32_t iprec = R0(IFM_PRECISION);
    int scale_mode = (int)((iprec >> 8) & 3u);
    int iround = (int)((iprec >> 14) & 3u);
    int oround = (int)((R0(OFM_PRECISION) >> 14) & 3u);
    if (oround == 3 || (mode <= 2 && iround == 3)) {
        return fail(run, "round_mode 3 is not defined");
    }
    if ((mode == 1 || mode == 2) && scale_mode == 3) {
        return fail(run, "IFM scale_mode 3 is not defined");
    }
    int fixed_shift = ifm.elem == 1 ? 19 : 14;
    if ((mode == 1 || mode == 2) && scale_mode != 0 && ifm.elem == 4) {
        return fail(run, "ADD/SUB scale_mode %d with a 32-bit IFM is not modelled", scale_mode);
    }
    if (ifm.elem == 1 && (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_SHIFT_18)) {
        fixed_shift = 18;
    }
    uint32_t opa = W1(OPA_SCALE);
    unsigned opa_shift = P1(OPA_SCALE) & 0x3fu;
    int64_t opa16 = (int16_t)(W1(OPA_SCALE) & 0xffffu);
    int64_t opb16 = (int16_t)(W1(OPB_SCALE) & 0xffffu);
    int wide = ifm.elem == 4 || ofm.elem == 4;
    uint32_t oscale = wide ? 1u : W1(OFM_SCALE);
    unsigned oshift = P1(OFM_SCALE) & 0x3fu;
    struct vnpu_rescaler out_scale;
    vnpu_rescaler_init(&out_scale, oscale, oshift, oround);

    struct ew55 e;
    e.mode = (int)mode;
    e.scale_mode = scale_mode;
    e.iround = iround;
    e.fixed_shift = fixed_shift;
    e.opa = opa;
    e.opa_shift = opa_shift;
    e.opa16 = opa16;
    e.opb16 = opb16;

    /* each pixel addressed once; its channels by fm_chan (NHWC or NHCWB16) */
    int ka = ifm.elem * 2 + ifm.is_signed;
    int kb = unary || scalar ? 0 : ifm2.elem * 2 + ifm2.is_signed;
    /*
     * 8-bit operands and OFM without LUT (a residual ADD): each operand's scaled value
     * from a 256-entry table of ew55_pre, the combination and output stage in 32 bits
     * when every table value keeps it inside (-2^30, 2^30). The same values as below.
     */
    int32_t t1[256];
    int32_t t2[256];
    struct vnpu_rescale32 out32;
    int fast8 = !unary && mode <= 4 && ifm.elem == 1 && ofm.elem == 1 &&
                (scalar || ifm2.elem == 1) && o.simple && vnpu_rescale32_init(&out32, &out_scale);
    if (fast8) {
        /* the operands' positions after the swap: IFM is a unless reversed */
        int64_t max1 = 0;
        int64_t max2 = 0;
        for (int v = 0; v < 256 && fast8; v++) {
            /* byte v as each 8-bit operand stores it */
            int64_t v1 = ifm.is_signed ? (int64_t)(int8_t)(uint8_t)v : (int64_t)v;
            int64_t v2 = !scalar && ifm2.is_signed ? (int64_t)(int8_t)(uint8_t)v : (int64_t)v;
            int64_t x1 = ew55_pre(&e, !reversed, v1 - ifm.zp);
            int64_t x2 = ew55_pre(&e, reversed, scalar ? scalar_value : v2 - ifm2.zp);
            max1 = x1 < 0 ? (-x1 > max1 ? -x1 : max1) : (x1 > max1 ? x1 : max1);
            max2 = x2 < 0 ? (-x2 > max2 ? -x2 : max2) : (x2 > max2 ? x2 : max2);
            fast8 = max1 < ((int64_t)1 << 30) && max2 < ((int64_t)1 << 30);
            t1[v] = (int32_t)x1;
            t2[v] = (int32_t)x2;
        }
        /* |a op b| below 2^30 for every pair */
        fast8 =
            fast8 && (mode == 0 ? max1 * max2 : (mode <= 2 ? max1 + max2 : 0)) < ((int64_t)1 << 30);
    }
    if (fast8) {
        const int32_t lo = (int32_t)o.lim.lo;
        const int32_t hi = (int32_t)o.lim.hi;
        for (int y = 0; y < ofm.h; y++) {
            for (int x = 0; x < ofm.w; x++) {
                const uint8_t *pa = ifm.mem + fm_offset(&ifm, y, x, 0);
                const uint8_t *pb = pa;
                uint8_t *po = ofm.mem + fm_offset(&ofm, y, x, 0);
                if (!scalar) {
                    pb = ifm2.mem + fm_offset(&ifm2, (bc & 1u) ? 0 : y, (bc & 2u) ? 0 : x, 0);
                }
                for (int c = 0; c < ofm.c; c++) {
                    int32_t x1 = t1[pa[fm_chan(&ifm, c)]];
                    int32_t x2 = scalar ? t2[0] : t2[pb[fm_chan(&ifm2, (bc & 4u) ? 0 : c)]];
                    int32_t a = reversed ? x2 : x1;
                    int32_t b = reversed ? x1 : x2;
                    int32_t res = mode == 0   ? a * b
                                  : mode == 1 ? a + b
                                  : mode == 2 ? a - b
                                  : mode == 3 ? (a < b ? a : b)
                                              : (a > b ? a : b);
                    po[fm_chan(&ofm, c)] = vnpu_out8(&out32, res, o.zp, lo, hi);
                }
            }
        }
        return 0;
    }
    for (int y = 0; y < ofm.h; y++) {
        for (int x = 0; x < ofm.w; x++) {
            const uint8_t *pa = ifm.mem + fm_offset(&ifm, y, x, 0);
            const uint8_t *pb = NULL;
            uint8_t *po = ofm.mem + fm_offset(&ofm, y, x, 0);
            if (!unary && !scalar) {
                pb = ifm2.mem + fm_offset(&ifm2, (bc & 1u) ? 0 : y, (bc & 2u) ? 0 : x, 0);
            }
            for (int c = 0; c < ofm.c; c++) {
                int64_t a = load_elem(pa + fm_chan(&ifm, c), ka) - ifm.zp;
                int64_t b = 0;
                if (!unary) {
                    b = scalar ? scalar_value
                               : load_elem(pb + fm_chan(&ifm2, (bc & 4u) ? 0 : c), kb) - ifm2.zp;
                    if (reversed) {
                        int64_t t = a;
                        a = b;
                        b = t;
                    }
                }
                a = ew55_pre(&e, 1, a);
                b = ew55_pre(&e, 0, b);
                int64_t res;
                switch (mode) {
                case 0:
                    res = a * b;
                    break;
                case 1:
                    res = a + b;
                    break;
                case 2:
                    res = a - b;
                    break;
                case 3:
                    res = a < b ? a : b;
                    break;
                case 4:
                    res = a > b ? a : b;
                    break;
                default:
                    res = a < 0 ? -a : a;
                    break;
                }
                store_elem(po + fm_chan(&ofm, c), ofm.elem,
                           vnpu_out_value(&o, vnpu_rescale_by(&out_scale, res)));
            }
        }
    }
    return 0;
}

/* ---- weights ------------------------------------------------------------------------------- */

/* What decides where each value of an MLW weight stream lands in W[o][ky][kx][i]. */
struct weight_order {
    int depth_out, depth_in, ukh, ukw, depthwise;
    int ifm_ublock, part_kernel, ofm_block, ifm_block;
    int decomp_y, decomp_x, round_taps;
};

/*
 * Decode a weight stream in brick order into W[o][ky][kx][i] (`weights`, zeroed here).
 * `mem` is the decoder's slice memory; *need is set to what the largest slice took.
 */
static int decode_weights(struct run *run, const struct weight_order *g, const uint8_t *stream,
                          size_t len, int16_t *weights, uint8_t *mem, size_t mem_size, size_t *need)
{
    const int depth_out = g->depth_out;
    const int depth_in = g->depth_in;
    const int ukh = g->ukh;
    const int ukw = g->ukw;
    const int depthwise = g->depthwise;
    const int ofm_ublock = 8;
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
                                        return fail(run, "weight stream %s (weight decoder fault)",
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
                                        const int16_t *src = vals + oz * iz_end;
                                        for (int iz = 0; iz < ic_n; iz++) {
                                            dst[iz] = src[iz];
                                        }
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

/* The error of a workspace too small for the decoded weights (`fixed`) and `what` after them. */
static int short_of_workspace(struct run *run, size_t fixed, const char *what, size_t extra,
                              size_t ws_size)
{
    return fail(
        run,
        "needs %lu bytes of working memory (decoded weights %lu + %s %lu), the virtual NPU has %lu "
        "(ETHOSU_VIRTUAL_WORKSPACE_SIZE or ethosu_virtual_set_workspace)",
        (unsigned long)(fixed + extra), (unsigned long)fixed, what, (unsigned long)extra,
        (unsigned long)ws_size);
}

/* One OFM channel's scale record (10 bytes in the stream: 40-bit bias, 32-bit scale, 6-bit shift). */
struct chan_rec {
    int64_t bias;
    struct vnpu_rescaler rescale;
    struct vnpu_rescale32 r32; /* when the operation takes the 8-bit path */
};

/* ---- CONV / DEPTHWISE ------------------------------------------------------------------- */

static int op_conv(struct run *run, int depthwise)
{
    struct regs *r = &run->regs;
    struct kernel_op op;
    if (R0(PARALLEL_MODE) & 1u) {
        return fail(run, "PARALLEL_MODE 1 (dual-core U65) is not modelled");
    }
    if (setup_kernel_op(run, &op, !depthwise) != 0) {
        return -1;
    }
    const struct fm ifm = op.ifm;
    const struct fm ofm = op.ofm;
    const struct kernel k = op.k;
    const struct vnpu_out o = op.o;
    if ((R0(OFM_PRECISION) >> 8) & 1u) {
        return fail(run, "OFM scale_mode GLOBAL for a convolution is not modelled");
    }
    int round = op.round;
    int ukh = op.ukh;
    int ukw = op.ukw;
    int depth_in = depthwise ? 1 : ifm.c;
    int depth_out = ofm.c;

    /* scale/bias records: 10 bytes per OFM channel */
    uint8_t *smem = NULL;
    size_t ssize = 0;
    if (region_of(run, R0(SCALE_REGION) & 7u, &smem, &ssize, "scale stream") != 0) {
        return -1;
    }
    uint64_t sbase = W1(SCALE_BASE);
    uint64_t slen = W1(SCALE_LENGTH) & 0xfffffu;
    if (slen < (uint64_t)depth_out * 10u || sbase + slen > ssize) {
        return fail(
            run, "scale stream [%s, +%s) does not hold %d records inside its region of %lu bytes",
            VNPU_U64(sbase), VNPU_U64(slen), depth_out, (unsigned long)ssize);
    }
    const uint8_t *scales = smem + sbase;

    /* weights: decode the MLW stream in brick order into W[o][ky][kx][i] */
    uint8_t *wmem = NULL;
    size_t wsize = 0;
    if (region_of(run, R0(WEIGHT_REGION) & 7u, &wmem, &wsize, "weight stream") != 0) {
        return -1;
    }
    uint64_t wbase = W1(WEIGHT_BASE);
    uint64_t wlen = W1(WEIGHT_LENGTH);
    if (wbase + wlen > wsize) {
        return fail(run, "weight stream [%s, +%s) outside its region of %lu bytes", VNPU_U64(wbase),
                    VNPU_U64(wlen), (unsigned long)wsize);
    }
    size_t ws_size;
    uint8_t *ws = (uint8_t *)vnpu_workspace(&ws_size);
    size_t taps = (size_t)ukh * (size_t)ukw;
    size_t nweights = (size_t)depth_out * taps * (size_t)depth_in;
    size_t wbytes = (nweights * sizeof(int16_t) + 7u) & ~(size_t)7u;
    size_t pbytes = (taps * (size_t)ifm.c * sizeof(int32_t) + 7u) & ~(size_t)7u;
    size_t fixed = wbytes + pbytes;
    if (fixed + VNPU_MLW_BYTES(1) > ws_size) {
        return fail(
            run,
            "needs more than %lu bytes of working memory (decoded weights), the virtual NPU has %lu "
            "(ETHOSU_VIRTUAL_WORKSPACE_SIZE or ethosu_virtual_set_workspace)",
            (unsigned long)fixed, (unsigned long)ws_size);
    }
    struct weight_order g;
    memset(&g, 0, sizeof(g));
    uint32_t macs_log2 = run->env->config & 0xfu;
    g.depth_out = depth_out;
    g.depth_in = depth_in;
    g.ukh = ukh;
    g.ukw = ukw;
    g.depthwise = depthwise;
    g.ifm_ublock = macs_log2 <= 5 ? 4 : 8;
    g.part_kernel = !depthwise && ((R0(KERNEL_STRIDE) >> 2) & 1u);
    g.ofm_block = R0(OFM_BLK_DEPTH_M1) + 1;
    g.ifm_block = (g.part_kernel || ifm.elem == 2) ? 16 : 32;
    g.decomp_y = 8 / k.dy;
    g.decomp_x = 8 / k.dx;
    g.round_taps = depthwise ? 4 : (g.part_kernel ? (ifm.elem == 2 ? 2 : 4) : 1);
    int32_t *patch = (int32_t *)(void *)(ws + wbytes);
    struct vnpu_wseg seg = {wmem + wbase, (size_t)wlen};
    const int16_t *weights = vnpu_wcache_find(&g, sizeof(g), &seg, 1, 0, ws_size);
    if (weights == NULL) {
        int16_t *decoded = (int16_t *)(void *)ws;
        size_t slice_need = 0;
        if (decode_weights(run, &g, wmem + wbase, (size_t)wlen, decoded, ws + fixed,
                           ws_size - fixed, &slice_need) != 0) {
            return fixed + slice_need > ws_size
                       ? short_of_workspace(run, fixed, "weight slice", slice_need, ws_size)
                       : -1;
        }
        vnpu_workspace_used(fixed + slice_need);
        vnpu_wcache_add(&g, sizeof(g), &seg, 1, decoded, nweights, fixed + slice_need);
        weights = decoded;
    }

    /* the per-channel bias/scale/shift records, decoded once (where the decoder's slices were) */
    struct chan_rec *chans = (struct chan_rec *)(void *)(ws + fixed);
    size_t cbytes = (size_t)depth_out * sizeof(struct chan_rec);
    if (fixed + cbytes > ws_size) {
        return short_of_workspace(run, fixed, "channel records", cbytes, ws_size);
    }
    vnpu_workspace_used(fixed + cbytes);
    for (int oc = 0; oc < depth_out; oc++) {
        const uint8_t *rec = scales + (size_t)oc * 10u;
        uint64_t braw = (uint64_t)rec[0] | ((uint64_t)rec[1] << 8) | ((uint64_t)rec[2] << 16) |
                        ((uint64_t)rec[3] << 24) | ((uint64_t)rec[4] << 32);
        chans[oc].bias = (braw & ((uint64_t)1 << 39))
                             ? (int64_t)(braw | ~(((uint64_t)1 << 40) - 1u))
                             : (int64_t)braw;
        uint32_t scale = (uint32_t)rec[5] | ((uint32_t)rec[6] << 8) | ((uint32_t)rec[7] << 16) |
                         ((uint32_t)rec[8] << 24);
        vnpu_rescaler_init(&chans[oc].rescale, scale, rec[9] & 0x3fu, round);
    }
    int no_bias = (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_NO_BIAS) != 0;
    /* 8-bit IFM minus a zero point in [-256, 256] and 9-bit weights: 16-bit operands */
    int small_products = ifm.elem == 1 && ifm.zp >= -256 && ifm.zp <= 256;
    /*
     * The 8-bit path: 16-bit operands, an 8-bit OFM without LUT, and every channel's
     * bias + sum of products (each |p| < 2^17) inside (-2^30, 2^30), so the accumulator,
     * the rescale (vnpu_rescale32) and the clamp run in 32 bits. The same values as the
     * general path below; most of an 8-bit network's time is this per-output stage.
     */
    size_t terms = depthwise ? taps : taps * (size_t)depth_in;
    int fast8 = small_products && ofm.elem == 1 && o.simple && terms < 4096u;
    for (int oc = 0; fast8 && oc < depth_out; oc++) {
        int64_t bias = no_bias ? 0 : chans[oc].bias;
        int64_t bound = ((int64_t)1 << 30) - ((int64_t)terms << 17);
        fast8 = vnpu_rescale32_init(&chans[oc].r32, &chans[oc].rescale) && bias > -bound &&
                bias < bound;
    }
    const int32_t out_lo = (int32_t)o.lim.lo;
    const int32_t out_hi = (int32_t)o.lim.hi;
    int16_t *patch16 = (int16_t *)(void *)patch;
    for (int oy = 0; oy < ofm.h; oy++) {
        for (int ox = 0; ox < ofm.w; ox++) {
            /* gather the receptive field once (padding = 0 after the zero point) */
            size_t n = 0;
            for (int ky = 0; ky < ukh; ky++) {
                for (int kx = 0; kx < ukw; kx++) {
                    int y = oy * k.sy - k.pad_top + ky * k.dy;
                    int x = ox * k.sx - k.pad_left + kx * k.dx;
                    if (small_products) {
                        vnpu_tap16(&ifm, &k, y, x, patch16 + n);
                        n += (size_t)ifm.c;
                        continue;
                    }
                    for (int c = 0; c < ifm.c; c++) {
                        int valid;
                        int64_t v = ifm_tap(&ifm, &k, y, x, c, &valid);
                        if (small_products) {
                            patch16[n++] = (int16_t)v;
                        } else {
                            patch[n++] = (int32_t)v;
                        }
                    }
                }
            }
            uint8_t *po = ofm.mem + fm_offset(&ofm, oy, ox, 0);
            if (fast8) {
                int oc = 0;
                /* two channels a pass: one load of the receptive field for both */
                for (; !depthwise && oc + 1 < depth_out; oc += 2) {
                    int32_t acc0 = no_bias ? 0 : (int32_t)chans[oc].bias;
                    int32_t acc1 = no_bias ? 0 : (int32_t)chans[oc + 1].bias;
                    const int16_t *wrow = weights + (size_t)oc * terms;
                    dot16x2(patch16, wrow, wrow + terms, terms, &acc0, &acc1);
                    po[fm_chan(&ofm, oc)] = vnpu_out8(&chans[oc].r32, acc0, o.zp, out_lo, out_hi);
                    po[fm_chan(&ofm, oc + 1)] =
                        vnpu_out8(&chans[oc + 1].r32, acc1, o.zp, out_lo, out_hi);
                }
                for (; oc < depth_out; oc++) {
                    int32_t acc32 = no_bias ? 0 : (int32_t)chans[oc].bias;
                    const int16_t *wrow = weights + (size_t)oc * terms;
                    if (depthwise) {
                        for (size_t t = 0; t < taps; t++) {
                            acc32 += (int32_t)patch16[t * (size_t)ifm.c + (size_t)oc] * wrow[t];
                        }
                    } else {
                        acc32 += dot16(patch16, wrow, terms);
                    }
                    po[fm_chan(&ofm, oc)] = vnpu_out8(&chans[oc].r32, acc32, o.zp, out_lo, out_hi);
                }
                continue;
            }
            for (int oc = 0; oc < depth_out; oc++) {
                const struct chan_rec *ch = &chans[oc];
                const int16_t *wrow = weights + (size_t)oc * taps * (size_t)depth_in;
                int64_t acc = no_bias ? 0 : ch->bias;
                if (depthwise) {
                    if (small_products) {
                        for (size_t t = 0; t < taps; t++) {
                            acc += (int32_t)patch16[t * (size_t)ifm.c + (size_t)oc] * wrow[t];
                        }
                    } else {
                        for (size_t t = 0; t < taps; t++) {
                            acc += (int64_t)patch[t * (size_t)ifm.c + (size_t)oc] * wrow[t];
                        }
                    }
                } else {
                    size_t n_terms = taps * (size_t)depth_in;
                    if (small_products) {
                        /* |product| < 2^17: 4096 of them cannot overflow 32 bits */
                        for (size_t i0 = 0; i0 < n_terms; i0 += 4096u) {
                            size_t i1 = n_terms - i0 < 4096u ? n_terms : i0 + 4096u;
                            acc += dot16(patch16 + i0, wrow + i0, i1 - i0);
                        }
                    } else {
                        int64_t sum = 0;
                        for (size_t i = 0; i < n_terms; i++) {
                            sum += (int64_t)patch[i] * wrow[i];
                        }
                        acc += sum;
                    }
                }
                store_elem(po + fm_chan(&ofm, oc), ofm.elem,
                           vnpu_out_value(&o, vnpu_rescale_by(&ch->rescale, acc)));
            }
        }
    }
    return 0;
}

/* ---- DMA ----------------------------------------------------------------------------------- */

/* The memory of the region a DMA*_REGION register names, proved to hold [addr, addr + len). */
static int dma_span(struct run *run, uint32_t region_reg, uint64_t addr, uint64_t len,
                    uint8_t **mem, const char *what)
{
    size_t size = 0;
    if (region_of(run, region_reg & 7u, mem, &size, what) != 0) {
        return -1;
    }
    if (addr + len > size) {
        return fail(run, "%s [%s, +%s) outside region %lu of %lu bytes", what, VNPU_U64(addr),
                    VNPU_U64(len), (unsigned long)(region_reg & 7u), (unsigned long)size);
    }
    return 0;
}

static int op_dma(struct run *run)
{
    struct regs *r = &run->regs;
    uint32_t src_reg = R0(DMA0_SRC_REGION);
    uint32_t dst_reg = R0(DMA0_DST_REGION);
    uint64_t src = W1(DMA0_SRC);
    uint64_t dst = W1(DMA0_DST);
    uint64_t len = W1(DMA0_LEN);
    if (((src_reg >> 9) & 3u) != 0 || ((dst_reg >> 9) & 3u) != 0) {
        return fail(run, "DMA stride_mode %lu/%lu (2-D/3-D) is not modelled",
                    (unsigned long)((src_reg >> 9) & 3u), (unsigned long)((dst_reg >> 9) & 3u));
    }
    if ((src_reg >> 8) & 1u) {
        return fail(run, "DMA from internal memory (SRC region_mode INTERNAL) is not modelled");
    }
    uint8_t *smem = NULL;
    if (dma_span(run, src_reg, src, len, &smem, "DMA source") != 0) {
        return -1;
    }
    if ((dst_reg >> 8) & 1u) {
        uint64_t shram = ((run->env->config >> 8) & 0xffu) * 1024u;
        uint64_t lut_base = shram - 2048u;
        if (shram < 2048u || dst < lut_base || dst + len > shram) {
            return fail(run, "DMA into SHRAM [%s, +%s) outside the LUT area [%s, %s)",
                        VNPU_U64(dst), VNPU_U64(len), VNPU_U64(lut_base), VNPU_U64(shram));
        }
        memcpy(run->env->lut + (dst - lut_base), smem + src, (size_t)len);
        return 0;
    }
    uint8_t *dmem = NULL;
    if (dma_span(run, dst_reg, dst, len, &dmem, "DMA destination") != 0) {
        return -1;
    }
    memmove(dmem + dst, smem + src, (size_t)len);
    return 0;
}

/* ---- interpreter --------------------------------------------------------------------------- */

int vnpu_run(struct vnpu_env *env, const uint32_t *words, size_t nwords)
{
    static struct run run; /* the register file is large; one stream runs at a time */
    memset(&run, 0, sizeof(run));
    run.env = env;
    env->error[0] = '\0';
    struct regs *r = &run.regs;
    size_t i = 0;
    while (i < nwords) {
        uint32_t code;
        uint32_t param;
        run.word = i;
        int kind = vnpu_next_command(&vnpu_isa_u55, r, words, nwords, &i, &code, &param);
        run.code = code;
        if (kind == VNPU_CMD_REGISTER) {
            continue;
        }
        if (kind == VNPU_CMD_UNKNOWN) {
            snprintf(env->error, ETHOSU_VIRTUAL_ERROR_LEN,
                     "unknown command code 0x%04lx (param 0x%04lx) at command word %lu",
                     (unsigned long)code, (unsigned long)param, (unsigned long)run.word);
            return -1;
        }
        if (kind == VNPU_CMD_TRUNCATED) {
            return fail(&run, "truncated: the payload word is missing");
        }
        if (kind == VNPU_CMD_CMD1_OP) {
            return fail(&run, "cmd1 operation 0x%03lx is not defined for U55/U65",
                        (unsigned long)(code & 0x3ffu));
        }
        int rc = 0;
        switch (code) {
        case OP_STOP:
            return 0;
        case OP_CONV:
            rc = op_conv(&run, 0);
            break;
        case OP_DEPTHWISE:
            rc = op_conv(&run, 1);
            break;
        case OP_POOL:
            rc = op_pool(&run, param & 7u);
            break;
        case OP_ELEMENTWISE:
            rc = op_elementwise(&run, param & 0x3fu);
            break;
        case OP_DMA_START:
            rc = op_dma(&run);
            break;
        case OP_IRQ:
        case OP_DMA_WAIT:
        case OP_KERNEL_WAIT:
        case OP_PMU_MASK:
            break; /* everything already ran to completion in order */
        default:
            rc = fail(&run, "operation is not modelled");
            break;
        }
        if (rc != 0) {
            return rc;
        }
    }
    snprintf(env->error, ETHOSU_VIRTUAL_ERROR_LEN,
             "command stream of %lu words ends without NPU_OP_STOP", (unsigned long)nwords);
    return -1;
}

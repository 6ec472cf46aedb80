/*
 * ethosu-porting-kit virtual NPU: the Ethos-U55/U65 product (its instruction set and
 * operations table) and the set-up its operations share.
 */
#include "u55/u55.h"

#include "common/mutation.h"
#include "ethosu_virtual.h"

#include <stddef.h>

const struct vnpu_product vnpu_product_u55 = {
    .isa = &vnpu_isa_u55,
    .name = NULL,
    .cmd1_error = "cmd1 operation 0x%03lx is not defined for U55/U65",
    .state_size = sizeof(struct vnpu_exec),
    .start = NULL,
    .ops =
        {
            [OP_CONV] = u55_op_conv,
            [OP_DEPTHWISE] = u55_op_depthwise,
            [OP_POOL] = u55_op_pool,
            [OP_ELEMENTWISE] = u55_op_elementwise,
            [OP_DMA_START] = u55_op_dma,
        },
};

/* The set-ups kept per command word (vnpu_op_kept): each a function of the registers and the
 * run's key alone. */
enum {
    MEMO_FM = 1, /* + FM_IFM, FM_IFM2, FM_OFM */
    MEMO_OUT = 4,
    MEMO_OFM = 5,
    MEMO_KERNEL_OP = 6 /* + ifm_depth_reg */
};

/* Feature map `which` (FM_IFM, FM_IFM2, FM_OFM) from the registers. */
int u55_setup_fm(struct vnpu_exec *run, struct fm *f, int which, const char *what)
{
    const struct fm *kept = (const struct fm *)vnpu_op_kept(run, MEMO_FM + (unsigned)which);
    if (kept != NULL) {
        *f = *kept;
        return 0;
    }
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
        return vnpu_fail(run, "%s", why);
    }
    if (vnpu_region_of(run, R0(d->region) & 7u, &f->mem, &f->size, what) != 0) {
        return -1;
    }
    vnpu_op_keep(run, MEMO_FM + (unsigned)which, f, sizeof(*f));
    return 0;
}

/* ---- output stage ------------------------------------------------------------------------- */

int u55_setup_out(struct vnpu_exec *run, struct vnpu_out *o, const struct fm *ofm)
{
    const struct vnpu_out *kept = (const struct vnpu_out *)vnpu_op_kept(run, MEMO_OUT);
    if (kept != NULL) {
        *o = *kept;
        return 0;
    }
    struct regs *r = &run->regs;
    uint32_t act = R0(ACTIVATION);
    uint32_t func = act & 0x1fu;
    uint32_t clip = (act >> 12) & 7u;
    *o = (struct vnpu_out){.zp = ofm->zp}; /* no LUT until the activation names one */
    if (func >= 16 && func <= 23) {
        uint32_t shram = ((run->env->config >> 8) & 0xffu) * 1024u;
        (void)shram;
        unsigned slot = func - 16u;
        if (ofm->elem == 2) {
            if (slot != 0) {
                return vnpu_fail(
                    run, "int16 LUT in TABLE_%u: the 2 KiB table only fits from slot 0", slot);
            }
            o->lut = 16;
        } else {
            o->lut = 8;
        }
        o->table = run->env->lut + slot * 256u;
        o->lut_unsigned = clip == 2 || (clip == 0 && !ofm->is_signed);
        if (clip != 0 && clip != 2 && clip != 3 && !(clip == 5 && o->lut == 16)) {
            return vnpu_fail(run, "activation_clip_range %lu with a LUT is not modelled",
                             (unsigned long)clip);
        }
    } else if (func != 0) {
        return vnpu_fail(run, "activation_function %lu (built-in TANH/SIGMOID) is not modelled",
                         (unsigned long)func);
    } else if (clip != 0 && !(clip == 5 && ofm->is_signed && ofm->elem >= 2)) {
        return vnpu_fail(run, "activation_clip_range %lu without a LUT is not modelled",
                         (unsigned long)clip);
    }
    /*
     * 8- and 16-bit OFMs clamp to ACTIVATION_MIN/MAX, 32-bit ones do not, unless the clip
     * range is FORCE_INT16 (the header: the output range is forced to int16): then the
     * 16-bit limits clamp a 32-bit OFM too. Vela 5.2.0 writes it on an int32 elementwise
     * SUB of layer_norm_a16w8, bit-exact against tosa_reference_model; that SUB's values
     * never reach the limits (it shifts right by 11), so the clamp itself is UNVERIFIED.
     */
    int force16 = clip == 5 && o->lut == 0;
    vnpu_limits_init(&o->lim, ofm, R0(ACTIVATION_MIN), R0(ACTIVATION_MAX),
                     ofm->elem < 4 || force16 || VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_CLAMP_32BIT));
    o->simple = o->lut == 0 && o->lim.lo <= o->lim.hi;
    vnpu_op_keep(run, MEMO_OUT, o, sizeof(*o));
    return 0;
}

static void u55_stored_extent(const struct kernel *k, int *h, int *w)
{
    *h = k->upscale ? (k->ih + 1) / 2 : k->ih;
    *w = k->upscale ? (k->iw + 1) / 2 : k->iw;
}

int u55_setup_ofm(struct vnpu_exec *run, struct fm *ofm)
{
    const struct fm *kept = (const struct fm *)vnpu_op_kept(run, MEMO_OFM);
    if (kept != NULL) {
        *ofm = *kept;
        return 0;
    }
    struct regs *r = &run->regs;
    if (u55_setup_fm(run, ofm, FM_OFM, "OFM") != 0) {
        return -1;
    }
    ofm->h = R0(OFM_HEIGHT_M1) + 1;
    ofm->w = R0(OFM_WIDTH_M1) + 1;
    ofm->c = R0(OFM_DEPTH_M1) + 1;
    if (vnpu_check_fm(run, ofm, "OFM") != 0) {
        return -1;
    }
    vnpu_op_keep(run, MEMO_OFM, ofm, sizeof(*ofm));
    return 0;
}

/* ifm_depth_reg: the IFM depth is IFM_DEPTH_M1 + 1 (else the OFM's depth). */
int u55_setup_kernel_op(struct vnpu_exec *run, struct kernel_op *op, int ifm_depth_reg)
{
    const unsigned tag = MEMO_KERNEL_OP + (ifm_depth_reg != 0 ? 1u : 0u);
    const struct kernel_op *kept = (const struct kernel_op *)vnpu_op_kept(run, tag);
    if (kept != NULL) {
        *op = *kept;
        return 0;
    }
    struct regs *r = &run->regs;
    if (u55_setup_ofm(run, &op->ofm) != 0 || u55_setup_fm(run, &op->ifm, FM_IFM, "IFM") != 0 ||
        vnpu_setup_kernel(run, &op->k, op->ofm.h, op->ofm.w) != 0 ||
        u55_setup_out(run, &op->o, &op->ofm) != 0) {
        return -1;
    }
    u55_stored_extent(&op->k, &op->ifm.h, &op->ifm.w);
    op->ifm.c = ifm_depth_reg ? (int)R0(IFM_DEPTH_M1) + 1 : op->ofm.c;
    if (vnpu_check_fm(run, &op->ifm, "IFM") != 0) {
        return -1;
    }
    op->round = (int)((R0(OFM_PRECISION) >> 14) & 3u);
    if (op->round == 3) {
        return vnpu_fail(run, "OFM round_mode 3 is not defined");
    }
    op->ukh = (op->k.kh - 1) / op->k.dy + 1;
    op->ukw = (op->k.kw - 1) / op->k.dx + 1;
    vnpu_op_keep(run, tag, op, sizeof(*op));
    return 0;
}

/*
 * ethosu-porting-kit virtual NPU: the Ethos-U85 product (instruction set, operations table,
 * run start) and what its operations share: feature maps, the OFM with transpose, reverse
 * and chaining, the output stage, the kernel IFM.
 */
#include "u85/u85.h"

#include "common/mutation.h"
#include "ethosu_virtual.h"

#include <stdio.h>
#include <string.h>

/* The driver's state area must hold the U85's run state (compile-time check). */
typedef char u85_state_fits[sizeof(struct run85) <= ETHOSU_VIRTUAL_STATE_SIZE ? 1 : -1];

/* CONFIG: the MAC count and the weight decoders it implies. */
static int start(struct vnpu_exec *x)
{
    struct run85 *run = u85_run(x);
    struct vnpu_env *env = x->env;
    unsigned log2_macs = env->config & 0xfu;
    if (log2_macs < 7 || log2_macs > 11) {
        snprintf(env->error, ETHOSU_VIRTUAL_ERROR_LEN,
                 "Ethos-U85 CONFIG 0x%08lx: macs_per_cc %u is not 128..2048",
                 (unsigned long)env->config, 1u << log2_macs);
        return -1;
    }
    run->macs = 1 << log2_macs;
    run->pending_cb = -1;
    run->b64_fm = -1;
    run->cores = run->macs <= 256 ? 1 : (run->macs == 512 ? 2 : 4);
    return 0;
}

const struct vnpu_product vnpu_product_u85 = {
    .isa = &vnpu_isa_u85,
    .name = "Ethos-U85",
    .cmd1_error = "NPU_OP_BRANCH (control flow) is not modelled",
    .state_size = sizeof(struct run85),
    .start = start,
    .ofm_storage = 1,
    .ops =
        {
            [OP_CONV] = u85_op_conv,
            [OP_DEPTHWISE] = u85_op_depthwise,
            [OP_POOL] = u85_op_pool,
            [OP_ELEMENTWISE] = u85_op_elementwise,
            [OP_RESIZE] = u85_op_resize,
            [OP_DMA_START] = u85_op_dma,
        },
};

/* ---- rounding ------------------------------------------------------------------------------ */

/* OFM round_mode (param bits 15:13) -> vnpu_rescale mode; -1 if not modelled. */
int u85_ofm_round(struct run85 *run, uint32_t param, const char *what)
{
    static const int modes[8] = {ROUND_DBL,      ROUND_NATURAL, -1, -1,
                                 ROUND_TRUNCATE, ROUND_FLOOR,   -1, -1};
    static const char *const names[8] = {"DOUBLE_SYMMETRIC",
                                         "NATURAL",
                                         "DOUBLE_ASYMMETRIC",
                                         "SYMMETRIC",
                                         "TRUNCATE_TO_ZERO",
                                         "TRUNCATE_TO_LOWER",
                                         "6",
                                         "7"};
    uint32_t mode = (param >> 13) & 7u;
    if (((param >> 6) & 0x1fu) != 0) {
        return vnpu_fail(&run->x, "%s dbl_rnd %lu is not modelled", what,
                         (unsigned long)((param >> 6) & 0x1fu));
    }
    if (modes[mode] < 0) {
        return vnpu_fail(&run->x, "%s round_mode %s is not modelled", what, names[mode]);
    }
    return modes[mode];
}

int u85_ofm_scale(struct run85 *run, struct ofm_scale *s)
{
    struct regs *r = &run->x.regs;
    s->scale = W1(OFM_SCALE) & 0x7fffffffu;
    s->shift = P1(OFM_SCALE) & 0x3fu;
    s->round = u85_ofm_round(run, P1(OFM_SCALE), "OFM_SCALE");
    return s->round < 0 ? -1 : 0;
}

/* The OFM's one global scale as a rescaler, for an operation (`what`: "a pool") that has no
 * per-channel scales. */
int u85_ofm_global_rescaler(struct run85 *run, struct vnpu_rescaler *out, const char *what)
{
    struct regs *r = &run->x.regs;
    if (((R0(OFM_PRECISION) >> 8) & 1u) == 0) {
        return vnpu_fail(&run->x, "OFM scale_mode PER_CHANNEL for %s is not modelled", what);
    }
    struct ofm_scale os;
    if (u85_ofm_scale(run, &os) != 0) {
        return -1;
    }
    vnpu_rescaler_init(out, os.scale, os.shift, os.round);
    return 0;
}

/* ---- feature maps ------------------------------------------------------------------------ */

/* Chained maps are dense NHWC in the workspace: no tiles. */
static void chained_layout(struct fm *f, uint8_t *mem, const struct chain *ch)
{
    f->mem = mem;
    f->size = ch->bytes;
    for (int t = 0; t < 4; t++) {
        f->base[t] = 0;
    }
    f->h0 = f->h1 = f->w0 = 0x7fffffff;
    f->sx = (int64_t)ch->c * ch->elem;
    f->sy = (int64_t)ch->w * f->sx;
    f->sc = 0;
    f->brick = 0;
}

/*
 * Feature map `which` from the registers. *storage gets its activation_storage; for a
 * chained IFM the chain buffer's layout is taken (the operation sets the extent).
 */
int u85_setup_fm(struct run85 *run, struct fm *f, int which, int *storage, const char *what)
{
    struct regs *r = &run->x.regs;
    const struct vnpu_fm_regs *d = vnpu_fm_regs(which);
    int bits;
    uint32_t prec = vnpu_fm_read_regs(r, d, f, &bits);
    unsigned region = R0(d->region) & 7u;
    char why[112];
    /* B64 (int16 transpose convolution): 48-bit accumulators written and read back sign-extended */
    int b64 = bits == 3 && (prec & 1u) && which == run->b64_fm;
    if (vnpu_fm_precision(f, prec, b64 ? 2 : bits, what, why, sizeof(why)) != 0) {
        return vnpu_fail(&run->x, "%s", why);
    }
    if (b64) {
        f->elem = 8;
    }
    *storage = (int)((prec >> 14) & 3u);
    if (*storage == STORAGE_CHAINED) {
        if (which == FM_OFM) {
            return 0; /* the operation allocates the chain buffer once it knows the extent */
        }
        struct chain *ch = &run->chain[region];
        if (!ch->live) {
            return vnpu_fail(&run->x, "%s reads chain buffer %u, which no operation filled", what,
                             region);
        }
        if (ch->elem != f->elem) {
            return vnpu_fail(&run->x, "%s reads chain buffer %u of %d-byte elements as %d-byte",
                             what, region, ch->elem, f->elem);
        }
        uint8_t *ws = run->x.env->workspace;
        chained_layout(f, ws + ch->offset, ch);
        return 0;
    }
    if (*storage == STORAGE_NONE && which == FM_OFM && run->ofm_none) {
        return 0;
    }
    if (*storage == STORAGE_TILE3X1 || (*storage == STORAGE_NONE && which == FM_OFM)) {
        return vnpu_fail(&run->x, "%s activation_storage %s is not modelled", what,
                         *storage == STORAGE_TILE3X1 ? "TILE3X1" : "NONE");
    }
    for (int t = 0; t < 4; t++) {
        f->base[t] = addr40(r, d->base0 + (unsigned)t);
    }
    f->sx = addr40(r, d->stride_x);
    f->sy = addr40(r, d->stride_y);
    f->sc = addr40(r, d->stride_c);
    return vnpu_region_of(&run->x, region, &f->mem, &f->size, what);
}

/* Free the chain buffers this operation read; an OFM chain buffer takes their place. */
void u85_chain_release(struct run85 *run, const struct fm *a, const struct fm *b)
{
    uint8_t *ws = run->x.env->workspace;
    size_t end = 0;
    for (int i = 0; i < CHAIN_BUFFERS; i++) {
        struct chain *ch = &run->chain[i];
        if (!ch->live) {
            continue;
        }
        if ((a != NULL && a->mem == ws + ch->offset) || (b != NULL && b->mem == ws + ch->offset)) {
            ch->live = 0;
            continue;
        }
        end = ch->offset + ch->bytes > end ? ch->offset + ch->bytes : end;
    }
    if (run->pending_cb >= 0) {
        end = run->pending.offset + run->pending.bytes > end
                  ? run->pending.offset + run->pending.bytes
                  : end;
    }
    if (run->acc.live) {
        end = run->acc.offset + run->acc.bytes > end ? run->acc.offset + run->acc.bytes : end;
    }
    run->chain_end = (end + 15u) & ~(size_t)15u;
}

int u85_setup_ofm(struct run85 *run, struct ofm85 *o)
{
    struct regs *r = &run->x.regs;
    int storage = STORAGE_TILE2X2;
    if (u85_setup_fm(run, &o->fm, FM_OFM, &storage, "OFM") != 0) {
        return -1;
    }
    uint32_t prec = R0(OFM_PRECISION);
    o->h = R0(OFM_HEIGHT_M1) + 1;
    o->w = R0(OFM_WIDTH_M1) + 1;
    o->c = R0(OFM_DEPTH_M1) + 1;
    o->reverse = (int)((prec >> 9) & 3u);
    o->transpose = (int)((prec >> 11) & 7u);
    if (VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_TRANSPOSE_SWAP) && o->transpose == 3) {
        o->transpose = 6;
    }
    o->chain = -1;
    if (o->transpose == 4 || o->transpose == 5) {
        return vnpu_fail(&run->x, "OFM activation_transpose %d is not defined", o->transpose);
    }
    /* HWC, WHC, HCW, WCH, -, -, CHW, CWH: the output axes named by the input's */
    static const int perm[8][3] = {{0, 1, 2}, {1, 0, 2}, {0, 2, 1}, {1, 2, 0},
                                   {0, 1, 2}, {0, 1, 2}, {2, 0, 1}, {2, 1, 0}};
    int ext[3] = {o->h, o->w, o->c};
    for (int i = 0; i < 3; i++) {
        o->axis[i] = perm[o->transpose][i];
    }
    o->fm.h = ext[o->axis[0]];
    o->fm.w = ext[o->axis[1]];
    o->fm.c = ext[o->axis[2]];
    if (storage == STORAGE_CHAINED) {
        unsigned cb = R0(OFM_REGION) & 7u;
        if (o->transpose != 0 || o->reverse != 0) {
            return vnpu_fail(&run->x, "a chained OFM with transpose %d / reverse %d is not defined",
                             o->transpose, o->reverse);
        }
        struct chain *ch = &run->pending;
        size_t ws_size = run->x.env->workspace_size;
        uint8_t *ws = run->x.env->workspace;
        ch->bytes = (size_t)o->h * (size_t)o->w * (size_t)o->c * (size_t)o->fm.elem;
        ch->offset = run->chain_end;
        if (ch->offset + ch->bytes > ws_size) {
            return vnpu_fail(
                &run->x,
                "chain buffer %u needs %lu bytes of working memory, the virtual NPU has %lu "
                "(ETHOSU_VIRTUAL_WORKSPACE_SIZE or ethosu_virtual_set_workspace)",
                cb, (unsigned long)(ch->offset + ch->bytes), (unsigned long)ws_size);
        }
        ch->h = o->h;
        ch->w = o->w;
        ch->c = o->c;
        ch->elem = o->fm.elem;
        ch->is_signed = o->fm.is_signed;
        chained_layout(&o->fm, ws + ch->offset, ch);
        o->chain = (int)cb;
        run->pending_cb = (int)cb;
        run->chain_end = (ch->offset + ch->bytes + 15u) & ~(size_t)15u;
        vnpu_workspace_used(run->x.env, run->chain_end);
        return 0;
    }
    return storage == STORAGE_NONE ? 0 : vnpu_check_fm(&run->x, &o->fm, "OFM");
}

/* The chain buffer an OFM filled becomes live once the operation has read its inputs. */
void u85_ofm_done(struct run85 *run, const struct ofm85 *o)
{
    if (o->chain >= 0) {
        run->chain[o->chain] = run->pending;
        run->chain[o->chain].live = 1;
        run->pending_cb = -1;
    }
}

/* ---- output stage ------------------------------------------------------------------------- */

int u85_setup_out(struct run85 *run, struct vnpu_out *o, const struct fm *ofm)
{
    struct regs *r = &run->x.regs;
    uint32_t act = R0(ACTIVATION);
    uint32_t func = act & 0x1fu;
    uint32_t table = (act >> 5) & 7u;
    *o = (struct vnpu_out){.zp = ofm->zp}; /* no LUT until the activation names one */
    size_t lut_bytes = 0;
    switch (func) {
    case 0:
        break;
    case 1: /* LUT_U8_U8 */
    case 4: /* LUT_S8_S8 */
        o->lut = 8;
        o->lut_unsigned = func == 1;
        lut_bytes = 256;
        break;
    case 5: /* LUT_S8_S16 */
        o->lut = 816;
        lut_bytes = 512;
        break;
    case 7: /* LUT_S8_S32 */
        o->lut = 832;
        lut_bytes = 1024;
        break;
    case 8:  /* LUT_S16_S16 */
    case 10: /* LUT_TANH */
    case 11: /* LUT_SIGMOID */
        o->lut = 16;
        lut_bytes = 2048;
        break;
    default:
        return vnpu_fail(&run->x, "activation_function %lu is not modelled", (unsigned long)func);
    }
    if (o->lut != 0) {
        if ((table + 1u) * lut_bytes > LUTRAM_SIZE) {
            return vnpu_fail(&run->x, "LUT table %lu of %lu bytes lies outside the %u-byte lutram",
                             (unsigned long)table, (unsigned long)lut_bytes, LUTRAM_SIZE);
        }
        o->table = run->x.env->lut + table * lut_bytes;
    }
    /* clamp unless activation_clip_range B16 */
    vnpu_limits_init(&o->lim, ofm, R0(ACTIVATION_MIN), R0(ACTIVATION_MAX), ((act >> 12) & 1u) == 0);
    o->simple = o->lut == 0 && o->lim.lo <= o->lim.hi;
    return 0;
}

/* The IFM as a kernel operation reads it (extent from the kernel, or a chain buffer's). */
int u85_setup_kernel_ifm(struct run85 *run, struct fm *ifm, const struct kernel *k, int depth)
{
    int storage = STORAGE_TILE2X2;
    if (u85_setup_fm(run, ifm, FM_IFM, &storage, "IFM") != 0) {
        return -1;
    }
    ifm->h = k->upscale ? (k->ih + 1) / 2 : k->ih;
    ifm->w = k->upscale ? (k->iw + 1) / 2 : k->iw;
    ifm->c = depth;
    return vnpu_check_fm(&run->x, ifm, "IFM");
}

int u85_check_acc(struct run85 *run)
{
    struct regs *r = &run->x.regs;
    uint32_t acc = R0(ACC_FORMAT);
    if (run->acc.live) {
        return vnpu_fail(
            &run->x,
            "a non-CONV operation between acc_output DISABLE and acc_input KEEP is not modelled");
    }
    if (((acc >> 4) & 3u) != 0) {
        return vnpu_fail(&run->x, "acc_input %s is not modelled",
                         ((acc >> 4) & 3u) == 1 ? "KEEP" : "IFM2");
    }
    if ((acc >> 6) & 1u) {
        return vnpu_fail(&run->x, "acc_output DISABLE is not modelled");
    }
    return 0;
}

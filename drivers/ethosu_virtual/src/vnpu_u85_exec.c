/*
 * ethosu-porting-kit virtual NPU: the command interpreter and kernel operations of an
 * Ethos-U85, bit-exact with tosa_reference_model on what Vela emits for ExecuTorch
 * graphs (docs/virtual-npu.md, "Ethos-U85", lists what is verified and how).
 *
 * Like the U55 model (vnpu_exec.c): one register file for the whole stream, every
 * operation runs to completion in stream order. What the U85 adds and this file
 * models: 40-bit addresses, OFM transpose and reverse, chained feature maps (an OFM
 * kept inside the NPU for the next elementwise operation), IFM/IFM2/OFM scales with
 * their own rounding modes, OP_SCALAR and broadcast on both operands, the U85 weight
 * order (stride-aware, OFM-interleaved, one stream per weight decoder) with 32- and
 * 48-bit scale records, lutram LUTs and 1/2/3-D DMA. Anything else stops the stream
 * with an error naming the command and the value.
 */
#include "vnpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- register file ---------------------------------------------------------------------- */

/* this architecture's own registers (the shared ones are in vnpu.h) */
enum {
    IFM_BROADCAST = 0x108,
    ACC_FORMAT = 0x124,
    RESIZE_X_SCALE_N_M1 = 0x12a,
    RESIZE_Y_SCALE_N_M1 = 0x12b,
    RESIZE_X_OFFSET = 0x12c,
    RESIZE_Y_OFFSET = 0x12d,
    WEIGHT_FORMAT = 0x12e,
    DMA0_SIZE0 = 0x132,
    DMA0_SIZE1 = 0x133,
    DMA0_IDX_REGION = 0x134,
    OFM_BLK_WIDTH_M1 = 0x115,
    OFM_BLK_HEIGHT_M1 = 0x116,
    /* cmd1 */
    IFM_SCALE = 0x025,
    IFM2_SCALE = 0x026,
    OP_SCALAR = 0x027,
    DMA0_SRC_STRIDE0 = 0x033,
    DMA0_SRC_STRIDE1 = 0x034,
    DMA0_DST_STRIDE0 = 0x035,
    DMA0_DST_STRIDE1 = 0x036,
    DMA0_IDX = 0x037,
    DMA0_IDX_MAX = 0x038,
    DMA0_IDX_SKIP1 = 0x039,
    WEIGHT1_BASE = 0x090, /* WEIGHTn_BASE = 0x090 + 2(n-1), WEIGHTn_LENGTH one above */
    RESIZE_X = 0x096,
    RESIZE_Y = 0x097,
};

enum { STORAGE_TILE2X2 = 0, STORAGE_TILE3X1 = 1, STORAGE_CHAINED = 2, STORAGE_NONE = 3 };

#define LUTRAM_SIZE 2048u
#define CHAIN_BUFFERS 8

/* An OFM kept inside the NPU for the next operation (activation_storage CHAINED). */
struct chain {
    int live;
    size_t offset; /* in the workspace */
    size_t bytes;
    int h, w, c, elem, is_signed;
};

struct run85 {
    struct vnpu_env *env;
    struct regs regs;
    size_t word;
    uint32_t code;
    int macs;  /* MACs per cycle: 128 .. 2048 */
    int cores; /* weight decoders: one SWD weight stream each */
    struct chain chain[CHAIN_BUFFERS];
    struct chain pending; /* the chain buffer the running operation fills (live at its end) */
    int pending_cb;       /* its index, -1 if the OFM goes to memory */
    size_t chain_end;     /* workspace bytes the live and pending chain buffers occupy */
    int b64_fm; /* the FM_* feature map that may be B64 in the running operation, -1 none */
    struct chain
        acc;      /* accumulators a CONV kept (acc_output DISABLE) for the next (acc_input KEEP) */
    int ofm_none; /* the running operation writes no OFM: its activation_storage may be NONE */
};

static int fail(struct run85 *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct run85 *run, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnpu_error(run->env, &vnpu_isa_u85, run->code, run->word, "Ethos-U85 ", fmt, ap);
    va_end(ap);
    return -1;
}

/* A 40-bit address or stride register: addr_hi in param bits 7:0 (sign-extended). */
static int64_t addr40(const struct regs *r, unsigned op)
{
    uint64_t v = ((uint64_t)(r->p1[op & 0xffu] & 0xffu) << 32) | r->w1[op & 0xffu];
    return (v & ((uint64_t)1 << 39)) ? (int64_t)(v | ~(((uint64_t)1 << 40) - 1u)) : (int64_t)v;
}

static int region_of(struct run85 *run, unsigned region, uint8_t **mem, size_t *size,
                     const char *what)
{
    char why[112];
    return vnpu_region(run->env, region, mem, size, what, why, sizeof(why)) != 0
               ? fail(run, "%s", why)
               : 0;
}

/* ---- rounding ------------------------------------------------------------------------------ */

/* OFM round_mode (param bits 15:13) -> vnpu_rescale mode; -1 if not modelled. */
static int ofm_round(struct run85 *run, uint32_t param, const char *what)
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
        return fail(run, "%s dbl_rnd %lu is not modelled", what,
                    (unsigned long)((param >> 6) & 0x1fu));
    }
    if (modes[mode] < 0) {
        return fail(run, "%s round_mode %s is not modelled", what, names[mode]);
    }
    return modes[mode];
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
static int setup_fm(struct run85 *run, struct fm *f, int which, int *storage, const char *what)
{
    struct regs *r = &run->regs;
    const struct vnpu_fm_regs *d = vnpu_fm_regs(which);
    int bits;
    uint32_t prec = vnpu_fm_read_regs(r, d, f, &bits);
    unsigned region = R0(d->region) & 7u;
    char why[112];
    /* B64 (int16 transpose convolution): 48-bit accumulators written and read back sign-extended */
    int b64 = bits == 3 && (prec & 1u) && which == run->b64_fm;
    if (vnpu_fm_precision(f, prec, b64 ? 2 : bits, what, why, sizeof(why)) != 0) {
        return fail(run, "%s", why);
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
            return fail(run, "%s reads chain buffer %u, which no operation filled", what, region);
        }
        if (ch->elem != f->elem) {
            return fail(run, "%s reads chain buffer %u of %d-byte elements as %d-byte", what,
                        region, ch->elem, f->elem);
        }
        size_t ws_size;
        uint8_t *ws = (uint8_t *)vnpu_workspace(&ws_size);
        chained_layout(f, ws + ch->offset, ch);
        return 0;
    }
    if (*storage == STORAGE_NONE && which == FM_OFM && run->ofm_none) {
        return 0;
    }
    if (*storage == STORAGE_TILE3X1 || (*storage == STORAGE_NONE && which == FM_OFM)) {
        return fail(run, "%s activation_storage %s is not modelled", what,
                    *storage == STORAGE_TILE3X1 ? "TILE3X1" : "NONE");
    }
    for (int t = 0; t < 4; t++) {
        f->base[t] = addr40(r, d->base0 + (unsigned)t);
    }
    f->sx = addr40(r, d->stride_x);
    f->sy = addr40(r, d->stride_y);
    f->sc = addr40(r, d->stride_c);
    return region_of(run, region, &f->mem, &f->size, what);
}

/* Prove every address the box [0,h)x[0,w)x[0,c) touches lies in the memory. */
static int fm_check(struct run85 *run, const struct fm *f, const char *what)
{
    char why[112];
    return vnpu_fm_check(f, what, why, sizeof(why)) != 0 ? fail(run, "%s", why) : 0;
}

/* ---- OFM: transpose, reverse, chaining ---------------------------------------------------- */

struct ofm85 {
    struct fm fm;  /* memory layout (after transpose); fm.h/w/c the stored extent */
    int h, w, c;   /* the operation's extent (before transpose) */
    int transpose; /* activation_transpose */
    int axis[3];   /* memory (h, w, c) takes the operation's axis axis[i] (0 h, 1 w, 2 c) */
    int reverse;   /* activation_reverse */
    int chain;     /* chain buffer index, -1 if written to memory */
};

static inline void ofm_put(const struct ofm85 *o, int y, int x, int c, int64_t v)
{
    int in[3] = {y, x, c};
    int out[3] = {in[o->axis[0]], in[o->axis[1]], in[o->axis[2]]};
    if (o->reverse != 0) {
        int a = o->reverse - 1; /* H, W, C */
        int ext[3] = {o->fm.h, o->fm.w, o->fm.c};
        out[a] = ext[a] - 1 - out[a];
    }
    fm_write(&o->fm, out[0], out[1], out[2], v);
}

/* Free the chain buffers this operation read; an OFM chain buffer takes their place. */
static void chain_release(struct run85 *run, const struct fm *a, const struct fm *b)
{
    size_t ws_size;
    uint8_t *ws = (uint8_t *)vnpu_workspace(&ws_size);
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

static int setup_ofm(struct run85 *run, struct ofm85 *o)
{
    struct regs *r = &run->regs;
    int storage = STORAGE_TILE2X2;
    if (setup_fm(run, &o->fm, FM_OFM, &storage, "OFM") != 0) {
        return -1;
    }
    uint32_t prec = R0(OFM_PRECISION);
    o->h = R0(OFM_HEIGHT_M1) + 1;
    o->w = R0(OFM_WIDTH_M1) + 1;
    o->c = R0(OFM_DEPTH_M1) + 1;
    o->reverse = (int)((prec >> 9) & 3u);
    o->transpose = (int)((prec >> 11) & 7u);
    if ((vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_U85_TRANSPOSE_SWAP) && o->transpose == 3) {
        o->transpose = 6;
    }
    o->chain = -1;
    if (o->transpose == 4 || o->transpose == 5) {
        return fail(run, "OFM activation_transpose %d is not defined", o->transpose);
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
            return fail(run, "a chained OFM with transpose %d / reverse %d is not defined",
                        o->transpose, o->reverse);
        }
        struct chain *ch = &run->pending;
        size_t ws_size;
        uint8_t *ws = (uint8_t *)vnpu_workspace(&ws_size);
        ch->bytes = (size_t)o->h * (size_t)o->w * (size_t)o->c * (size_t)o->fm.elem;
        ch->offset = run->chain_end;
        if (ch->offset + ch->bytes > ws_size) {
            return fail(
                run,
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
        vnpu_workspace_used(run->chain_end);
        return 0;
    }
    return storage == STORAGE_NONE ? 0 : fm_check(run, &o->fm, "OFM");
}

/* The chain buffer an OFM filled becomes live once the operation has read its inputs. */
static void ofm_done(struct run85 *run, const struct ofm85 *o)
{
    if (o->chain >= 0) {
        run->chain[o->chain] = run->pending;
        run->chain[o->chain].live = 1;
        run->pending_cb = -1;
    }
}

/* ---- output stage ------------------------------------------------------------------------- */

static int setup_out(struct run85 *run, struct vnpu_out *o, const struct fm *ofm)
{
    struct regs *r = &run->regs;
    uint32_t act = R0(ACTIVATION);
    uint32_t func = act & 0x1fu;
    uint32_t table = (act >> 5) & 7u;
    o->zp = ofm->zp;
    o->lut = 0;
    o->table = NULL;
    o->lut_unsigned = 0;
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
        return fail(run, "activation_function %lu is not modelled", (unsigned long)func);
    }
    if (o->lut != 0) {
        if ((table + 1u) * lut_bytes > LUTRAM_SIZE) {
            return fail(run, "LUT table %lu of %lu bytes lies outside the %u-byte lutram",
                        (unsigned long)table, (unsigned long)lut_bytes, LUTRAM_SIZE);
        }
        o->table = run->env->lut + table * lut_bytes;
    }
    /* clamp unless activation_clip_range B16 */
    vnpu_limits_init(&o->lim, ofm, R0(ACTIVATION_MIN), R0(ACTIVATION_MAX), ((act >> 12) & 1u) == 0);
    o->simple = o->lut == 0 && o->lim.lo <= o->lim.hi;
    return 0;
}

/* ---- kernel geometry ---------------------------------------------------------------------- */

static int setup_kernel(struct run85 *run, struct kernel *k, int oh, int ow)
{
    char why[112];
    return vnpu_kernel_setup(k, run->regs.p0, oh, ow, why, sizeof(why)) != 0 ? fail(run, "%s", why)
                                                                             : 0;
}

/* The IFM as a kernel operation reads it (extent from the kernel, or a chain buffer's). */
static int setup_kernel_ifm(struct run85 *run, struct fm *ifm, const struct kernel *k, int depth)
{
    int storage = STORAGE_TILE2X2;
    if (setup_fm(run, ifm, FM_IFM, &storage, "IFM") != 0) {
        return -1;
    }
    ifm->h = k->upscale ? (k->ih + 1) / 2 : k->ih;
    ifm->w = k->upscale ? (k->iw + 1) / 2 : k->iw;
    ifm->c = depth;
    return fm_check(run, ifm, "IFM");
}

static int check_acc(struct run85 *run)
{
    struct regs *r = &run->regs;
    uint32_t acc = R0(ACC_FORMAT);
    if (run->acc.live) {
        return fail(
            run,
            "a non-CONV operation between acc_output DISABLE and acc_input KEEP is not modelled");
    }
    if (((acc >> 4) & 3u) != 0) {
        return fail(run, "acc_input %s is not modelled", ((acc >> 4) & 3u) == 1 ? "KEEP" : "IFM2");
    }
    if ((acc >> 6) & 1u) {
        return fail(run, "acc_output DISABLE is not modelled");
    }
    return 0;
}

/* ---- 8-bit maps: each output byte a function of one input byte --------------------------- */

/* Where an operation's coordinate along one axis lands in a one-tile 8-bit feature map. */
struct axis_map {
    int64_t stride; /* bytes per step, unless a brick's channel axis */
    int64_t sc;     /* NHCWB16 channel axis: bytes per 16 channels */
    int brick;
    int rev, ext; /* activation_reverse of this axis, and its extent */
};

static inline int64_t axis_off(const struct axis_map *a, int v)
{
    if (a->rev) {
        v = a->ext - 1 - v;
    }
    return a->brick ? (int64_t)(v >> 4) * a->sc + (int64_t)(v & 15) : (int64_t)v * a->stride;
}

/* The operation axes of f (memory axis i takes operation axis axis[i]; `reverse` as
 * activation_reverse), if f is one tile of 8-bit elements over its extent; else 0. */
static int axes_of(const struct fm *f, const int axis[3], int reverse, struct axis_map m[3])
{
    if (f->elem != 1 || f->h > f->h0 || f->w > f->w0) {
        return 0;
    }
    const int ext[3] = {f->h, f->w, f->c};
    for (int i = 0; i < 3; i++) {
        struct axis_map *a = &m[axis[i]];
        a->stride = i == 0 ? f->sy : (i == 1 ? f->sx : 1);
        a->brick = i == 2 && f->brick;
        a->sc = f->sc;
        a->rev = reverse == i + 1;
        a->ext = ext[i];
    }
    return 1;
}

/* Operations with an 8-bit map this large take the table (256 evaluations) instead. */
#define MAP8_MIN_VALUES 256

/* 1 if the operation can run as map8 (and ia, oa set): an untransposed 8-bit IFM of the
 * operation's extent, an 8-bit OFM, both one tile. */
static int map8_ok(const struct fm *in, const struct ofm85 *o, struct axis_map ia[3],
                   struct axis_map oa[3])
{
    static const int identity[3] = {0, 1, 2};
    return (size_t)o->h * (size_t)o->w * (size_t)o->c >= MAP8_MIN_VALUES && in->h == o->h &&
           in->w == o->w && in->c == o->c && axes_of(in, identity, 0, ia) &&
           axes_of(&o->fm, o->axis, o->reverse, oa);
}

/* OFM(y, x, c) = table[IFM(y, x, c)] over the operation's extent, transpose and reverse included. */
static void map8(const struct fm *in, const struct axis_map ia[3], const struct ofm85 *o,
                 const struct axis_map oa[3], const uint8_t table[256])
{
    const uint8_t *ib = in->mem + in->base[0];
    uint8_t *ob = o->fm.mem + o->fm.base[0];
    for (int y = 0; y < o->h; y++) {
        for (int x = 0; x < o->w; x++) {
            const uint8_t *ip = ib + axis_off(&ia[0], y) + axis_off(&ia[1], x);
            uint8_t *op = ob + axis_off(&oa[0], y) + axis_off(&oa[1], x);
            for (int c = 0; c < o->c; c++) {
                op[axis_off(&oa[2], c)] = table[ip[axis_off(&ia[2], c)]];
            }
        }
    }
}

/* The operand value of byte b of an 8-bit map (signed per `is_signed`). */
static inline int64_t byte_value(int b, int is_signed)
{
    return is_signed ? (int64_t)(int8_t)(uint8_t)b : (int64_t)b;
}

/*
 * Kept accumulators. Vela splits a kernel with stride 4 or more into 1x1 operations that
 * accumulate into the same accumulators: the first RESET + acc_output DISABLE (OFM
 * activation_storage NONE), then KEEP + DISABLE, the last KEEP + ENABLE. Between them the
 * accumulators live in the workspace, like a chain buffer (run->acc).
 */
static int kept_modes(struct run85 *run, const char *what, int *keep, int *hold)
{
    struct regs *r = &run->regs;
    uint32_t input = (R0(ACC_FORMAT) >> 4) & 3u;
    *keep = input == 1 && !(vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_U85_ACC_KEEP_AS_RESET);
    *hold = (int)((R0(ACC_FORMAT) >> 6) & 1u);
    if (input == 2 || input == 3) {
        return fail(run, "acc_input %s for %s is not modelled", input == 2 ? "IFM2" : "3", what);
    }
    if (input == 1 && !run->acc.live) {
        return fail(run,
                    "acc_input KEEP with no accumulators kept by an earlier acc_output DISABLE");
    }
    if (input == 0 && run->acc.live) {
        return fail(
            run, "acc_input RESET while kept accumulators wait for acc_input KEEP is not modelled");
    }
    return 0;
}

/* The kept accumulators of `ofm` (allocated by the first holding operation), or NULL. */
static int kept_buffer(struct run85 *run, const struct ofm85 *ofm, int keep, int hold,
                       int64_t **kept)
{
    struct regs *r = &run->regs;
    size_t bytes = (size_t)ofm->h * (size_t)ofm->w * (size_t)ofm->c * sizeof(int64_t);
    *kept = NULL;
    if (!keep && !hold) {
        return 0;
    }
    if (ofm->h > (int)R0(OFM_BLK_HEIGHT_M1) + 1 || ofm->w > (int)R0(OFM_BLK_WIDTH_M1) + 1 ||
        ofm->c > (int)R0(OFM_BLK_DEPTH_M1) + 1 || (run->acc.live && run->acc.bytes != bytes)) {
        return fail(
            run,
            "kept accumulators over an OFM of %dx%dx%d that is not one OFM block (or not the kept one)",
            ofm->h, ofm->w, ofm->c);
    }
    size_t ws_size;
    uint8_t *ws = (uint8_t *)vnpu_workspace(&ws_size);
    if (!run->acc.live) {
        run->acc.offset = run->chain_end;
        run->acc.bytes = bytes;
        run->acc.live = 1;
        run->chain_end = (run->acc.offset + bytes + 15u) & ~(size_t)15u;
        if (run->chain_end > ws_size) {
            return fail(
                run, "kept accumulators need %lu bytes of working memory, the virtual NPU has %lu",
                (unsigned long)run->chain_end, (unsigned long)ws_size);
        }
        vnpu_workspace_used(run->chain_end);
    }
    *kept = (int64_t *)(void *)(ws + run->acc.offset);
    return 0;
}

/* ---- POOL ---------------------------------------------------------------------------------- */

static int op_pool_acc(struct run85 *run);

/* The output value of a pool's accumulator over `count` valid taps. */
static inline int64_t pool_eval(int mode, int64_t acc, int count,
                                const struct vnpu_rescaler *out_scale, const struct vnpu_out *o)
{
    if (mode == 1 && count > 0) {
        /* divide by the valid taps with TOSA's reciprocal_scale, single rounding */
        int kbits = 0;
        while ((1 << kbits) < count) {
            kbits++;
        }
        uint32_t mult = (uint32_t)(((((int64_t)1 << 30) + 1) << kbits) / count);
        int avg_round =
            (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_U85_AVG_FLOOR) ? ROUND_FLOOR : ROUND_NATURAL;
        acc = vnpu_rescale(acc, mult, 30u + (unsigned)kbits, avg_round);
    }
    return vnpu_out_value(o, vnpu_rescale_by(out_scale, acc));
}

static int op_pool(struct run85 *run, uint32_t mode)
{
    struct regs *r = &run->regs;
    struct fm ifm;
    struct ofm85 ofm;
    struct kernel k;
    struct vnpu_out o;
    static const char *const names[8] = {"MAX",  "AVERAGE", "REDUCE_SUM", "SUM",
                                         "NONE", "MIN",     "ARGMAX_X",   "ARGMAX_Y"};
    if (mode >= 6) {
        return fail(run, "pooling_mode %s is not modelled", names[mode & 7u]);
    }
    if (mode == 4) {
        return op_pool_acc(run);
    }
    /* MAX pools may keep accumulators (a split stride-4 kernel): the running maximum */
    int keep = 0, hold = 0;
    if ((mode == 0 ? kept_modes(run, "a pool", &keep, &hold) : check_acc(run)) != 0) {
        return -1;
    }
    run->ofm_none = hold;
    int ofm_rc = setup_ofm(run, &ofm);
    run->ofm_none = 0;
    if (ofm_rc != 0 || setup_kernel(run, &k, ofm.h, ofm.w) != 0 ||
        setup_out(run, &o, &ofm.fm) != 0 ||
        setup_kernel_ifm(run, &ifm, &k, mode == 2 ? (int)R0(IFM_DEPTH_M1) + 1 : ofm.c) != 0) {
        return -1;
    }
    int64_t *kept = NULL;
    if (kept_buffer(run, &ofm, keep, hold, &kept) != 0) {
        return -1;
    }
    if (mode == 2 && ofm.c != 1) {
        return fail(run, "REDUCE_SUM with OFM depth %d (expected 1)", ofm.c);
    }
    if (((R0(OFM_PRECISION) >> 8) & 1u) == 0) {
        return fail(run, "OFM scale_mode PER_CHANNEL for a pool is not modelled");
    }
    uint32_t scale = W1(OFM_SCALE) & 0x7fffffffu;
    unsigned shift = P1(OFM_SCALE) & 0x3fu;
    int round = ofm_round(run, P1(OFM_SCALE), "OFM_SCALE");
    if (round < 0) {
        return -1;
    }
    struct vnpu_rescaler out_scale;
    vnpu_rescaler_init(&out_scale, scale, shift, round);
    /* a 1x1 kernel without padding (the transposing copies): one IFM byte per output */
    struct axis_map ia[3];
    struct axis_map oa[3];
    if (mode != 2 && kept == NULL && k.kh == 1 && k.kw == 1 && k.sy == 1 && k.sx == 1 &&
        !k.upscale && (k.pad_top | k.pad_left | k.pad_bottom | k.pad_right) == 0 &&
        map8_ok(&ifm, &ofm, ia, oa)) {
        uint8_t table[256];
        for (int b = 0; b < 256; b++) {
            int64_t v = byte_value(b, ifm.is_signed) - ifm.zp;
            table[b] = (uint8_t)pool_eval((int)mode, v, 1, &out_scale, &o);
        }
        map8(&ifm, ia, &ofm, oa, table);
    } else {
        for (int oy = 0; oy < ofm.h; oy++) {
            for (int ox = 0; ox < ofm.w; ox++) {
                for (int c = 0; c < ofm.c; c++) {
                    int count;
                    int64_t acc = vnpu_pool_acc(&ifm, &k, (int)mode, oy, ox, c, &count);
                    if (kept != NULL) {
                        /* a window of padding only leaves the maximum as it was */
                        int64_t *m =
                            &kept[((size_t)oy * (size_t)ofm.w + (size_t)ox) * (size_t)ofm.c +
                                  (size_t)c];
                        acc = keep && (count == 0 || *m > acc) ? *m : acc;
                        count = keep || count > 0 ? 1 : 0;
                        if (hold) {
                            *m = count == 0 ? INT64_MIN : acc;
                            continue;
                        }
                    }
                    ofm_put(&ofm, oy, ox, c, pool_eval((int)mode, acc, count, &out_scale, &o));
                }
            }
        }
    }
    run->acc.live = hold;
    chain_release(run, &ifm, NULL);
    ofm_done(run, &ofm);
    return 0;
}

/* ---- ELEMENTWISE -------------------------------------------------------------------------- */

struct operand {
    struct fm fm;
    int scalar;
    int64_t value;  /* the scalar, zero point removed */
    int bh, bw, bc; /* broadcast along H, W, C */
};

/* `broadcast` 0: the operation ignores the broadcast registers (a stale value from an earlier one). */
static int setup_operand(struct run85 *run, struct operand *op, int which, const struct ofm85 *ofm,
                         int broadcast)
{
    struct regs *r = &run->regs;
    const char *what = which == FM_IFM ? "IFM" : "IFM2";
    uint32_t bc =
        broadcast ? (which == FM_IFM ? R0(IFM_BROADCAST) : R0(IFM2_BROADCAST)) & 0xfu : 0u;
    int storage = STORAGE_TILE2X2;
    if (setup_fm(run, &op->fm, which, &storage, what) != 0) {
        return -1;
    }
    op->scalar = bc == 8;
    op->bh = op->bw = op->bc = 0;
    if (op->scalar) {
        int32_t raw = (int32_t)W1(OP_SCALAR);
        op->value = (int64_t)raw - op->fm.zp;
        return 0;
    }
    if (bc > 8) {
        return fail(run, "%s broadcast_mode %lu is not defined", what, (unsigned long)bc);
    }
    if (storage == STORAGE_NONE) {
        return fail(run, "%s activation_storage NONE without a scalar is not modelled", what);
    }
    op->bh = (int)(bc & 1u);
    op->bw = (int)((bc >> 1) & 1u);
    op->bc = (int)((bc >> 2) & 1u);
    op->fm.h = op->bh ? 1 : ofm->h;
    op->fm.w = op->bw ? 1 : ofm->w;
    op->fm.c = op->bc ? 1 : ofm->c;
    if (storage == STORAGE_CHAINED) {
        /* the chain buffer holds exactly the producer's OFM */
        int cb = -1;
        size_t ws_size;
        uint8_t *ws = (uint8_t *)vnpu_workspace(&ws_size);
        for (int i = 0; i < CHAIN_BUFFERS; i++) {
            if (run->chain[i].live && ws + run->chain[i].offset == op->fm.mem) {
                cb = i;
            }
        }
        const struct chain *ch = &run->chain[cb < 0 ? 0 : cb];
        if (cb < 0 || ch->h != op->fm.h || ch->w != op->fm.w || ch->c != op->fm.c) {
            return fail(run, "%s reads chain buffer %d as %dx%dx%d, it holds %dx%dx%d", what, cb,
                        op->fm.h, op->fm.w, op->fm.c, ch->h, ch->w, ch->c);
        }
    }
    return fm_check(run, &op->fm, what);
}

static inline int64_t operand_at(const struct operand *op, int y, int x, int c)
{
    if (op->scalar) {
        return op->value;
    }
    return fm_read(&op->fm, op->bh ? 0 : y, op->bw ? 0 : x, op->bc ? 0 : c) - op->fm.zp;
}

/* The raw stored value (logic and shift operations take no zero point). */
static inline int64_t operand_raw(const struct operand *op, int y, int x, int c)
{
    return operand_at(op, y, x, c) + op->fm.zp;
}

struct in_scale {
    uint32_t scale;
    unsigned shift;
    int round;
    int unit;
};

static int setup_in_scale(struct run85 *run, struct in_scale *s, unsigned reg, const char *what)
{
    struct regs *r = &run->regs;
    uint32_t param = P1(reg);
    s->scale = W1(reg) & 0x7fffffffu;
    s->shift = param & 0x3fu;
    s->round = ((param >> 13) & 1u) ? ROUND_NATURAL : ROUND_DBL;
    s->unit = s->scale == 1 && s->shift == 0;
    if (((param >> 6) & 0x1fu) != 0) {
        return fail(run, "%s dbl_rnd %lu is not modelled", what,
                    (unsigned long)((param >> 6) & 0x1fu));
    }
    return 0;
}

/* elementwise_mode values (the ones modelled) */
enum {
    MUL = 0,
    ADD = 1,
    SUB = 2,
    MIN = 3,
    MAX = 4,
    ABS = 6,
    CMP_EQ = 16,
    CMP_NE = 17,
    CMP_GE = 18,
    CMP_GT = 19,
    AND = 33,
    OR = 34,
    XOR = 35,
    NOT = 36,
    AND_NOT = 42
};

/* What one elementwise operation computes per value, prepared once. */
struct ew {
    uint32_t mode;
    int rescaled;
    struct vnpu_rescaler r1, r2, ro;
    const struct vnpu_out *o;
};

/* The output value for operands a, b as fetched (raw for the bitwise operations, else
 * zero point removed): input scales, the operation, the output stage. */
static inline int64_t ew_eval(const struct ew *e, int64_t a, int64_t b)
{
    const uint32_t mode = e->mode;
    if (e->rescaled && !((mode == MIN || mode == MAX) &&
                         (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_U85_MINMAX_UNSCALED))) {
        a = vnpu_rescale_by(&e->r1, a);
        b = vnpu_rescale_by(&e->r2, b);
    }
    int64_t res;
    switch (mode) {
    case MUL:
        res = a * b;
        break;
    case ADD:
    case SUB:
        res = mode == ADD ? a + b : a - b;
        break;
    case MIN:
        res = a < b ? a : b;
        break;
    case MAX:
        res = a > b ? a : b;
        break;
    case ABS:
        res = a < 0 ? -a : a;
        break;
    case CMP_EQ:
        res = -(int64_t)(a == b); /* true is all ones: the mask AND/AND_NOT/OR select with */
        break;
    case CMP_NE:
        res = -(int64_t)(a != b); /* true is all ones: the mask AND/AND_NOT/OR select with */
        break;
    case CMP_GE:
        res = -(int64_t)(a >= b); /* true is all ones: the mask AND/AND_NOT/OR select with */
        break;
    case CMP_GT:
        res = -(int64_t)(a > b); /* true is all ones: the mask AND/AND_NOT/OR select with */
        break;
    case AND:
        res = a & b;
        break;
    case OR:
        res = a | b;
        break;
    case XOR:
        res = a ^ b;
        break;
    case NOT:
        res = ~a;
        break;
    default: /* AND_NOT */
        res = a & ~b;
        break;
    }
    if (mode >= CMP_EQ && mode <= CMP_GT &&
        (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_U85_CMP_TRUE_ONE)) {
        res = -res;
    }
    return vnpu_out_value(e->o, vnpu_rescale_by(&e->ro, res));
}

static int op_elementwise(struct run85 *run, uint32_t mode)
{
    struct regs *r = &run->regs;
    struct ofm85 ofm;
    struct vnpu_out o;
    struct operand a_op;
    struct operand b_op;
    struct in_scale s1;
    struct in_scale s2;
    /*
     * Compares and the bitwise operations are what Vela makes of torch.where, logical_not
     * and logical_xor (masks selecting bitwise): verified. The shifts, CLZ, DIV and LRELU
     * have no corpus stream: they stop the stream like every other unverified construct.
     */
    int known = mode <= MAX || mode == ABS || (mode >= CMP_EQ && mode <= CMP_GT) ||
                (mode >= AND && mode <= NOT) || mode == AND_NOT;
    if (!known) {
        static const char *const names[12] = {"MUL", "ADD", "SUB", "MIN", "MAX", "LRELU",
                                              "ABS", "CLZ", "SHR", "SHL", "LSR", "DIV"};
        return fail(run, "elementwise_mode %lu (%s) is not modelled", (unsigned long)mode,
                    mode < 12 ? names[mode] : "undefined");
    }
    int unary = mode == ABS || mode == NOT;
    if (check_acc(run) != 0 || setup_ofm(run, &ofm) != 0 || setup_out(run, &o, &ofm.fm) != 0 ||
        setup_operand(run, &a_op, FM_IFM, &ofm, 1) != 0 ||
        (!unary && setup_operand(run, &b_op, FM_IFM2, &ofm, 1) != 0) ||
        setup_in_scale(run, &s1, IFM_SCALE, "IFM_SCALE") != 0 ||
        setup_in_scale(run, &s2, IFM2_SCALE, "IFM2_SCALE") != 0) {
        return -1;
    }
    if (unary) {
        b_op = a_op;
    }
    /* MUL and the bitwise operations take no input scale (regor gives them unit scales) */
    int rescaled = mode != MUL && mode < AND;
    if (!rescaled && (!s1.unit || (!unary && !s2.unit))) {
        return fail(run, "elementwise_mode %lu with a non-unit IFM/IFM2 scale is not modelled",
                    (unsigned long)mode);
    }
    if (((R0(OFM_PRECISION) >> 8) & 1u) == 0) {
        return fail(run, "OFM scale_mode PER_CHANNEL for an elementwise operation is not modelled");
    }
    uint32_t oscale = W1(OFM_SCALE) & 0x7fffffffu;
    unsigned oshift = P1(OFM_SCALE) & 0x3fu;
    int oround = ofm_round(run, P1(OFM_SCALE), "OFM_SCALE");
    if (oround < 0) {
        return -1;
    }
    int logic = mode >= AND;
    /* the scales prepared once (vnpu_rescale_by: the same results as vnpu_rescale) */
    struct ew e;
    e.mode = mode;
    e.rescaled = rescaled;
    e.o = &o;
    vnpu_rescaler_init(&e.r1, s1.scale, s1.shift, s1.round);
    vnpu_rescaler_init(&e.r2, s2.scale, s2.shift, s2.round);
    vnpu_rescaler_init(&e.ro, oscale, oshift, oround);
    /* one operand a scalar (or unary): one byte of the other per output */
    const struct operand *var = unary || b_op.scalar ? &a_op : &b_op;
    const struct operand *fixed = var == &a_op ? &b_op : &a_op;
    struct axis_map ia[3];
    struct axis_map oa[3];
    if (!var->scalar && (unary || fixed->scalar) && (var->bh | var->bw | var->bc) == 0 &&
        map8_ok(&var->fm, &ofm, ia, oa)) {
        uint8_t table[256];
        int64_t k =
            logic ? fixed->value + fixed->fm.zp : fixed->value; /* as operand_raw / operand_at */
        for (int t = 0; t < 256; t++) {
            int64_t v = byte_value(t, var->fm.is_signed) - (logic ? 0 : var->fm.zp);
            table[t] =
                (uint8_t)ew_eval(&e, var == &a_op ? v : k, unary ? v : (var == &a_op ? k : v));
        }
        map8(&var->fm, ia, &ofm, oa, table);
    } else {
        for (int y = 0; y < ofm.h; y++) {
            for (int x = 0; x < ofm.w; x++) {
                for (int c = 0; c < ofm.c; c++) {
                    int64_t a;
                    int64_t b;
                    if (logic) {
                        a = operand_raw(&a_op, y, x, c);
                        b = operand_raw(&b_op, y, x, c);
                    } else {
                        a = operand_at(&a_op, y, x, c);
                        b = operand_at(&b_op, y, x, c);
                    }
                    ofm_put(&ofm, y, x, c, ew_eval(&e, a, b));
                }
            }
        }
    }
    chain_release(run, &a_op.fm, unary ? NULL : &b_op.fm);
    ofm_done(run, &ofm);
    return 0;
}

/*
 * The per-channel scale/bias records of an operation (10 bytes per OFM channel):
 * Acc32: bias int32, scale 31-bit, shift; Acc48: bias int48, scale 15-bit, shift.
 */
struct scale_stream {
    const uint8_t *rec;
    int acc48;
};

static int setup_scales(struct run85 *run, struct scale_stream *ss, int channels)
{
    struct regs *r = &run->regs;
    uint8_t *smem = NULL;
    size_t ssize = 0;
    if ((R0(ACC_FORMAT) & 3u) > 1) {
        return fail(run, "acc_format %lu is not defined", (unsigned long)(R0(ACC_FORMAT) & 3u));
    }
    ss->acc48 = (R0(ACC_FORMAT) & 3u) == 1;
    if (region_of(run, R0(SCALE_REGION) & 7u, &smem, &ssize, "scale stream") != 0) {
        return -1;
    }
    int64_t sbase = addr40(r, SCALE_BASE);
    uint64_t slen = W1(SCALE_LENGTH) & 0xfffffu;
    if (sbase < 0 || slen < (uint64_t)channels * 10u || (uint64_t)sbase + slen > ssize) {
        return fail(
            run, "scale stream [%s, +%s) does not hold %d records inside its region of %lu bytes",
            VNPU_I64(sbase), VNPU_U64(slen), channels, (unsigned long)ssize);
    }
    ss->rec = smem + sbase;
    return 0;
}

static void scale_record(const struct scale_stream *ss, int channel, int64_t *bias, uint32_t *scale,
                         unsigned *shift)
{
    const uint8_t *rec = ss->rec + (size_t)channel * 10u;
    if (ss->acc48) {
        uint64_t braw = 0;
        for (int b = 5; b >= 0; b--) {
            braw = (braw << 8) | rec[b];
        }
        *bias = (braw & ((uint64_t)1 << 47)) ? (int64_t)(braw | ~(((uint64_t)1 << 48) - 1u))
                                             : (int64_t)braw;
        *scale = (uint32_t)rec[6] | ((uint32_t)(rec[7] & 0x7fu) << 8);
    } else {
        *bias = (int32_t)((uint32_t)rec[0] | ((uint32_t)rec[1] << 8) | ((uint32_t)rec[2] << 16) |
                          ((uint32_t)rec[3] << 24));
        *scale = (uint32_t)rec[4] | ((uint32_t)rec[5] << 8) | ((uint32_t)rec[6] << 16) |
                 ((uint32_t)(rec[7] & 0x7fu) << 24);
    }
    *shift = rec[8] & 0x3fu;
}

/*
 * POOL NONE with acc_input IFM2: the accumulators are loaded from a 32-bit IFM2 and only
 * the output stage runs (OFM scale, zero point, clamp, transpose). Vela ends a transpose
 * convolution with it, after 1x1 CONVs wrote the int32 phases (int16 activations: Acc48
 * CONVs write B64, the 48-bit accumulators sign-extended, and this reads them back).
 */
static int op_pool_acc(struct run85 *run)
{
    struct regs *r = &run->regs;
    struct ofm85 ofm;
    struct vnpu_out o;
    struct operand acc_in;
    uint32_t acc = R0(ACC_FORMAT);
    if (((acc >> 4) & 3u) != 2) {
        return fail(run, "pooling_mode NONE needs acc_input IFM2, not %lu",
                    (unsigned long)((acc >> 4) & 3u));
    }
    if ((acc >> 6) & 1u) {
        return fail(run, "acc_output DISABLE is not modelled");
    }
    if (R0(KERNEL_WIDTH_M1) != 0 || R0(KERNEL_HEIGHT_M1) != 0) {
        return fail(run, "pooling_mode NONE with a %dx%d kernel is not modelled",
                    R0(KERNEL_HEIGHT_M1) + 1, R0(KERNEL_WIDTH_M1) + 1);
    }
    if (setup_ofm(run, &ofm) != 0 || setup_out(run, &o, &ofm.fm) != 0) {
        return -1;
    }
    run->b64_fm = (acc & 3u) == 1 ? FM_IFM2 : -1; /* Acc48 accumulators read back */
    int acc_rc = setup_operand(run, &acc_in, FM_IFM2, &ofm, 0);
    run->b64_fm = -1;
    if (acc_rc != 0) {
        return -1;
    }
    if (acc_in.scalar || (acc_in.fm.elem != 4 && acc_in.fm.elem != 8)) {
        return fail(run, "accumulators from IFM2 need a 32-bit or 64-bit IFM2 feature map");
    }
    /* GLOBAL: OFM_SCALE; PER_CHANNEL: the scale stream's records, bias included */
    int per_channel = ((R0(OFM_PRECISION) >> 8) & 1u) == 0;
    struct scale_stream ss;
    if (per_channel && setup_scales(run, &ss, ofm.c) != 0) {
        return -1;
    }
    int round = ofm_round(run, P1(OFM_SCALE), "OFM_SCALE");
    if (round < 0) {
        return -1;
    }
    int low32 = acc_in.fm.elem == 8 && (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_U85_B64_LOW32);
    for (int c = 0; c < ofm.c; c++) {
        int64_t bias = 0;
        uint32_t scale = W1(OFM_SCALE) & 0x7fffffffu;
        unsigned shift = P1(OFM_SCALE) & 0x3fu;
        if (per_channel) {
            scale_record(&ss, c, &bias, &scale, &shift);
        }
        struct vnpu_rescaler chan_scale;
        vnpu_rescaler_init(&chan_scale, scale, shift, round);
        for (int y = 0; y < ofm.h; y++) {
            for (int x = 0; x < ofm.w; x++) {
                int64_t v = operand_at(&acc_in, y, x, c);
                v = (low32 ? (int64_t)(uint32_t)v : v) + bias;
                ofm_put(&ofm, y, x, c, vnpu_out_value(&o, vnpu_rescale_by(&chan_scale, v)));
            }
        }
    }
    chain_release(run, &acc_in.fm, NULL);
    ofm_done(run, &ofm);
    return 0;
}

/* ---- weights: SWD and FWD streams, the U85 brick order -------------------------------------- */

/*
 * A fast-weight-decoder (FWD) stream: a 256-bit header (raw flag, small-palette flag,
 * 102 zero bits, an 8-bit zero adjust, 16 palette entries of 9 bits folded as
 * |v|<<1 | sign), then fixed-width codes: 2-bit palette indices (small palette),
 * 4-bit ones, or raw bytes offset by the zero adjust; LSB first. Fixed width makes
 * it random access: value i is at bit 256 + i * width.
 */
struct fwd {
    const uint8_t *buf;
    size_t size;
    int width; /* 2, 4 or 8 */
    int zero_adjust;
    int16_t palette[16];
};

static uint32_t bits_at(const uint8_t *buf, size_t bitpos, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++) {
        size_t b = bitpos + (size_t)i;
        v |= (uint32_t)((buf[b >> 3] >> (b & 7u)) & 1u) << i;
    }
    return v;
}

static int fwd_init(struct fwd *f, const uint8_t *buf, size_t size)
{
    if (size < 32) {
        return -1;
    }
    f->buf = buf;
    f->size = size;
    int raw = (int)bits_at(buf, 0, 1);
    int small = (int)bits_at(buf, 1, 1);
    f->width = raw ? 8 : (small ? 2 : 4);
    f->zero_adjust = (int8_t)(uint8_t)bits_at(buf, 104, 8);
    for (int i = 0; i < 16; i++) {
        uint32_t folded = bits_at(buf, 112 + 9u * (size_t)i, 9);
        int mag = (int)(folded >> 1);
        f->palette[i] = (int16_t)((folded & 1u) ? -mag : mag);
    }
    return 0;
}

/* 1 and *value, or -1 past the end of the stream. */
static int fwd_get(const struct fwd *f, size_t i, int16_t *value)
{
    size_t pos = 256u + i * (size_t)f->width;
    if ((pos + (size_t)f->width + 7u) / 8u > f->size) {
        return -1;
    }
    /* 2-, 4- and 8-bit codes after a 32-byte header never straddle a byte */
    uint32_t code = ((uint32_t)f->buf[pos >> 3] >> (pos & 7u)) & ((1u << f->width) - 1u);
    if (f->width == 8) {
        *value = (int16_t)((int8_t)(uint8_t)code - f->zero_adjust);
    } else {
        *value = f->palette[code];
    }
    return 1;
}

/* The values one weight decoder delivers: its SWD stream, or its share of the one FWD stream. */
struct wdec {
    int fwd_format;
    struct vnpu_mlw mlw;
    struct fwd fwd;
    size_t k;    /* values delivered so far */
    int stream;  /* which decoder's share of an FWD stream */
    int streams; /* FWD streams are interleaved in blocks of `block` values */
    size_t block;
    size_t k_per_stream; /* for the mutation only */
};

long ethosu_virtual_fwd_decode(const uint8_t *in, size_t len, int16_t *out, size_t max_out)
{
    struct fwd f;
    if (in == NULL || fwd_init(&f, in, len) != 0) {
        return -1;
    }
    size_t n = (len * 8u - 256u) / (size_t)f.width;
    if (n > max_out) {
        return -2;
    }
    for (size_t i = 0; i < n; i++) {
        (void)fwd_get(&f, i, &out[i]);
    }
    return (long)n;
}

static int wdec_next(struct wdec *d, int16_t *v)
{
    if (!d->fwd_format) {
        return vnpu_mlw_next(&d->mlw, v);
    }
    size_t k = d->k++;
    size_t i = ((k / d->block) * (size_t)d->streams + (size_t)d->stream) * d->block + k % d->block;
    if (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_U85_FWD_NO_INTERLEAVE) {
        i = k + (size_t)d->stream * d->k_per_stream;
    }
    return fwd_get(&d->fwd, i, v);
}

struct wgeom {
    int depthwise, part_kernel, sparse;
    int ifm16;
    int ofm_depth, ifm_depth; /* ifm_depth 1 for depthwise */
    int kh, kw;               /* undilated kernel */
    int sx, sy;               /* strides the order splits the kernel by */
    int decomp_x, decomp_y;
    int ofm_block, ifm_block;
    int ofm_ublock, ifm_ublock;
    int round;      /* sub-kernel elements rounded up to this */
    int dw_padding; /* extra zero groups per depthwise sub-kernel round */
    int streams;
};

/*
 * Walk one weight stream in the order the U85 weight decoder delivers it and store each
 * value at weights[((o*kh + y)*kw + x)*ifm_depth + i]. A value the decoder had to pad
 * (beyond the depth, or a round-up) must be read but is dropped.
 */
static int weight_walk(struct run85 *run, const struct wgeom *g, int stream, struct wdec *dec,
                       int16_t *weights)
{
    int ifm_depth = g->depthwise ? 1 : g->ifm_depth;
    int inc = -g->ifm_block;
    int ifm_start = 0;
    int ifm_step = g->depthwise ? 1 : (g->sparse ? 16 : 8);
    for (int oz0 = 0; oz0 < g->ofm_depth; oz0 += g->ofm_block) {
        inc = -inc;
        int ofm_blk = g->ofm_depth - oz0 < g->ofm_block ? g->ofm_depth - oz0 : g->ofm_block;
        int iz0 = ifm_start;
        for (; iz0 < ifm_depth && iz0 >= 0; iz0 += inc) {
            ifm_start = iz0;
            int ifm_blk = ifm_depth - iz0 < g->ifm_block ? ifm_depth - iz0 : g->ifm_block;
            for (int skx = 0; skx < g->kw; skx += g->decomp_x) {
                int sub_w = g->kw - skx < g->decomp_x ? g->kw - skx : g->decomp_x;
                for (int sky = 0; sky < g->kh; sky += g->decomp_y) {
                    int sub_h = g->kh - sky < g->decomp_y ? g->kh - sky : g->decomp_y;
                    int outer_end = g->depthwise ? 1 : ifm_blk;
                    for (int iu_o = 0; iu_o < outer_end; iu_o += g->ifm_ublock) {
                        for (int ou_o = 0; ou_o < ofm_blk; ou_o += g->ofm_ublock) {
                            int elements = (sub_w * sub_h + g->round - 1) / g->round * g->round;
                            for (int py = 0; py < g->sy; py++) {
                                int skh = (sub_h + g->sy - 1 - py) / g->sy;
                                for (int px = 0; px < g->sx; px++) {
                                    int skw = (sub_w + g->sx - 1 - px) / g->sx;
                                    for (int ky = 0; ky < skh; ky++) {
                                        for (int kx0 = 0; kx0 < skw; kx0++) {
                                            int kx = ky % 2 == 0 ||
                                                             (vnpu_mutation_mask &
                                                              ETHOSU_VIRTUAL_MUT_U85_NO_SERPENTINE)
                                                         ? kx0
                                                         : skw - 1 - kx0;
                                            elements--;
                                            for (int iu_i = 0; iu_i < g->ifm_ublock;
                                                 iu_i += ifm_step) {
                                                for (int ou = stream * 4; ou < g->ofm_ublock;
                                                     ou += 4 * g->streams) {
                                                    for (int ou_i = 0; ou_i < 4; ou_i++) {
                                                        for (int iz = 0; iz < ifm_step; iz++) {
                                                            int16_t v;
                                                            int got = wdec_next(dec, &v);
                                                            if (got != 1) {
                                                                return got < 0 ? -2 : -1;
                                                            }
                                                            int wx = skx + px + kx * g->sx;
                                                            int wy = sky + py + ky * g->sy;
                                                            int ic = iz0 + iu_o + iu_i + iz;
                                                            int oc = oz0 + ou_o + ou + ou_i;
                                                            if (ic < ifm_depth &&
                                                                oc < g->ofm_depth) {
                                                                size_t idx =
                                                                    (((size_t)oc * (size_t)g->kh +
                                                                      (size_t)wy) *
                                                                         (size_t)g->kw +
                                                                     (size_t)wx) *
                                                                        (size_t)ifm_depth +
                                                                    (size_t)ic;
                                                                weights[idx] = v;
                                                            }
                                                        }
                                                    }
                                                }
                                            }
                                            if (g->depthwise && elements % g->round == 0) {
                                                int pad =
                                                    g->dw_padding * g->ofm_ublock / g->streams;
                                                for (int p = 0; p < pad; p++) {
                                                    int16_t v;
                                                    int got = wdec_next(dec, &v);
                                                    if (got != 1) {
                                                        return got < 0 ? -2 : -1;
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                            if (elements > 0) {
                                int pad = (elements + (g->depthwise ? g->dw_padding : 0)) *
                                          g->ifm_ublock * g->ofm_ublock / g->streams;
                                for (int p = 0; p < pad; p++) {
                                    int16_t v;
                                    int got = wdec_next(dec, &v);
                                    if (got != 1) {
                                        return got < 0 ? -2 : -1;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    (void)run;
    return 0;
}

/* OFM microblock depth: the MACs per cycle spread over the microblock's H x W. */
static int ublock_depth(struct run85 *run)
{
    struct regs *r = &run->regs;
    static const int area[8] = {1, 2, 4, 4, 8, 16, 0, 0};
    int a = area[(R0(ACC_FORMAT) >> 8) & 7u];
    if (a == 0) {
        return 0;
    }
    return run->macs / 8 / a;
}

/*
 * CONV with weights_ifm2: a matrix multiply whose right-hand side is a feature map.
 * OFM (y, x, o) = sum over i of (IFM (y, x, i) - zp) * (IFM2 (y, o, i) - zp2): IFM2 holds
 * the transposed right-hand matrix, one per row y (or one for all if its height is 1).
 * No bias; the OFM scale is global.
 */
static int op_matmul(struct run85 *run)
{
    struct regs *r = &run->regs;
    struct fm ifm;
    struct fm ifm2;
    struct ofm85 ofm;
    struct vnpu_out o;
    int storage = STORAGE_TILE2X2;
    if (R0(KERNEL_WIDTH_M1) != 0 || R0(KERNEL_HEIGHT_M1) != 0 ||
        (R0(KERNEL_STRIDE) & 0x25bu) != 0) {
        return fail(run, "weights_ifm2 with a kernel other than 1x1 stride 1 is not modelled");
    }
    if (check_acc(run) != 0 || setup_ofm(run, &ofm) != 0 || setup_out(run, &o, &ofm.fm) != 0 ||
        setup_fm(run, &ifm, FM_IFM, &storage, "IFM") != 0 ||
        setup_fm(run, &ifm2, FM_IFM2, &storage, "IFM2") != 0) {
        return -1;
    }
    if (storage == STORAGE_NONE) {
        return fail(run, "weights_ifm2 from a scalar IFM2 is not modelled");
    }
    if (((R0(OFM_PRECISION) >> 8) & 1u) == 0) {
        return fail(run, "weights_ifm2 with OFM scale_mode PER_CHANNEL is not modelled");
    }
    ifm.h = ofm.h;
    ifm.w = ofm.w;
    ifm.c = (int)R0(IFM_DEPTH_M1) + 1;
    int rows2 = (R0(IFM2_HEIGHT0_M1) + 1 >= ofm.h) ? ofm.h : 1;
    ifm2.h = rows2;
    ifm2.w = ofm.c;
    ifm2.c = ifm.c;
    if (fm_check(run, &ifm, "IFM") != 0 || fm_check(run, &ifm2, "IFM2") != 0) {
        return -1;
    }
    uint32_t scale = W1(OFM_SCALE) & 0x7fffffffu;
    unsigned shift = P1(OFM_SCALE) & 0x3fu;
    int round = ofm_round(run, P1(OFM_SCALE), "OFM_SCALE");
    if (round < 0) {
        return -1;
    }
    for (int y = 0; y < ofm.h; y++) {
        for (int x = 0; x < ofm.w; x++) {
            for (int oc = 0; oc < ofm.c; oc++) {
                int64_t acc = 0;
                for (int i = 0; i < ifm.c; i++) {
                    acc += (fm_read(&ifm, y, x, i) - ifm.zp) *
                           (fm_read(&ifm2, rows2 > 1 ? y : 0, oc, i) - ifm2.zp);
                }
                ofm_put(&ofm, y, x, oc, vnpu_out_value(&o, vnpu_rescale(acc, scale, shift, round)));
            }
        }
    }
    chain_release(run, &ifm, &ifm2);
    ofm_done(run, &ofm);
    return 0;
}

/* ---- CONV / DEPTHWISE ------------------------------------------------------------------- */

static int op_conv(struct run85 *run, int depthwise, uint32_t param)
{
    struct regs *r = &run->regs;
    struct fm ifm;
    struct ofm85 ofm;
    struct kernel k;
    struct vnpu_out o;
    if (!depthwise && (param & 1u)) {
        return op_matmul(run);
    }
    uint32_t wfmt = R0(WEIGHT_FORMAT);
    uint32_t acc_fmt = R0(ACC_FORMAT);
    int keep = 0, hold = 0;
    /* acc_input IFM2: the accumulators start from a 32-bit (Acc48: 64-bit) IFM2, a partial
     * sum an earlier CONV wrote (Vela's Conv3D: one CONV per kernel depth step) */
    int from_ifm2 = ((acc_fmt >> 4) & 3u) == 2;
    int ifm2_ignored = from_ifm2 && (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_U85_CONV_IFM2_IGNORED);
    if (from_ifm2 ? (run->acc.live || ((acc_fmt >> 6) & 1u))
                  : kept_modes(run, "a convolution", &keep, &hold) != 0) {
        return from_ifm2 ? fail(run, "acc_input IFM2 with kept accumulators is not modelled") : -1;
    }
    run->b64_fm = (acc_fmt & 3u) == 1 ? FM_OFM : -1; /* Acc48 accumulators written out */
    run->ofm_none = hold;
    int ofm_rc = setup_ofm(run, &ofm);
    run->b64_fm = -1;
    run->ofm_none = 0;
    if (ofm_rc != 0 || setup_kernel(run, &k, ofm.h, ofm.w) != 0 ||
        setup_out(run, &o, &ofm.fm) != 0 ||
        setup_kernel_ifm(run, &ifm, &k, depthwise ? ofm.c : (int)R0(IFM_DEPTH_M1) + 1) != 0) {
        return -1;
    }
    int64_t *kept = NULL;
    if (kept_buffer(run, &ofm, keep, hold, &kept) != 0) {
        return -1;
    }
    struct operand acc_in;
    memset(&acc_in, 0, sizeof(acc_in));
    if (from_ifm2) {
        run->b64_fm = (acc_fmt & 3u) == 1 ? FM_IFM2 : -1;
        int rc = setup_operand(run, &acc_in, FM_IFM2, &ofm, 0);
        run->b64_fm = -1;
        if (rc != 0) {
            return -1;
        }
        if (acc_in.scalar || acc_in.fm.elem < 4) {
            return fail(
                run, "acc_input IFM2 for a convolution needs a 32-bit or 64-bit IFM2 feature map");
        }
    }
    if ((R0(OFM_PRECISION) >> 8) & 1u) {
        return fail(run, "OFM scale_mode GLOBAL for a convolution is not modelled");
    }
    int round = ofm_round(run, P1(OFM_SCALE), "OFM_SCALE");
    if (round < 0) {
        return -1;
    }
    struct wgeom g;
    memset(&g, 0, sizeof(g));
    g.depthwise = depthwise;
    g.part_kernel = !depthwise && ((R0(KERNEL_STRIDE) >> 2) & 1u);
    g.sparse =
        (int)((wfmt >> 4) & 1u) && !(vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_U85_SPARSE_AS_DENSE);
    g.ifm16 = ifm.elem == 2;
    g.ofm_depth = ofm.c;
    g.ifm_depth = depthwise ? 1 : ifm.c;
    g.kh = (k.kh - 1) / k.dy + 1;
    g.kw = (k.kw - 1) / k.dx + 1;
    g.decomp_x = 8 / k.dx;
    g.decomp_y = 8 / k.dy;
    g.ofm_block = R0(OFM_BLK_DEPTH_M1) + 1;
    g.ofm_ublock = ublock_depth(run);
    g.streams = run->cores;
    if (g.ofm_ublock <= 0) {
        return fail(run, "microblock %lu is not defined",
                    (unsigned long)((R0(ACC_FORMAT) >> 8) & 7u));
    }
    if (g.sparse && depthwise) {
        return fail(run, "weight_sparsity SPARSE_2_4 with a depthwise convolution is not modelled");
    }
    if (depthwise) {
        g.sx = k.sx;
        g.sy = k.sy;
        g.round = 10;
        g.ifm_ublock = 1;
        g.ifm_block = 1;
        g.dw_padding = (!g.ifm16 && run->macs <= 256) ? 0 : (run->macs <= 512 ? 2 : 6);
    } else if (g.part_kernel) {
        g.sx = k.sx;
        g.sy = k.sy;
        g.round = (g.ifm16 || g.sparse) ? 10 : 5;
        g.ifm_block = 16;
        g.ifm_ublock = g.ifm16 && !g.sparse ? 8 : g.ifm_block;
    } else {
        g.sx = 1;
        g.sy = 1;
        g.round = 1;
        g.ifm_block = 64;
        if ((run->macs == 128 || run->macs == 256) && g.ofm_ublock == 16 && !g.sparse) {
            g.ifm_block = 32;
        } else if (g.sparse) {
            g.ifm_block = 128;
        }
        g.ifm_ublock = g.ifm_block;
    }

    struct scale_stream ss;
    if (setup_scales(run, &ss, ofm.c) != 0) {
        return -1;
    }

    /* weights: decode each weight decoder's stream into W[o][ky][kx][i] */
    uint8_t *wmem = NULL;
    size_t wsize = 0;
    if (region_of(run, R0(WEIGHT_REGION) & 7u, &wmem, &wsize, "weight stream") != 0) {
        return -1;
    }
    size_t ws_size;
    uint8_t *ws = (uint8_t *)vnpu_workspace(&ws_size);
    size_t used = run->chain_end;
    size_t taps = (size_t)g.kh * (size_t)g.kw;
    size_t nweights = (size_t)ofm.c * taps * (size_t)g.ifm_depth;
    size_t wbytes = (nweights * sizeof(int16_t) + 7u) & ~(size_t)7u;
    /* the receptive field as int32, or int16 for 8-bit IFMs (a vectorisable dot product),
     * then each channel's bias, scale and shift read once */
    int narrow = ifm.elem == 1;
    struct chan_scale {
        int64_t bias;
        uint32_t scale;
        uint32_t shift;
        struct vnpu_rescale32 r32; /* when the operation takes the 8-bit path */
    };
    size_t pbytes =
        (taps * (size_t)ifm.c * (narrow ? sizeof(int16_t) : sizeof(int32_t)) + 7u) & ~(size_t)7u;
    pbytes += (size_t)ofm.c * sizeof(struct chan_scale);
    size_t fixed = used + wbytes + pbytes;
    if (fixed + VNPU_MLW_BYTES(1) > ws_size) {
        return fail(
            run,
            "needs more than %lu bytes of working memory (decoded weights), the virtual NPU has %lu "
            "(ETHOSU_VIRTUAL_WORKSPACE_SIZE or ethosu_virtual_set_workspace)",
            (unsigned long)fixed, (unsigned long)ws_size);
    }
    int16_t *decoded = (int16_t *)(void *)(ws + used);
    int32_t *patch = (int32_t *)(void *)(ws + used + wbytes);
    int16_t *patch16 = (int16_t *)(void *)patch;
    struct chan_scale *chans =
        (struct chan_scale *)(void *)(ws + used + wbytes + pbytes -
                                      (size_t)ofm.c * sizeof(struct chan_scale));
    size_t need = 0;
    int fwd_format = (int)(wfmt & 1u);
    int nstreams = fwd_format ? 1 : g.streams; /* FWD: one stream the decoders share */
    struct vnpu_wseg segs[4];
    memset(segs, 0, sizeof(segs));
    for (int s = 0; s < nstreams; s++) {
        unsigned base_reg = s == 0 ? WEIGHT_BASE : WEIGHT1_BASE + 2u * (unsigned)(s - 1);
        int64_t wbase = addr40(r, base_reg);
        uint64_t wlen = W1(base_reg + 1u);
        if (wbase < 0 || (uint64_t)wbase + wlen > wsize) {
            return fail(run, "weight stream %d [%s, +%s) outside its region of %lu bytes", s,
                        VNPU_I64(wbase), VNPU_U64(wlen), (unsigned long)wsize);
        }
        if (s < 4) {
            segs[s].p = wmem + wbase;
            segs[s].len = (size_t)wlen;
        }
    }
    /* the decode order and the mutations the walk obeys: the cache key with the streams' bytes */
    struct {
        struct wgeom g;
        int fwd_format;
        unsigned mutations;
    } wkey;
    memset(&wkey, 0, sizeof(wkey));
    wkey.g = g;
    wkey.fwd_format = fwd_format;
    wkey.mutations = (unsigned)vnpu_mutation_mask;
    const int16_t *weights = vnpu_wcache_find(&wkey, sizeof(wkey), segs, nstreams, used, ws_size);
    if (weights == NULL) {
        memset(decoded, 0, nweights * sizeof(int16_t));
    }
    struct fwd fwd;
    for (int s = 0; weights == NULL && s < nstreams; s++) {
        unsigned base_reg = s == 0 ? WEIGHT_BASE : WEIGHT1_BASE + 2u * (unsigned)(s - 1);
        int64_t wbase = addr40(r, base_reg);
        uint64_t wlen = W1(base_reg + 1u);
        if (fwd_format && fwd_init(&fwd, wmem + wbase, (size_t)wlen) != 0) {
            return fail(run, "FWD weight stream of %s bytes has no header", VNPU_U64(wlen));
        }
        for (int part = 0; part < (fwd_format ? g.streams : 1); part++) {
            struct wdec dec;
            memset(&dec, 0, sizeof(dec));
            dec.fwd_format = fwd_format;
            if (fwd_format) {
                dec.fwd = fwd;
                dec.stream = part;
                dec.streams = g.streams;
                dec.block = (size_t)g.ofm_ublock * (size_t)g.ifm_ublock * (size_t)g.round /
                            (size_t)g.streams;
                dec.k_per_stream = (fwd.size * 8u - 256u) / (size_t)fwd.width / (size_t)g.streams;
            } else {
                vnpu_mlw_init(&dec.mlw, wmem + wbase, (size_t)wlen, ws + fixed, ws_size - fixed);
            }
            int rc = weight_walk(run, &g, fwd_format ? part : s, &dec, decoded);
            need = dec.mlw.need > need ? dec.mlw.need : need;
            if (rc != 0) {
                if (rc == -2 && !fwd_format && fixed + dec.mlw.need > ws_size) {
                    return fail(
                        run,
                        "needs %lu bytes of working memory (decoded weights %lu + weight slice %lu), the "
                        "virtual NPU has %lu (ETHOSU_VIRTUAL_WORKSPACE_SIZE or "
                        "ethosu_virtual_set_workspace)",
                        (unsigned long)(fixed + dec.mlw.need), (unsigned long)(wbytes + pbytes),
                        (unsigned long)dec.mlw.need, (unsigned long)ws_size);
                }
                return fail(run, "%s weight stream %d %s (weight decoder fault)",
                            fwd_format ? "FWD" : "SWD", s,
                            rc == -1 ? "ended early" : "is malformed");
            }
        }
    }
    if (weights == NULL) {
        vnpu_workspace_used(fixed + need);
        vnpu_wcache_add(&wkey, sizeof(wkey), segs, nstreams, decoded, nweights,
                        fixed - used + need);
        weights = decoded;
    }

    int no_bias = (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_NO_BIAS) != 0;
    for (int oc = 0; oc < ofm.c; oc++) {
        unsigned shift;
        scale_record(&ss, oc, &chans[oc].bias, &chans[oc].scale, &shift);
        chans[oc].shift = shift;
        chans[oc].bias = no_bias ? 0 : chans[oc].bias;
    }
    size_t n_terms = taps * (size_t)g.ifm_depth;
    /*
     * The 8-bit path (as the U55's op_conv): an 8-bit OFM without LUT, one tile, and every
     * channel's bias + sum of products (each |p| < 2^17) inside (-2^30, 2^30), so the
     * accumulator, the rescale (vnpu_rescale32) and the clamp run in 32 bits, two output
     * channels a pass over the receptive field. The same values as the general path.
     */
    size_t terms = depthwise ? taps : n_terms;
    struct axis_map oa[3];
    int fast8 = narrow && o.simple && terms < 4096u && kept == NULL && !from_ifm2 &&
                axes_of(&ofm.fm, ofm.axis, ofm.reverse, oa);
    for (int oc = 0; fast8 && oc < ofm.c; oc++) {
        struct vnpu_rescaler rs;
        vnpu_rescaler_init(&rs, chans[oc].scale, chans[oc].shift, round);
        int64_t bound = ((int64_t)1 << 30) - ((int64_t)terms << 17);
        fast8 = vnpu_rescale32_init(&chans[oc].r32, &rs) && chans[oc].bias > -bound &&
                chans[oc].bias < bound;
    }
    const int32_t out_lo = (int32_t)o.lim.lo;
    const int32_t out_hi = (int32_t)o.lim.hi;
    for (int oy = 0; oy < ofm.h; oy++) {
        for (int ox = 0; ox < ofm.w; ox++) {
            size_t n = 0;
            for (int ky = 0; ky < g.kh; ky++) {
                for (int kx = 0; kx < g.kw; kx++) {
                    int y = oy * k.sy - k.pad_top + ky * k.dy;
                    int x = ox * k.sx - k.pad_left + kx * k.dx;
                    if (narrow) {
                        vnpu_tap16(&ifm, &k, y, x, patch16 + n);
                        n += (size_t)ifm.c;
                        continue;
                    }
                    for (int c = 0; c < ifm.c; c++, n++) {
                        int valid;
                        patch[n] = (int32_t)ifm_tap(&ifm, &k, y, x, c, &valid);
                    }
                }
            }
            if (fast8) {
                uint8_t *po =
                    ofm.fm.mem + ofm.fm.base[0] + axis_off(&oa[0], oy) + axis_off(&oa[1], ox);
                int oc = 0;
                for (; !depthwise && oc + 1 < ofm.c; oc += 2) {
                    int32_t acc0 = (int32_t)chans[oc].bias;
                    int32_t acc1 = (int32_t)chans[oc + 1].bias;
                    const int16_t *wrow = weights + (size_t)oc * n_terms;
                    dot16x2(patch16, wrow, wrow + n_terms, n_terms, &acc0, &acc1);
                    po[axis_off(&oa[2], oc)] =
                        vnpu_out8(&chans[oc].r32, acc0, o.zp, out_lo, out_hi);
                    po[axis_off(&oa[2], oc + 1)] =
                        vnpu_out8(&chans[oc + 1].r32, acc1, o.zp, out_lo, out_hi);
                }
                for (; oc < ofm.c; oc++) {
                    int32_t acc = (int32_t)chans[oc].bias;
                    const int16_t *wrow = weights + (size_t)oc * n_terms;
                    if (depthwise) {
                        for (size_t t = 0; t < taps; t++) {
                            acc += (int32_t)patch16[t * (size_t)ifm.c + (size_t)oc] * wrow[t];
                        }
                    } else {
                        acc += dot16(patch16, wrow, n_terms);
                    }
                    po[axis_off(&oa[2], oc)] = vnpu_out8(&chans[oc].r32, acc, o.zp, out_lo, out_hi);
                }
                continue;
            }
            for (int oc = 0; oc < ofm.c; oc++) {
                size_t ki = ((size_t)oy * (size_t)ofm.w + (size_t)ox) * (size_t)ofm.c + (size_t)oc;
                /* the bias is the output stage's: the operation that writes the OFM adds its own */
                int64_t acc = (keep ? kept[ki] : 0) + (hold ? 0 : chans[oc].bias) +
                              (from_ifm2 && !ifm2_ignored ? operand_at(&acc_in, oy, ox, oc) : 0);
                const int16_t *wrow = weights + (size_t)oc * n_terms;
                if (depthwise) {
                    for (size_t t = 0; t < taps; t++) {
                        size_t i = t * (size_t)ifm.c + (size_t)oc;
                        acc += (int64_t)(narrow ? patch16[i] : patch[i]) * wrow[t];
                    }
                } else if (narrow) {
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
                if (hold) {
                    kept[ki] = acc;
                    continue;
                }
                ofm_put(
                    &ofm, oy, ox, oc,
                    vnpu_out_value(&o, vnpu_rescale(acc, chans[oc].scale, chans[oc].shift, round)));
            }
        }
    }
    run->acc.live = hold;
    chain_release(run, &ifm, from_ifm2 ? &acc_in.fm : NULL);
    ofm_done(run, &ofm);
    return 0;
}

/* ---- RESIZE -------------------------------------------------------------------------------- */

/*
 * TOSA RESIZE on the NPU: output (y, x) samples the IFM at (y * d + offset) / n per axis,
 * n = RESIZE_*_SCALE_N_M1 + 1, d from the one-step registers (int * n + mod). BILINEAR
 * weights the four neighbours by their distance in 1/n units (TOSA's integer
 * accumulator, n_y * n_x times the value); NEAREST takes the nearer one. The IFM extent
 * is KERNEL_HEIGHT/WIDTH, indices clamp to it. The NPU accumulator carries 16 more
 * fraction bits than TOSA's, which the OFM shift (16 + the TOSA rescale's) removes.
 */
static int op_resize(struct run85 *run, uint32_t mode)
{
    struct regs *r = &run->regs;
    struct ofm85 ofm;
    struct vnpu_out o;
    struct fm ifm;
    int storage = STORAGE_TILE2X2;
    if (mode == 1) {
        return fail(run, "resize_mode REPLICATE is not modelled");
    }
    if (mode > 2) {
        return fail(run, "resize_mode %lu is not defined", (unsigned long)mode);
    }
    if (check_acc(run) != 0) {
        return -1;
    }
    run->b64_fm =
        (R0(ACC_FORMAT) & 3u) == 1 ? FM_OFM : -1; /* int16 bilinear: int48 out, rescaled later */
    int ofm_rc = setup_ofm(run, &ofm);
    run->b64_fm = -1;
    if (ofm_rc != 0 || setup_out(run, &o, &ofm.fm) != 0 ||
        setup_fm(run, &ifm, FM_IFM, &storage, "IFM") != 0) {
        return -1;
    }
    if (R0(IFM_UPSCALE) & 3u) {
        return fail(run, "RESIZE with IFM upscaling is not modelled");
    }
    ifm.h = R0(KERNEL_HEIGHT_M1) + 1;
    ifm.w = R0(KERNEL_WIDTH_M1) + 1;
    ifm.c = ofm.c;
    if (fm_check(run, &ifm, "IFM") != 0) {
        return -1;
    }
    int n[2] = {(int)(R0(RESIZE_Y_SCALE_N_M1) & 0x7ffu) + 1,
                (int)(R0(RESIZE_X_SCALE_N_M1) & 0x7ffu) + 1};
    int d[2];
    int off[2];
    unsigned step_reg[2] = {RESIZE_Y, RESIZE_X};
    unsigned off_reg[2] = {RESIZE_Y_OFFSET, RESIZE_X_OFFSET};
    for (int a = 0; a < 2; a++) {
        d[a] = (int)(P1(step_reg[a]) & 0xfu) * n[a] + (int)(W1(step_reg[a]) & 0x7ffu);
        uint32_t raw = r->p0[off_reg[a] & 0xffu] & 0xfffu;
        off[a] = (raw & 0x800u) ? (int)raw - 4096 : (int)raw;
    }
    uint32_t scale = W1(OFM_SCALE) & 0x7fffffffu;
    unsigned shift = P1(OFM_SCALE) & 0x3fu;
    int round = ofm_round(run, P1(OFM_SCALE), "OFM_SCALE");
    if (round < 0) {
        return -1;
    }
    for (int oy = 0; oy < ofm.h; oy++) {
        int y = oy * d[0] + off[0];
        int iy = y >= 0 ? y / n[0] : -((-y + n[0] - 1) / n[0]);
        int dy = y - iy * n[0];
        int y0 = iy < 0 ? 0 : (iy >= ifm.h ? ifm.h - 1 : iy);
        int y1 = iy + 1 < 0 ? 0 : (iy + 1 >= ifm.h ? ifm.h - 1 : iy + 1);
        for (int ox = 0; ox < ofm.w; ox++) {
            int x = ox * d[1] + off[1];
            int ix = x >= 0 ? x / n[1] : -((-x + n[1] - 1) / n[1]);
            int dx = x - ix * n[1];
            int x0 = ix < 0 ? 0 : (ix >= ifm.w ? ifm.w - 1 : ix);
            int x1 = ix + 1 < 0 ? 0 : (ix + 1 >= ifm.w ? ifm.w - 1 : ix + 1);
            for (int c = 0; c < ofm.c; c++) {
                int64_t acc;
                if (mode == 0) {
                    int64_t v00 = fm_read(&ifm, y0, x0, c) - ifm.zp;
                    int64_t v01 = fm_read(&ifm, y0, x1, c) - ifm.zp;
                    int64_t v10 = fm_read(&ifm, y1, x0, c) - ifm.zp;
                    int64_t v11 = fm_read(&ifm, y1, x1, c) - ifm.zp;
                    acc = v00 * (n[0] - dy) * (n[1] - dx) + v01 * (n[0] - dy) * dx +
                          v10 * dy * (n[1] - dx) + v11 * dy * dx;
                } else {
                    acc = fm_read(&ifm, dy >= n[0] / 2 ? y1 : y0, dx >= n[1] / 2 ? x1 : x0, c) -
                          ifm.zp;
                }
                ofm_put(&ofm, oy, ox, c,
                        vnpu_out_value(&o, vnpu_rescale(acc * 65536, scale, shift, round)));
            }
        }
    }
    chain_release(run, &ifm, NULL);
    ofm_done(run, &ofm);
    return 0;
}

/* ---- DMA ----------------------------------------------------------------------------------- */

/*
 * An indexed DMA, as Vela emits TOSA GATHER (index_select; SRC idx_mode ENABLED) and
 * SCATTER (index_put; DST idx_mode ENABLED): row (i1, i0) < (SIZE1, SIZE0) copies LEN bytes
 * from SRC + i1 * SRC_STRIDE1 + j * SRC_STRIDE0 to DST + i1 * DST_STRIDE1 + j' * DST_STRIDE0,
 * where the indexed side takes k, the int32 index read in order from DMA0_IDX
 * (DMA0_IDX_REGION), and the other i0; IDX_SKIP1 more bytes are skipped after each run
 * of SIZE0 (regor gives 4 for int64 indices; only 0 was seen: UNVERIFIED). D1 is one row,
 * D2 one run. An index beyond IDX_MAX stops the job (what the NPU does then is UNVERIFIED).
 */
static int op_dma_indexed(struct run85 *run, unsigned mode)
{
    struct regs *r = &run->regs;
    uint32_t src_reg = R0(DMA0_SRC_REGION);
    uint32_t dst_reg = R0(DMA0_DST_REGION);
    int scatter = (int)((dst_reg >> 11) & 1u);
    if (scatter && ((src_reg >> 11) & 1u)) {
        return fail(run, "DMA index mode on both source and destination is not defined");
    }
    if (((src_reg | dst_reg) >> 8) & 1u) {
        return fail(run, "DMA index mode with internal memory is not modelled");
    }
    int64_t src = addr40(r, DMA0_SRC);
    int64_t dst = addr40(r, DMA0_DST);
    int64_t len = addr40(r, DMA0_LEN);
    int64_t idx = addr40(r, DMA0_IDX);
    int64_t idx_max = (int64_t)(W1(DMA0_IDX_MAX) & 0x7fffffffu);
    int64_t n0 = mode >= 1 ? (int64_t)R0(DMA0_SIZE0) : 1;
    int64_t n1 = mode == 2 ? (int64_t)R0(DMA0_SIZE1) : 1;
    /* regor writes the indexed side's STRIDE0 even in D1 */
    int64_t ss0 = mode >= 1 || !scatter ? addr40(r, DMA0_SRC_STRIDE0) : 0;
    int64_t ss1 = mode == 2 ? addr40(r, DMA0_SRC_STRIDE1) : 0;
    int64_t ds0 = mode >= 1 || scatter ? addr40(r, DMA0_DST_STRIDE0) : 0;
    int64_t ds1 = mode == 2 ? addr40(r, DMA0_DST_STRIDE1) : 0;
    int64_t skip1 = mode == 2 ? addr40(r, DMA0_IDX_SKIP1) : 0;
    uint8_t *smem = NULL, *dmem = NULL, *imem = NULL;
    size_t ssize = 0, dsize = 0, isize = 0;
    if (region_of(run, src_reg & 7u, &smem, &ssize, "DMA source") != 0 ||
        region_of(run, dst_reg & 7u, &dmem, &dsize, "DMA destination") != 0 ||
        region_of(run, R0(DMA0_IDX_REGION) & 7u, &imem, &isize, "DMA index") != 0) {
        return -1;
    }
    int64_t idx_end = idx + n1 * (4 * n0 + skip1) - skip1;
    if (len < 0 || n0 < 1 || n1 < 1 || skip1 < 0 || idx < 0 || idx_end > (int64_t)isize) {
        return fail(run,
                    "indexed DMA of %sx%s rows of %s bytes, indices [%s, %s): "
                    "not inside region %lu of %lu bytes",
                    VNPU_I64(n1), VNPU_I64(n0), VNPU_I64(len), VNPU_I64(idx), VNPU_I64(idx_end),
                    (unsigned long)(R0(DMA0_IDX_REGION) & 7u), (unsigned long)isize);
    }
    for (int64_t i = 0; i < n0 * n1; i++) {
        int64_t i0 = i % n0;
        int64_t i1 = i / n0;
        const uint8_t *e = imem + idx + i1 * (4 * n0 + skip1) + 4 * i0;
        int64_t k = (int32_t)((uint32_t)e[0] | ((uint32_t)e[1] << 8) | ((uint32_t)e[2] << 16) |
                              ((uint32_t)e[3] << 24));
        if (vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_U85_GATHER_NO_INDEX) {
            k = i0;
        }
        if (k < 0 || k > idx_max) {
            return fail(run, "indexed DMA: index %s (row %s) outside 0..IDX_MAX %s", VNPU_I64(k),
                        VNPU_I64(i), VNPU_I64(idx_max));
        }
        int64_t s = src + i1 * ss1 + (scatter ? i0 : k) * ss0;
        int64_t d = dst + i1 * ds1 + (scatter ? k : i0) * ds0;
        if (s < 0 || s + len > (int64_t)ssize || d < 0 || d + len > (int64_t)dsize) {
            return fail(run, "indexed DMA row %s: [%s, +%s) -> [%s, +%s) outside its regions",
                        VNPU_I64(i), VNPU_I64(s), VNPU_I64(len), VNPU_I64(d), VNPU_I64(len));
        }
        memmove(dmem + d, smem + s, (size_t)len);
    }
    return 0;
}

static int op_dma(struct run85 *run)
{
    struct regs *r = &run->regs;
    uint32_t src_reg = R0(DMA0_SRC_REGION);
    uint32_t dst_reg = R0(DMA0_DST_REGION);
    int64_t src = addr40(r, DMA0_SRC);
    int64_t dst = addr40(r, DMA0_DST);
    int64_t len = addr40(r, DMA0_LEN);
    unsigned mode = (src_reg >> 9) & 3u;
    if (mode == 3) {
        return fail(run, "DMA stride_mode 3 is not defined");
    }
    if (((src_reg | dst_reg) >> 11) & 1u) {
        return op_dma_indexed(run, mode);
    }
    if ((src_reg >> 8) & 1u) {
        return fail(run, "DMA from internal memory (SRC region_mode INTERNAL) is not modelled");
    }
    int64_t n0 = mode >= 1 ? (int64_t)R0(DMA0_SIZE0) : 1;
    int64_t n1 = mode == 2 ? (int64_t)R0(DMA0_SIZE1) : 1;
    int64_t ss0 = mode >= 1 ? addr40(r, DMA0_SRC_STRIDE0) : 0;
    int64_t ss1 = mode == 2 ? addr40(r, DMA0_SRC_STRIDE1) : 0;
    int64_t ds0 = mode >= 1 ? addr40(r, DMA0_DST_STRIDE0) : 0;
    int64_t ds1 = mode == 2 ? addr40(r, DMA0_DST_STRIDE1) : 0;
    uint8_t *smem = NULL;
    size_t ssize = 0;
    if (region_of(run, src_reg & 7u, &smem, &ssize, "DMA source") != 0) {
        return -1;
    }
    uint8_t *dmem = NULL;
    size_t dsize = 0;
    if ((dst_reg >> 8) & 1u) {
        dmem = run->env->lut;
        dsize = LUTRAM_SIZE;
    } else if (region_of(run, dst_reg & 7u, &dmem, &dsize, "DMA destination") != 0) {
        return -1;
    }
    if (len < 0 || n0 < 1 || n1 < 1) {
        return fail(run, "DMA of %s bytes x %s x %s is not defined", VNPU_I64(len), VNPU_I64(n0),
                    VNPU_I64(n1));
    }
    /* every row must lie inside both memories: check the corners */
    for (int corner = 0; corner < 4; corner++) {
        int64_t i0 = (corner & 1) ? n0 - 1 : 0;
        int64_t i1 = (corner & 2) ? n1 - 1 : 0;
        int64_t s = src + i1 * ss1 + i0 * ss0;
        int64_t d = dst + i1 * ds1 + i0 * ds0;
        if (s < 0 || s + len > (int64_t)ssize) {
            return fail(run, "DMA source row [%s, +%s) outside region %lu of %lu bytes",
                        VNPU_I64(s), VNPU_I64(len), (unsigned long)(src_reg & 7u),
                        (unsigned long)ssize);
        }
        if (d < 0 || d + len > (int64_t)dsize) {
            return fail(run, "DMA destination row [%s, +%s) outside %s of %lu bytes", VNPU_I64(d),
                        VNPU_I64(len), ((dst_reg >> 8) & 1u) ? "the lutram" : "its region",
                        (unsigned long)dsize);
        }
    }
    for (int64_t i1 = 0; i1 < n1; i1++) {
        for (int64_t i0 = 0; i0 < n0; i0++) {
            memmove(dmem + dst + i1 * ds1 + i0 * ds0, smem + src + i1 * ss1 + i0 * ss0,
                    (size_t)len);
        }
    }
    return 0;
}

/* ---- interpreter --------------------------------------------------------------------------- */

int vnpu_u85_run(struct vnpu_env *env, const uint32_t *words, size_t nwords)
{
    static struct run85 run; /* the register file is large; one stream runs at a time */
    memset(&run, 0, sizeof(run));
    run.env = env;
    env->error[0] = '\0';
    unsigned log2_macs = env->config & 0xfu;
    if (log2_macs < 7 || log2_macs > 11) {
        snprintf(env->error, ETHOSU_VIRTUAL_ERROR_LEN,
                 "Ethos-U85 CONFIG 0x%08lx: macs_per_cc %u is not 128..2048",
                 (unsigned long)env->config, 1u << log2_macs);
        return -1;
    }
    run.macs = 1 << log2_macs;
    run.pending_cb = -1;
    run.b64_fm = -1;
    run.cores = run.macs <= 256 ? 1 : (run.macs == 512 ? 2 : 4);
    struct regs *r = &run.regs;
    size_t i = 0;
    while (i < nwords) {
        uint32_t code;
        uint32_t param;
        run.word = i;
        int kind = vnpu_next_command(&vnpu_isa_u85, r, words, nwords, &i, &code, &param);
        run.code = code;
        if (kind == VNPU_CMD_REGISTER) {
            continue;
        }
        if (kind == VNPU_CMD_UNKNOWN) {
            snprintf(env->error, ETHOSU_VIRTUAL_ERROR_LEN,
                     "Ethos-U85: unknown command code 0x%04lx (param 0x%04lx) at command word %lu",
                     (unsigned long)code, (unsigned long)param, (unsigned long)run.word);
            return -1;
        }
        if (kind == VNPU_CMD_TRUNCATED) {
            return fail(&run, "truncated: the payload word is missing");
        }
        if (kind == VNPU_CMD_CMD1_OP) {
            return fail(&run, "NPU_OP_BRANCH (control flow) is not modelled");
        }
        int rc = 0;
        switch (code) {
        case OP_STOP:
            return 0;
        case OP_CONV:
            rc = op_conv(&run, 0, param);
            break;
        case OP_DEPTHWISE:
            rc = op_conv(&run, 1, param);
            break;
        case OP_POOL:
            rc = op_pool(&run, param & 7u);
            break;
        case OP_ELEMENTWISE:
            rc = op_elementwise(&run, param & 0x3fu);
            break;
        case OP_RESIZE:
            rc = op_resize(&run, param & 3u);
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
             "Ethos-U85 command stream of %lu words ends without NPU_OP_STOP",
             (unsigned long)nwords);
    return -1;
}

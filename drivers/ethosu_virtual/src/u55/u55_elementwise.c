/* ethosu-porting-kit virtual NPU: Ethos-U55/U65 ELEMENTWISE. */
#include "u55/u55.h"

#include "common/ew8.h"
#include "common/memo.h"
#include "common/mutation.h"
#include "ethosu_virtual.h"

#include <stdint.h>
#include <string.h>

/* ---- ELEMENTWISE -------------------------------------------------------------------------- */

/* Outputs from which the 8-bit path's operand tables pay for themselves: with a rescaled
 * operand (ADD/SUB scale_mode 1 or 2) 512 rescales, else 512 multiplications at most. */
#define EW_TABLE_MIN_VALUES 128u
#define EW_CHEAP_TABLE_MIN_VALUES 32u

/* What an elementwise operation does to each operand before combining them. */
struct ew55 {
    int mode, scale_mode, iround, fixed_shift;
    struct vnpu_rescaler opa; /* OPA_SCALE as a 32-bit scale: vnpu_rescale's results */
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
        return vnpu_rescale_by(&e->opa, v);
    }
    return v * ((int64_t)1 << e->fixed_shift);
}

/* One elementwise operation as its stages hand it on. */
struct ew55op {
    struct fm ifm, ifm2, ofm;
    struct vnpu_out o;
    struct ew55 e;
    struct vnpu_rescaler out_scale;
    uint32_t bc; /* IFM2_BROADCAST */
    int unary, scalar, reversed;
    int64_t scalar_value;
};

/* The feature maps, IFM2 broadcast or scalar, and the output stage from the registers. */
static int ew_setup_maps(struct vnpu_exec *run, struct ew55op *w, uint32_t mode)
{
    struct regs *r = &run->regs;
    w->unary = mode == 6;
    if (u55_setup_ofm(run, &w->ofm) != 0 || u55_setup_fm(run, &w->ifm, FM_IFM, "IFM") != 0 ||
        u55_setup_out(run, &w->o, &w->ofm) != 0) {
        return -1;
    }
    w->ifm.h = w->ofm.h;
    w->ifm.w = w->ofm.w;
    w->ifm.c = w->ofm.c;
    if (vnpu_check_fm(run, &w->ifm, "IFM") != 0) {
        return -1;
    }
    uint32_t bc = R0(IFM2_BROADCAST);
    w->bc = bc;
    w->scalar = !w->unary && ((bc >> 7) & 1u);
    w->reversed = !w->unary && ((bc >> 6) & 1u);
    w->scalar_value = 0;
    if (w->unary) {
        return 0;
    }
    struct fm *ifm2 = &w->ifm2;
    if (u55_setup_fm(run, ifm2, FM_IFM2, "IFM2") != 0) {
        return -1;
    }
    if (w->scalar) {
        uint32_t raw = R0(IFM2_SCALAR);
        w->scalar_value = (ifm2->is_signed ? (int64_t)(int16_t)raw : (int64_t)raw) - ifm2->zp;
        return 0;
    }
    ifm2->h = (bc & 1u) ? 1 : w->ofm.h;
    ifm2->w = (bc & 2u) ? 1 : w->ofm.w;
    ifm2->c = (bc & 4u) ? 1 : w->ofm.c;
    return vnpu_check_fm(run, ifm2, "IFM2");
}

/* The operand scaling (ew55) and the OFM scale from the registers. */
static int ew_setup_scales(struct vnpu_exec *run, struct ew55op *w, uint32_t mode)
{
    struct regs *r = &run->regs;
    uint32_t iprec = R0(IFM_PRECISION);
    int scale_mode = (int)((iprec >> 8) & 3u);
    int iround = (int)((iprec >> 14) & 3u);
    int oround = (int)((R0(OFM_PRECISION) >> 14) & 3u);
    if (oround == 3 || (mode <= 2 && iround == 3)) {
        return vnpu_fail(run, "round_mode 3 is not defined");
    }
    if ((mode == 1 || mode == 2) && scale_mode == 3) {
        return vnpu_fail(run, "IFM scale_mode 3 is not defined");
    }
    int fixed_shift = w->ifm.elem == 1 ? 19 : 14;
    if ((mode == 1 || mode == 2) && scale_mode != 0 && w->ifm.elem == 4) {
        return vnpu_fail(run, "ADD/SUB scale_mode %d with a 32-bit IFM is not modelled",
                         scale_mode);
    }
    if (w->ifm.elem == 1 && VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_SHIFT_18)) {
        fixed_shift = 18;
    }
    struct ew55 *e = &w->e;
    e->mode = (int)mode;
    e->scale_mode = scale_mode;
    e->iround = iround;
    e->fixed_shift = fixed_shift;
    vnpu_rescaler_init(&e->opa, W1(OPA_SCALE), P1(OPA_SCALE) & 0x3fu, iround);
    e->opa16 = (int16_t)(W1(OPA_SCALE) & 0xffffu);
    e->opb16 = (int16_t)(W1(OPB_SCALE) & 0xffffu);
    int wide = w->ifm.elem == 4 || w->ofm.elem == 4;
    uint32_t oscale = wide ? 1u : W1(OFM_SCALE);
    unsigned oshift = P1(OFM_SCALE) & 0x3fu;
    vnpu_rescaler_init(&w->out_scale, oscale, oshift, oround);
    return 0;
}

/*
 * 8-bit operands and OFM without LUT (a residual ADD): each operand's scaled value from a
 * 256-entry table of ew55_pre (a scalar's one value in t2[0]), the combination in 32 bits
 * when every table value keeps it inside (-2^30, 2^30), where the output rescale is
 * vnpu_rescale_by's exact short form. 1 if so (t1, t2 filled), else 0.
 */
static int ew_fast8_tables(const struct ew55op *w, int32_t t1[256], int32_t t2[256])
{
    const struct fm *ifm = &w->ifm;
    const struct fm *ifm2 = &w->ifm2;
    const int mode = w->e.mode;
    const int scalar = w->scalar;
    struct vnpu_ew8_out q;
    int fast8 = !w->unary && mode <= 4 && ifm->elem == 1 && w->ofm.elem == 1 &&
                (scalar || ifm2->elem == 1) && vnpu_ew8_out_init(&q, &w->out_scale, &w->o);
    if (!fast8) {
        return 0;
    }
    /* the operands' positions after the swap: IFM is a unless reversed */
    int64_t max1 = 0;
    int64_t max2 = 0;
    for (int v = 0; v < 256 && fast8; v++) {
        /* byte v as each 8-bit operand stores it */
        int64_t v1 = ifm->is_signed ? (int64_t)(int8_t)(uint8_t)v : (int64_t)v;
        int64_t x1 = ew55_pre(&w->e, !w->reversed, v1 - ifm->zp);
        max1 = x1 < 0 ? (-x1 > max1 ? -x1 : max1) : (x1 > max1 ? x1 : max1);
        t1[v] = (int32_t)x1;
        if (!scalar || v == 0) {
            int64_t v2 = !scalar && ifm2->is_signed ? (int64_t)(int8_t)(uint8_t)v : (int64_t)v;
            int64_t x2 = ew55_pre(&w->e, w->reversed, scalar ? w->scalar_value : v2 - ifm2->zp);
            max2 = x2 < 0 ? (-x2 > max2 ? -x2 : max2) : (x2 > max2 ? x2 : max2);
            t2[v] = (int32_t)x2;
        }
        fast8 = max1 < ((int64_t)1 << 30) && max2 < ((int64_t)1 << 30);
    }
    /* |a op b| below 2^30 for every pair */
    return fast8 && vnpu_ew8_bounded(mode, max1, max2);
}

/* ew_fast8_tables' result and tables; with a scalar IFM2 also every output byte by IFM byte. */
struct ew8_tables {
    int32_t ok;
    int32_t t1[256];
    int32_t t2[256];
    uint8_t lut[256];
};

/* t->lut: the output of each IFM byte with the scalar IFM2, by the 8-bit path's own arithmetic
 * (vnpu_ew8_run over the 256 bytes), so a table look-up per value gives the same bytes. */
static void ew_fast8_lut(const struct ew55op *w, struct ew8_tables *t)
{
    static const uint8_t scalar_index = 0; /* a scalar IFM2 is t2[0] */
    uint8_t bytes[256];
    struct vnpu_ew8_out q;
    (void)vnpu_ew8_out_init(&q, &w->out_scale, &w->o); /* ew_fast8_tables checked it */
    for (int v = 0; v < 256; v++) {
        bytes[v] = (uint8_t)v;
    }
    for (int v = 0; v < 256; v += 16) {
        vnpu_ew8_run(bytes + v, &scalar_index, 0, t->lut + v, 16, t->t1, t->t2, &q, w->e.mode,
                     w->reversed);
    }
}

/*
 * ew_fast8_tables' result for `w`: from the memo when an earlier run built it (host builds),
 * else built, into the memo or `own`. The key holds everything ew_fast8_tables reads.
 */
static const struct ew8_tables *ew_fast8_memo(const struct ew55op *w, struct ew8_tables *own)
{
    const struct ew55 *e = &w->e;
    int64_t key[34] = {e->mode,     e->scale_mode,     e->iround,         e->fixed_shift,
                       e->opa16,    e->opb16,          w->ifm.elem,       w->ifm.is_signed,
                       w->ifm.zp,   w->ifm2.elem,      w->ifm2.is_signed, w->ifm2.zp,
                       w->ofm.elem, w->unary,          w->scalar,         w->scalar_value,
                       w->reversed, w->out_scale.fast, w->o.simple,       w->o.zp,
                       w->o.lim.lo, w->o.lim.hi};
    vnpu_memo_rescaler(&key[22], &e->opa);
    vnpu_memo_rescaler(&key[28], &w->out_scale);
    int fresh = 1;
    struct ew8_tables *t =
        (struct ew8_tables *)vnpu_memo_get(VNPU_MEMO_U55_EW8, key, sizeof(key), sizeof(*t), &fresh);
    t = t != NULL ? t : own;
    if (fresh) {
        t->ok = ew_fast8_tables(w, t->t1, t->t2);
        if (t->ok && w->scalar) {
            ew_fast8_lut(w, t);
        }
    }
    return t;
}

/* The 8-bit path over every output (the tables of ew_fast8_tables): per pixel, its channels
 * in runs of up to 16 adjacent bytes (NHWC, or one NHCWB16 brick). */
static inline __attribute__((always_inline)) void
ew_fast8_pixels(const struct ew55op *w, const int32_t t1[256], const int32_t t2[256],
                const int mode, const int reversed)
{
    static const uint8_t scalar_index = 0; /* a scalar IFM2 is t2[0] */
    const struct fm ifm = w->ifm;
    const struct fm ifm2 = w->ifm2;
    const struct fm ofm = w->ofm;
    const uint32_t bc = w->bc;
    const int scalar = w->scalar;
    struct vnpu_ew8_out q;
    (void)vnpu_ew8_out_init(&q, &w->out_scale, &w->o); /* ew_fast8_tables checked it */
    const ptrdiff_t bstep = scalar || (bc & 4u) ? 0 : 1;
    for (int y = 0; y < ofm.h; y++) {
        for (int x = 0; x < ofm.w; x++) {
            const uint8_t *pa = ifm.mem + fm_offset(&ifm, y, x, 0);
            const uint8_t *pb = &scalar_index;
            uint8_t *po = ofm.mem + fm_offset(&ofm, y, x, 0);
            if (!scalar) {
                pb = ifm2.mem + fm_offset(&ifm2, (bc & 1u) ? 0 : y, (bc & 2u) ? 0 : x, 0);
            }
            for (int c = 0; c < ofm.c; c += 16) {
                int n = ofm.c - c < 16 ? ofm.c - c : 16;
                vnpu_ew8_run(pa + fm_chan(&ifm, c), pb + fm_chan(&ifm2, (int)(c * bstep)), bstep,
                             po + fm_chan(&ofm, c), n, t1, t2, &q, mode, reversed);
            }
        }
    }
}

/* The 8-bit path with a scalar IFM2 as a look-up per value (ew_fast8_lut), the channels in runs
 * of up to 16 adjacent bytes; each pixel without fm_offset's tile choice when both maps are one
 * tile. */
static void ew_run_lut8(const struct ew55op *w, const uint8_t lut[256])
{
    const struct fm ifm = w->ifm;
    const struct fm ofm = w->ofm;
    const int one_tile = ifm.h <= ifm.h0 && ifm.w <= ifm.w0 && ofm.h <= ofm.h0 && ofm.w <= ofm.w0;
    for (int y = 0; y < ofm.h; y++) {
        for (int x = 0; x < ofm.w; x++) {
            const uint8_t *pa = ifm.mem + (one_tile ? ifm.base[0] + y * ifm.sy + x * ifm.sx
                                                    : fm_offset(&ifm, y, x, 0));
            uint8_t *po = ofm.mem + (one_tile ? ofm.base[0] + y * ofm.sy + x * ofm.sx
                                              : fm_offset(&ofm, y, x, 0));
            for (int c = 0; c < ofm.c; c += 16) {
                int n = ofm.c - c < 16 ? ofm.c - c : 16;
                const uint8_t *a = pa + fm_chan(&ifm, c);
                uint8_t *o = po + fm_chan(&ofm, c);
                uint8_t v[16];
                /* every input byte before any output byte, as vnpu_ew8_run */
                for (int j = 0; j < n; j++) {
                    v[j] = lut[a[j]];
                }
                memcpy(o, v, (size_t)n);
            }
        }
    }
}

static void ew_run_fast8(const struct ew55op *w, const int32_t t1[256], const int32_t t2[256])
{
    const int r = w->reversed;
    switch (w->e.mode) {
    case 0:
        ew_fast8_pixels(w, t1, t2, 0, 0); /* a * b: the order does not matter */
        break;
    case 1:
        ew_fast8_pixels(w, t1, t2, 1, 0);
        break;
    case 2:
        r ? ew_fast8_pixels(w, t1, t2, 2, 1) : ew_fast8_pixels(w, t1, t2, 2, 0);
        break;
    case 3:
        ew_fast8_pixels(w, t1, t2, 3, 0);
        break;
    default:
        ew_fast8_pixels(w, t1, t2, 4, 0);
        break;
    }
}

/* The combination of the scaled operands: MUL, ADD, SUB, MIN, MAX, ABS. */
static inline int64_t ew_combine(int mode, int64_t a, int64_t b)
{
    switch (mode) {
    case 0:
        return a * b;
    case 1:
        return a + b;
    case 2:
        return a - b;
    case 3:
        return a < b ? a : b;
    case 4:
        return a > b ? a : b;
    default:
        return a < 0 ? -a : a;
    }
}

/* Every output in 64 bits: each pixel addressed once, its channels by fm_chan (NHWC or NHCWB16).
 * ka, kb: the operands' load_elem kinds, oelem the OFM's element size (constants in the calls
 * of ew_run, so the per-value switches fold away for them). */
static inline __attribute__((always_inline)) void ew_run_k(const struct ew55op *w, const int ka,
                                                           const int kb, const int oelem)
{
    const struct fm ifm = w->ifm;
    const struct fm ifm2 = w->ifm2;
    const struct fm ofm = w->ofm;
    const struct vnpu_out o = w->o;
    const uint32_t bc = w->bc;
    const struct ew55 e = w->e;
    const struct vnpu_rescaler out_scale = w->out_scale;
    const int unary = w->unary;
    const int scalar = w->scalar;
    const int reversed = w->reversed;
    const int64_t scalar_value = w->scalar_value;
    for (int y = 0; y < ofm.h; y++) {
        for (int x = 0; x < ofm.w; x++) {
            const uint8_t *pa = ifm.mem + fm_offset(&ifm, y, x, 0);
            const uint8_t *pb = NULL;
            uint8_t *po = ofm.mem + fm_offset(&ofm, y, x, 0);
            if (!unary && !scalar) {
                pb = ifm2.mem + fm_offset(&ifm2, (bc & 1u) ? 0 : y, (bc & 2u) ? 0 : x, 0);
            }
            /* runs of up to 16 channels, adjacent elements in NHWC and in one brick: each
             * operand loaded in one loop, then the values computed and stored */
            for (int c = 0; c < ofm.c; c += 16) {
                const int n = ofm.c - c < 16 ? ofm.c - c : 16;
                const uint8_t *ra = pa + fm_chan(&ifm, c);
                uint8_t *ro = po + fm_chan(&ofm, c);
                int64_t va[16];
                int64_t vb[16];
                for (int j = 0; j < n; j++) {
                    va[j] = load_elem(ra + j * (ka >> 1), ka) - ifm.zp;
                    vb[j] = unary ? 0 : scalar_value;
                }
                if (!unary && !scalar) {
                    const int bstep = (bc & 4u) ? 0 : (kb >> 1);
                    const uint8_t *rb = pb + fm_chan(&ifm2, (bc & 4u) ? 0 : c);
                    for (int j = 0; j < n; j++) {
                        vb[j] = load_elem(rb + j * bstep, kb) - ifm2.zp;
                    }
                }
                for (int j = 0; j < n; j++) {
                    int64_t a = reversed ? vb[j] : va[j];
                    int64_t b = reversed ? va[j] : vb[j];
                    int64_t res = ew_combine(e.mode, ew55_pre(&e, 1, a), ew55_pre(&e, 0, b));
                    store_elem(ro + j * oelem, oelem,
                               vnpu_out_value(&o, vnpu_rescale_by(&out_scale, res)));
                }
            }
        }
    }
}

/* ew_run_k for this operation: the kinds of softmax's 32-bit steps and the 8-bit ones as
 * constants, any other combination as values. */
static void ew_run(const struct ew55op *w)
{
    const int ka = w->ifm.elem * 2 + w->ifm.is_signed;
    const int kb = w->unary || w->scalar ? 0 : w->ifm2.elem * 2 + w->ifm2.is_signed;
    const int oe = w->ofm.elem;
/* A case of the switch below: ew_run_k for these kinds (a case label and its call from one
 * spelling of the three). */
#define EW_RUN_CASE(a, b, o)                                                                       \
    case ((a) << 8) | ((b) << 4) | (o):                                                            \
        ew_run_k(w, a, b, o);                                                                      \
        break
    switch ((ka << 8) | (kb << 4) | oe) {
        EW_RUN_CASE(9, 9, 4);
        EW_RUN_CASE(9, 0, 4);
        EW_RUN_CASE(9, 3, 4);
        EW_RUN_CASE(3, 3, 4);
        EW_RUN_CASE(3, 9, 4);
        EW_RUN_CASE(3, 0, 4);
        EW_RUN_CASE(3, 3, 1);
        EW_RUN_CASE(3, 0, 1);
    default:
        ew_run_k(w, ka, kb, oe);
        break;
    }
#undef EW_RUN_CASE
}

/* The operation as one 1x1 pixel of every value when each map it reads and writes is one run
 * (fm_flat) and IFM2 is not broadcast: the per-pixel addressing and the short channel runs go,
 * the order of the values stays (y, x, c). */
static void ew_flatten(struct ew55op *w)
{
    const int two = !w->unary && !w->scalar;
    struct fm *maps[3] = {&w->ifm, &w->ofm, &w->ifm2};
    for (int i = 0; i < (two ? 3 : 2); i++) {
        /* up to 16 channels, NHCWB16 is NHWC with the brick's strides (fm_offset's brick
         * term is (c & 15) * elem then) */
        maps[i]->brick = maps[i]->brick && maps[i]->c > 16;
    }
    int64_t n = (int64_t)w->ofm.h * w->ofm.w * w->ofm.c;
    if (n > INT32_MAX / 8 || !fm_flat(&w->ifm) || !fm_flat(&w->ofm) ||
        (two && ((w->bc & 7u) != 0 || !fm_flat(&w->ifm2)))) {
        return;
    }
    for (int i = 0; i < (two ? 3 : 2); i++) {
        maps[i]->h = 1;
        maps[i]->w = 1;
        maps[i]->c = (int)n;
    }
}

int u55_op_elementwise(struct vnpu_exec *run, uint32_t param)
{
    uint32_t mode = param & 0x3fu;
    static const char *const names[] = {"MUL",   "ADD", "SUB", "MIN", "MAX",
                                        "LRELU", "ABS", "CLZ", "SHR", "SHL"};
    if (mode == 5 || mode >= 7) {
        return vnpu_fail(run, "elementwise_mode %lu (%s) is not modelled", (unsigned long)mode,
                         mode < 10 ? names[mode] : "undefined");
    }
    struct ew55op w;
    memset(&w, 0, sizeof(w));
    if (ew_setup_maps(run, &w, mode) != 0 || ew_setup_scales(run, &w, mode) != 0) {
        return -1;
    }
    ew_flatten(&w);
    /* the tables cost 256 (512) evaluations: for fewer outputs the direct path is quicker */
    size_t values = (size_t)w.ofm.h * (size_t)w.ofm.w * (size_t)w.ofm.c;
    int rescaled = (mode == 1 || mode == 2) && w.e.scale_mode != 0;
    struct ew8_tables own;
    const struct ew8_tables *tab = NULL;
    if (values >= (rescaled ? EW_TABLE_MIN_VALUES : EW_CHEAP_TABLE_MIN_VALUES)) {
        tab = ew_fast8_memo(&w, &own);
    }
    if (tab != NULL && tab->ok && w.scalar) {
        ew_run_lut8(&w, tab->lut);
    } else if (tab != NULL && tab->ok) {
        ew_run_fast8(&w, tab->t1, tab->t2);
    } else {
        ew_run(&w);
    }
    return 0;
}

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
/* Outputs from which ew_any_table (256 evaluations) pays for itself. */
#define EW_ANY_TABLE_MIN_VALUES 512u

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

/*
 * The general path works on runs of up to 16 adjacent values (NHWC, or one NHCWB16 brick),
 * stage by stage: each operand's run loaded, the runs combined, the output stage, the stores;
 * each stage one small loop chosen once a run (per element kind, mode, output form), so no
 * value pays a switch or a call, and the code stays one copy of each loop (the kinds and modes
 * as constants in every combination compiled in seconds, most of them never used). Every
 * value of a run is read before any is written, as the 8-bit paths do.
 */
#define EW_RUN 16

/*
 * QEMU, where firmware runs the virtual NPU, chains its translated blocks only within a 1 KiB
 * page on an M-profile core: any other jump costs a lookup (as many host instructions as ~20
 * guest ones). The two functions the values run through (the pixel loop, a run's stages) are
 * each aligned to a page and under 1 KiB, their loops inside it; the rare stages are out of
 * line.
 */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__GNUC__)
#define EW_FW_PAGE __attribute__((aligned(1024)))
#else
#define EW_FW_PAGE
#endif

/* What the stages take: the operands fit 32 bits (ew_fits32), the output stage's form. */
struct ew_stages {
    const struct ew55op *w;
    int shift_out; /* the output rescale is a rounding shift of any combination (ew_shift_out) */
    int64_t c_pos, c_neg, zp, lo, hi;
    unsigned s;
};

/* 1 if every operand value minus its zero point fits 32 bits: no unsigned 32-bit operand, no
 * zero point on a 32-bit one (the 8- and 16-bit values and the scalar always fit). */
static int ew_fits32(const struct ew55op *w)
{
    const struct fm *f[2] = {&w->ifm, &w->ifm2};
    for (int i = 0; i < (w->unary || w->scalar ? 1 : 2); i++) {
        if (f[i]->elem == 4 && (!f[i]->is_signed || f[i]->zp != 0)) {
            return 0;
        }
    }
    return 1;
}

/*
 * 1 if the output stage is (v + rounding constant) >> s, zero point, one clamp for every
 * combination v: a scale of 1 (every 32-bit operation's), no LUT, and |v| <= 2^62 (the
 * combinations of 32-bit values without ADD/SUB's operand rescale), where vnpu_rescale of
 * (v, 1, s) is exactly that sum without overflow.
 */
static int ew_shift_out(const struct ew55op *w)
{
    const struct ew55 *e = &w->e;
    return w->out_scale.m == 1u && w->out_scale.fast && w->o.simple &&
           !((e->mode == 1 || e->mode == 2) && e->scale_mode != 0);
}

/* n values of one operand's run at p (load_elem's `kind`, `step` bytes apart; 0: one value for
 * all, a channel broadcast), zero point removed. */
static inline void ew_load32(int32_t v[EW_RUN], const uint8_t *p, int kind, ptrdiff_t step, int n,
                             int32_t zp)
{
    if (step == 0) {
        const int32_t x = (int32_t)(load_elem(p, kind) - zp);
        for (int j = 0; j < n; j++) {
            v[j] = x;
        }
        return;
    }
    switch (kind) {
    case 2:
        for (int j = 0; j < n; j++) {
            v[j] = (int32_t)p[j] - zp;
        }
        break;
    case 3:
        for (int j = 0; j < n; j++) {
            v[j] = (int32_t)(int8_t)p[j] - zp;
        }
        break;
    case 4:
    case 5:
        for (int j = 0; j < n; j++) {
            v[j] = (int32_t)load_elem(p + 2 * j, kind) - zp;
        }
        break;
    default: /* 9: signed 32-bit, zero point 0 (ew_fits32) */
        for (int j = 0; j < n; j++) {
            v[j] = (int32_t)load_elem(p + 4 * j, 9);
        }
        break;
    }
}

/* ADD/SUB with one operand rescaled (scale_mode 1, 2): the 8-bit path takes most of them, so
 * out of line, away from the page the hot loops share (EW_FW_PAGE). */
static __attribute__((noinline)) void ew_combine_rescaled(int64_t r[EW_RUN],
                                                          const int32_t a[EW_RUN],
                                                          const int32_t b[EW_RUN], int n,
                                                          const struct ew55 *e)
{
    for (int j = 0; j < n; j++) {
        r[j] = ew_combine(e->mode, ew55_pre(e, 1, a[j]), ew55_pre(e, 0, b[j]));
    }
}

/* The combinations of n values a op b (a the first operand after the swap), operand scales
 * included (ew55_pre). */
static inline void ew_combine32(int64_t r[EW_RUN], const int32_t a[EW_RUN], const int32_t b[EW_RUN],
                                int n, const struct ew55 *e)
{
    /* scale_mode 0's 16-bit operand scales */
    const int32_t sa = (int32_t)e->opa16;
    const int32_t sb = (int32_t)e->opb16;
    switch (e->mode) {
    case 0:
        for (int j = 0; j < n; j++) {
            r[j] = (int64_t)a[j] * b[j];
        }
        break;
    case 1:
    case 2:
        if (e->scale_mode != 0) {
            ew_combine_rescaled(r, a, b, n, e);
        } else if (e->mode == 1) {
            for (int j = 0; j < n; j++) {
                r[j] = (int64_t)a[j] * sa + (int64_t)b[j] * sb;
            }
        } else {
            for (int j = 0; j < n; j++) {
                r[j] = (int64_t)a[j] * sa - (int64_t)b[j] * sb;
            }
        }
        break;
    case 3:
        for (int j = 0; j < n; j++) {
            r[j] = a[j] < b[j] ? a[j] : b[j];
        }
        break;
    case 4:
        for (int j = 0; j < n; j++) {
            r[j] = a[j] > b[j] ? a[j] : b[j];
        }
        break;
    default:
        for (int j = 0; j < n; j++) {
            r[j] = a[j] < 0 ? -(int64_t)a[j] : a[j];
        }
        break;
    }
}

/* ew_out32 with any scale and output stage (a LUT, two clamps): out of line as
 * ew_combine_rescaled. */
static __attribute__((noinline)) void ew_out_general(int32_t v[EW_RUN], const int64_t r[EW_RUN],
                                                     int n, const struct ew55op *w)
{
    for (int j = 0; j < n; j++) {
        v[j] = (int32_t)vnpu_out_value(&w->o, vnpu_rescale_by(&w->out_scale, r[j]));
    }
}

/* The output stage of n combinations: OFM values, which fit 32 bits (the U55's widest OFM). */
static inline void ew_out32(int32_t v[EW_RUN], const int64_t r[EW_RUN], int n,
                            const struct ew_stages *g)
{
    if (g->shift_out) {
        /* the clamp before the zero point, to [lo - zp, hi - zp]; the rounding constant as
         * c_pos plus the difference for a negative value: fewer 64-bit registers live */
        const unsigned s = g->s;
        const int64_t c = g->c_pos;
        const int64_t d = g->c_neg - g->c_pos;
        const int64_t lo = g->lo - g->zp;
        const int64_t hi = g->hi - g->zp;
        const int64_t zp = g->zp;
        for (int j = 0; j < n; j++) {
            const int64_t p = r[j];
            int64_t x = (p + c + (p < 0 ? d : 0)) >> s;
            v[j] = (int32_t)((x < lo ? lo : (x > hi ? hi : x)) + zp);
        }
        return;
    }
    ew_out_general(v, r, n, g->w);
}

/* n OFM values at o, `elem` bytes each. */
static inline void ew_store(uint8_t *o, const int32_t v[EW_RUN], int n, int elem)
{
    switch (elem) {
    case 1:
        for (int j = 0; j < n; j++) {
            o[j] = (uint8_t)v[j];
        }
        break;
    case 2:
        for (int j = 0; j < n; j++) {
            store_elem(o + 2 * j, 2, v[j]);
        }
        break;
    default:
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* the NPU's byte order: one word store a value, not store_elem's four byte stores */
        for (int j = 0; j < n; j++) {
            memcpy(o + 4 * j, &v[j], 4);
        }
#else
        for (int j = 0; j < n; j++) {
            store_elem(o + 4 * j, 4, v[j]);
        }
#endif
        break;
    }
}

/* The OFM values of one run: operand a's n values at ra (`kind`, `astep` bytes apart), b's at
 * rb (`bstep`; NULL: the scalar or none). */
EW_FW_PAGE static void ew_values(const struct ew_stages *g, int32_t v[EW_RUN], const uint8_t *ra,
                                 int ka, ptrdiff_t astep, const uint8_t *rb, ptrdiff_t bstep, int n)
{
    const struct ew55op *w = g->w;
    int32_t va[EW_RUN];
    int32_t vb[EW_RUN];
    int64_t r[EW_RUN];
    ew_load32(va, ra, ka, astep, n, w->ifm.zp);
    if (rb != NULL) {
        ew_load32(vb, rb, w->ifm2.elem * 2 + w->ifm2.is_signed, bstep, n, w->ifm2.zp);
    } else {
        for (int j = 0; j < n; j++) {
            vb[j] = (int32_t)w->scalar_value; /* 0 for a unary operation */
        }
    }
    if (w->reversed) {
        ew_combine32(r, vb, va, n, &w->e);
    } else {
        ew_combine32(r, va, vb, n, &w->e);
    }
    ew_out32(v, r, n, g);
}

static void ew_stages_init(struct ew_stages *g, const struct ew55op *w)
{
    g->w = w;
    g->shift_out = ew_shift_out(w);
    g->c_pos = w->out_scale.c_pos;
    g->c_neg = w->out_scale.c_neg;
    g->s = w->out_scale.s;
    g->zp = w->o.zp;
    g->lo = w->o.lim.lo;
    g->hi = w->o.lim.hi;
}

/*
 * table[b]: the OFM value of 8-bit IFM byte b with a scalar IFM2 (or none), by the stages
 * themselves, so a look-up per value gives the same results. Built when an operation has many
 * more values than 256 (the residual ADD's int8 -> int32 steps: a load and a store a value).
 */
static void ew_any_table(const struct ew55op *w, int32_t table[256])
{
    struct ew_stages g;
    uint8_t bytes[256];
    ew_stages_init(&g, w);
    for (int b = 0; b < 256; b++) {
        bytes[b] = (uint8_t)b;
    }
    for (int b = 0; b < 256; b += EW_RUN) {
        ew_values(&g, table + b, bytes + b, w->ifm.elem * 2 + w->ifm.is_signed, 1, NULL, 0, EW_RUN);
    }
}

/* Every output of an operation ew_fits32 accepts, each pixel addressed once (fm_offset), its
 * channels by fm_chan in runs; `table`: ew_any_table's, for an 8-bit IFM with a scalar. */
EW_FW_PAGE static __attribute__((noinline)) void ew_run32(const struct ew55op *w,
                                                          const int32_t *table)
{
    const struct fm *ifm = &w->ifm;
    const struct fm *ifm2 = &w->ifm2;
    const struct fm *ofm = &w->ofm;
    const uint32_t bc = w->bc;
    const int two = !w->unary && !w->scalar;
    const int ka = ifm->elem * 2 + ifm->is_signed;
    const ptrdiff_t bstep = (bc & 4u) ? 0 : ifm2->elem;
    struct ew_stages g;
    ew_stages_init(&g, w);
    for (int y = 0; y < ofm->h; y++) {
        for (int x = 0; x < ofm->w; x++) {
            const uint8_t *pa = ifm->mem + fm_offset(ifm, y, x, 0);
            const uint8_t *pb = NULL;
            uint8_t *po = ofm->mem + fm_offset(ofm, y, x, 0);
            if (two) {
                pb = ifm2->mem + fm_offset(ifm2, (bc & 1u) ? 0 : y, (bc & 2u) ? 0 : x, 0);
            }
            for (int c = 0; c < ofm->c; c += EW_RUN) {
                const int n = ofm->c - c < EW_RUN ? ofm->c - c : EW_RUN;
                const uint8_t *ra = pa + fm_chan(ifm, c);
                int32_t v[EW_RUN];
                if (table != NULL) {
                    for (int j = 0; j < n; j++) {
                        v[j] = table[ra[j]];
                    }
                } else {
                    ew_values(&g, v, ra, ka, ifm->elem,
                              two ? pb + fm_chan(ifm2, (bc & 4u) ? 0 : c) : NULL, bstep, n);
                }
                ew_store(po + fm_chan(ofm, c), v, n, ofm->elem);
            }
        }
    }
}

/* Every output in 64 bits, value by value: the operations ew_fits32 refuses (an unsigned or
 * offset 32-bit operand). */
static __attribute__((noinline)) void ew_run64(const struct ew55op *w)
{
    const struct fm *ifm = &w->ifm;
    const struct fm *ifm2 = &w->ifm2;
    const struct fm *ofm = &w->ofm;
    const uint32_t bc = w->bc;
    const int two = !w->unary && !w->scalar;
    const int ka = ifm->elem * 2 + ifm->is_signed;
    const int kb = ifm2->elem * 2 + ifm2->is_signed;
    for (int y = 0; y < ofm->h; y++) {
        for (int x = 0; x < ofm->w; x++) {
            for (int c0 = 0; c0 < ofm->c; c0 += EW_RUN) {
                const int n = ofm->c - c0 < EW_RUN ? ofm->c - c0 : EW_RUN;
                int64_t v[EW_RUN];
                for (int j = 0; j < n; j++) {
                    const int c = c0 + j;
                    int64_t a = load_elem(ifm->mem + fm_offset(ifm, y, x, c), ka) - ifm->zp;
                    int64_t b = w->scalar_value; /* 0 for a unary operation */
                    if (two) {
                        b = load_elem(ifm2->mem + fm_offset(ifm2, (bc & 1u) ? 0 : y,
                                                            (bc & 2u) ? 0 : x, (bc & 4u) ? 0 : c),
                                      kb) -
                            ifm2->zp;
                    }
                    int64_t first = w->reversed ? b : a;
                    int64_t second = w->reversed ? a : b;
                    int64_t res = ew_combine(w->e.mode, ew55_pre(&w->e, 1, first),
                                             ew55_pre(&w->e, 0, second));
                    v[j] = vnpu_out_value(&w->o, vnpu_rescale_by(&w->out_scale, res));
                }
                for (int j = 0; j < n; j++) {
                    fm_write(ofm, y, x, c0 + j, v[j]);
                }
            }
        }
    }
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

/* ew_fast8_tables' result and tables, with a scalar IFM2 also every output byte by IFM byte;
 * else (any_ok) ew_any_table's: one or the other, so they share the space (a firmware build
 * has it on the stack). */
struct ew8_tables {
    int32_t ok;
    int32_t any_ok;
    union {
        struct {
            int32_t t1[256];
            int32_t t2[256];
            uint8_t lut[256];
        } f;
        int32_t any[256];
    } u;
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
        vnpu_ew8_run(bytes + v, &scalar_index, 0, t->u.f.lut + v, 16, t->u.f.t1, t->u.f.t2, &q,
                     w->e.mode, w->reversed);
    }
}

/*
 * ew_fast8_tables' result for `w` (and with `any`, ew_any_table's where the 8-bit path does not
 * take the operation): from the memo when an earlier run built it (host builds), else built,
 * into the memo or `own`. The key holds everything they read; an output stage with a LUT or
 * two clamps (not in the key) is never memoised (the 8-bit path refuses it anyway).
 */
static const struct ew8_tables *ew_fast8_memo(const struct ew55op *w, struct ew8_tables *own,
                                              int any)
{
    const struct ew55 *e = &w->e;
    int64_t key[35] = {e->mode,
                       e->scale_mode,
                       e->iround,
                       e->fixed_shift,
                       e->opa16,
                       e->opb16,
                       w->ifm.elem,
                       w->ifm.is_signed,
                       w->ifm.zp,
                       w->ifm2.elem,
                       w->ifm2.is_signed,
                       w->ifm2.zp,
                       w->ofm.elem,
                       w->unary,
                       w->scalar,
                       w->scalar_value,
                       w->reversed,
                       w->out_scale.fast,
                       w->o.simple,
                       w->o.zp,
                       w->o.lim.lo,
                       w->o.lim.hi,
                       any};
    vnpu_memo_rescaler(&key[23], &e->opa);
    vnpu_memo_rescaler(&key[29], &w->out_scale);
    int fresh = 1;
    struct ew8_tables *t = NULL;
    if (w->o.simple) {
        t = (struct ew8_tables *)vnpu_memo_get(VNPU_MEMO_U55_EW8, key, sizeof(key), sizeof(*t),
                                               &fresh);
    }
    t = t != NULL ? t : own;
    if (fresh) {
        t->ok = ew_fast8_tables(w, t->u.f.t1, t->u.f.t2);
        t->any_ok = !t->ok && any;
        if (t->ok && w->scalar) {
            ew_fast8_lut(w, t);
        } else if (t->any_ok) {
            ew_any_table(w, t->u.any);
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
    int fits32 = ew_fits32(&w);
    int any =
        fits32 && w.ifm.elem == 1 && (w.unary || w.scalar) && values >= EW_ANY_TABLE_MIN_VALUES;
    struct ew8_tables own;
    const struct ew8_tables *tab = NULL;
    if (any || values >= (rescaled ? EW_TABLE_MIN_VALUES : EW_CHEAP_TABLE_MIN_VALUES)) {
        tab = ew_fast8_memo(&w, &own, any);
    }
    if (tab != NULL && tab->ok && w.scalar) {
        ew_run_lut8(&w, tab->u.f.lut);
    } else if (tab != NULL && tab->ok) {
        ew_run_fast8(&w, tab->u.f.t1, tab->u.f.t2);
    } else if (fits32) {
        ew_run32(&w, tab != NULL && tab->any_ok ? tab->u.any : NULL);
    } else {
        ew_run64(&w);
    }
    return 0;
}

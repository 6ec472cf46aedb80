/* ethosu-porting-kit virtual NPU: Ethos-U85 ELEMENTWISE and its operands. */
#include "u85/u85.h"

#include "common/ew8.h"
#include "common/memo.h"
#include "common/mutation.h"
#include "ethosu_virtual.h"

#include <string.h>

int u85_setup_operand(struct run85 *run, struct operand *op, int which, const struct ofm85 *ofm,
                      int broadcast)
{
    struct regs *r = &run->x.regs;
    const char *what = which == FM_IFM ? "IFM" : "IFM2";
    uint32_t bc =
        broadcast ? (which == FM_IFM ? R0(IFM_BROADCAST) : R0(IFM2_BROADCAST)) & 0xfu : 0u;
    int storage = STORAGE_TILE2X2;
    if (u85_setup_fm(run, &op->fm, which, &storage, what) != 0) {
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
        return vnpu_fail(&run->x, "%s broadcast_mode %lu is not defined", what, (unsigned long)bc);
    }
    if (storage == STORAGE_NONE) {
        return vnpu_fail(&run->x, "%s activation_storage NONE without a scalar is not modelled",
                         what);
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
        uint8_t *ws = run->x.env->workspace;
        for (int i = 0; i < CHAIN_BUFFERS; i++) {
            if (run->chain[i].live && ws + run->chain[i].offset == op->fm.mem) {
                cb = i;
            }
        }
        const struct chain *ch = &run->chain[cb < 0 ? 0 : cb];
        if (cb < 0 || ch->h != op->fm.h || ch->w != op->fm.w || ch->c != op->fm.c) {
            return vnpu_fail(&run->x, "%s reads chain buffer %d as %dx%dx%d, it holds %dx%dx%d",
                             what, cb, op->fm.h, op->fm.w, op->fm.c, ch->h, ch->w, ch->c);
        }
    }
    return vnpu_check_fm(&run->x, &op->fm, what);
}

struct in_scale {
    uint32_t scale;
    unsigned shift;
    int round;
    int unit;
};

static int setup_in_scale(struct run85 *run, struct in_scale *s, unsigned reg, const char *what)
{
    struct regs *r = &run->x.regs;
    uint32_t param = P1(reg);
    s->scale = W1(reg) & 0x7fffffffu;
    s->shift = param & 0x3fu;
    s->round = ((param >> 13) & 1u) ? ROUND_NATURAL : ROUND_DBL;
    s->unit = s->scale == 1 && s->shift == 0;
    if (((param >> 6) & 0x1fu) != 0) {
        return vnpu_fail(&run->x, "%s dbl_rnd %lu is not modelled", what,
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

/* vnpu_rescale_by, its rounding constant chosen without a branch: a value's sign is as good as
 * random in an elementwise operation's data, and a mispredicted branch per rescale was most of
 * the flat path's time. */
static inline int64_t ew_rescale(const struct vnpu_rescaler *r, int64_t v)
{
    if (r->fast && v > -((int64_t)1 << 30) && v < ((int64_t)1 << 30)) {
        int64_t p = (int64_t)(int32_t)v * (int64_t)r->m;
        int64_t neg = -(int64_t)(p < 0); /* all ones for a product < 0 */
        return (p + ((r->c_neg & neg) | (r->c_pos & ~neg))) >> r->s;
    }
    return vnpu_rescale(v, r->m, r->s, r->mode);
}

/* 1 if the input scales apply (not under the mutation that drops them from MIN and MAX); the
 * one rule for every path. */
static inline int ew_scaled(const struct ew *e)
{
    return e->rescaled && !((e->mode == MIN || e->mode == MAX) &&
                            VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_MINMAX_UNSCALED));
}

/* The output value for operands a, b after their input scales: the operation, the output
 * stage (ew_eval after its input scales; a scalar's scaled once per operation). */
static inline __attribute__((always_inline)) int64_t ew_apply(const struct ew *e, int64_t a,
                                                              int64_t b)
{
    const uint32_t mode = e->mode;
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
    if (mode >= CMP_EQ && mode <= CMP_GT && VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_CMP_TRUE_ONE)) {
        res = -res;
    }
    return vnpu_out_value(e->o, ew_rescale(&e->ro, res));
}

/* The output value for operands a, b as fetched (raw for the bitwise operations, else
 * zero point removed): input scales, the operation, the output stage. */
static inline __attribute__((always_inline)) int64_t ew_eval(const struct ew *e, int64_t a,
                                                             int64_t b)
{
    if (ew_scaled(e)) {
        a = ew_rescale(&e->r1, a);
        b = ew_rescale(&e->r2, b);
    }
    return ew_apply(e, a, b);
}

/* Every output, on copies no pointer reaches (the OFM stores cannot alias them). `logic`:
 * the operands as stored (the bitwise operations), else zero point removed. */
/* 1 if operand op holds the OFM's values (no broadcast) as one run from base[0], or is a scalar. */
static int ew_flat_operand(const struct operand *op)
{
    return op->scalar || (!op->bh && !op->bw && !op->bc && fm_flat(&op->fm));
}

/* Operand op's value i of a flat run (ew_flat_operand), as operand_raw (logic) / operand_at. */
static inline int64_t ew_flat_at(const struct operand *op, const uint8_t *p, int kind, size_t i,
                                 int logic)
{
    if (op->scalar) {
        return logic ? op->value + op->fm.zp : op->value;
    }
    int64_t v = load_elem(p + i * (size_t)(kind >> 1), kind); /* kind: elem * 2 + is_signed */
    return logic ? v : v - op->fm.zp;
}

/* ew_flat's loop; ka, kb (load_elem kinds) and eo (OFM bytes) constants in the common calls. */
static inline __attribute__((always_inline)) void
ew_flat_loop(const struct operand *a_op, const struct operand *b_op, uint8_t *po, size_t n,
             const struct ew *e, int logic, const int ka, const int kb, const int eo)
{
    const uint8_t *pa = a_op->fm.mem + a_op->fm.base[0];
    const uint8_t *pb = b_op->fm.mem + b_op->fm.base[0];
    const int scaled = ew_scaled(e);
    /* a scalar operand's scaled value, once */
    const int64_t ka0 = a_op->scalar ? ew_flat_at(a_op, pa, ka, 0, logic) : 0;
    const int64_t kb0 = b_op->scalar ? ew_flat_at(b_op, pb, kb, 0, logic) : 0;
    const int64_t sa0 = scaled ? ew_rescale(&e->r1, ka0) : ka0;
    const int64_t sb0 = scaled ? ew_rescale(&e->r2, kb0) : kb0;
    for (size_t i = 0; i < n; i++) {
        int64_t a = sa0;
        int64_t b = sb0;
        if (!a_op->scalar) {
            a = ew_flat_at(a_op, pa, ka, i, logic);
            a = scaled ? ew_rescale(&e->r1, a) : a;
        }
        if (!b_op->scalar) {
            b = ew_flat_at(b_op, pb, kb, i, logic);
            b = scaled ? ew_rescale(&e->r2, b) : b;
        }
        store_elem(po + i * (size_t)eo, eo, ew_apply(e, a, b));
    }
}

/* ew_run's outputs when every map is one run in the same order (ew_run checked): the values
 * by index. Its own function, on its own copies: inside ew_run the loop's counter and pointers
 * lived on the stack. The int32 operations (softmax's, a mean's) with the element sizes as
 * constants: no per-value switch on them. */
static __attribute__((noinline)) void ew_flat(const struct operand a_op, const struct operand b_op,
                                              const struct ofm85 ofm, const struct vnpu_out o,
                                              struct ew e, int logic)
{
    e.o = &o;
    uint8_t *po = ofm.fm.mem + ofm.fm.base[0];
    const int ka = a_op.fm.elem * 2 + a_op.fm.is_signed;
    const int kb = b_op.fm.elem * 2 + b_op.fm.is_signed;
    const int eo = ofm.fm.elem;
    const size_t n = (size_t)ofm.h * (size_t)ofm.w * (size_t)ofm.c;
    if (ka == 9 && kb == 9 && eo == 4) {
        ew_flat_loop(&a_op, &b_op, po, n, &e, logic, 9, 9, 4);
    } else {
        ew_flat_loop(&a_op, &b_op, po, n, &e, logic, ka, kb, eo);
    }
}

static void ew_run(const struct operand a_op, const struct operand b_op, const struct ofm85 ofm,
                   const struct vnpu_out o, struct ew e, int logic)
{
    e.o = &o;
    /* every map one run in the same order (an untransposed OFM): the values by index, without
     * the per-value coordinates and tiles of operand_at and ofm_put */
    if (ofm.axis[0] == 0 && ofm.axis[1] == 1 && ofm.axis[2] == 2 && ofm.reverse == 0 &&
        ofm.fm.h == ofm.h && ofm.fm.w == ofm.w && ofm.fm.c == ofm.c && fm_flat(&ofm.fm) &&
        ew_flat_operand(&a_op) && ew_flat_operand(&b_op)) {
        ew_flat(a_op, b_op, ofm, o, e, logic);
        return;
    }
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

/* OFM byte for each byte of `var` (the other operand the scalar k, or none if unary): from the
 * memo when an earlier run built it (host builds), else built, into the memo or `own`. The
 * key holds every input of ew_eval. */
static const uint8_t *ew_map8_table(const struct ew *e, const struct operand *var, int64_t k,
                                    int var_first, int unary, int logic, uint8_t own[256])
{
    /* the values ew_eval reads but the output stage's (u85_map8_table adds those) */
    int64_t key[26] = {e->mode, e->rescaled,       k,         var_first, unary,
                       logic,   var->fm.is_signed, var->fm.zp};
    vnpu_memo_rescaler(&key[8], &e->r1);
    vnpu_memo_rescaler(&key[14], &e->r2);
    vnpu_memo_rescaler(&key[20], &e->ro);
    int fresh;
    uint8_t *table = u85_map8_table(VNPU_MEMO_U85_EW_MAP8, key, 26, e->o, own, &fresh);
    for (int t = 0; fresh && t < 256; t++) {
        int64_t v = byte_value(t, var->fm.is_signed) - (logic ? 0 : var->fm.zp);
        table[t] = (uint8_t)ew_eval(e, var_first ? v : k, unary ? v : (var_first ? k : v));
    }
    return table;
}

/* Outputs from which the 8-bit path's tables (up to 512 evaluations) pay for themselves:
 * with input scales 512 rescales, without (MUL) plain values. */
#define EW8_MIN_VALUES 128u
#define EW8_UNSCALED_MIN_VALUES 32u

/* Operand `op`'s value after the input scale, as ew_eval takes it, for each byte of an
 * 8-bit map (a scalar: t[0] only): 1, or 0 if one lies outside (-2^30, 2^30). */
static int ew8_table(const struct operand *op, const struct ew *e, const struct vnpu_rescaler *r,
                     int32_t t[256], int64_t *max)
{
    int scaled = ew_scaled(e);
    int n = op->scalar ? 1 : 256;
    int64_t m = 0;
    const int64_t zp = op->fm.zp;
    if (!op->scalar && (!scaled || r->fast) && zp > -((int64_t)1 << 29) &&
        zp < ((int64_t)1 << 29)) {
        /* every byte - zp inside (-2^30, 2^30): vnpu_rescale_by's short form for all, in a
         * loop without exits the compiler vectorises (this runs for every operation) */
        const int sg = op->fm.is_signed;
        for (int v = 0; v < 256; v++) {
            int64_t x = (sg ? (int64_t)(int8_t)(uint8_t)v : (int64_t)v) - zp;
            if (scaled) {
                int64_t p = x * (int64_t)r->m;
                x = (p + (p < 0 ? r->c_neg : r->c_pos)) >> r->s;
            }
            int64_t mag = x < 0 ? -x : x;
            m = mag > m ? mag : m;
            t[v] = (int32_t)x;
        }
        *max = m;
        return m < ((int64_t)1 << 30);
    }
    for (int v = 0; v < n; v++) {
        int64_t x = op->scalar ? op->value : byte_value(v, op->fm.is_signed) - op->fm.zp;
        x = scaled ? vnpu_rescale_by(r, x) : x;
        int64_t mag = x < 0 ? -x : x;
        if (mag >= ((int64_t)1 << 30)) {
            return 0;
        }
        m = mag > m ? mag : m;
        t[v] = (int32_t)x;
    }
    *max = m;
    return 1;
}

/* An operand's value after the input scale computed from its byte (vnpu_rescale_by's short
 * form, or none), for the AVX-512 path: a gather from the 256-entry table costs more than
 * the rescale itself. */
struct ew8in {
    int64_t m, c_pos, c_neg, zp;
    unsigned s;
    int scaled, is_signed;
};

/* d for operand op (scale r): 1 if its values, as ew8_table's, are (byte - zp) or that by
 * vnpu_rescale_by's short form with every factor inside 32 bits (ew8_in8), else 0. A scalar
 * or channel broadcast takes its table's value, and passes. */
static int ew8_direct_in(struct ew8in *d, const struct operand *op, const struct ew *e,
                         const struct vnpu_rescaler *r)
{
    d->scaled = ew_scaled(e);
    d->m = r->m;
    d->c_pos = r->c_pos;
    d->c_neg = r->c_neg;
    d->s = r->s;
    d->zp = op->fm.zp;
    d->is_signed = op->fm.is_signed;
    if (op->scalar || op->bc) {
        return 1;
    }
    const int64_t lim = (int64_t)1 << 29;
    return d->zp > -lim && d->zp < lim && (!d->scaled || (r->fast && r->m <= INT32_MAX));
}

/* Where the operation's (y, x, c0) of an operand lies, and its channel step (0: one byte
 * for all, a channel broadcast or a scalar at index 0 of its table). */
static inline const uint8_t *ew8_at(const struct operand *op, const struct axis_map m[3], int y,
                                    int x, int c0, ptrdiff_t *step)
{
    static const uint8_t scalar_index = 0;
    if (op->scalar) {
        *step = 0;
        return &scalar_index;
    }
    *step = op->bc ? 0 : 1;
    return op->fm.mem + op->fm.base[0] + axis_off(&m[0], op->bh ? 0 : y) +
           axis_off(&m[1], op->bw ? 0 : x) + (op->bc ? 0 : axis_off(&m[2], c0));
}

struct ew8op {
    const struct operand *a, *b;
    const struct ofm85 *o;
    struct axis_map am[3], bm[3], om[3];
    int32_t t1[256], t2[256];
    struct vnpu_ew8_out q;
    struct ew8in d1, d2;
    int direct; /* every stepping operand's value computable from its byte (ew8in) */
};

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#define EW8_DIRECT 1
#include <immintrin.h>

/* Eight operand values (64-bit lanes) from the bytes at p (k of them): the same values as
 * ew8_table's, as (x * m + c) >> s with x (|x| < 2^30) and m (< 2^31) as 32-bit lanes. */
static inline __attribute__((always_inline)) __m512i ew8_in8(const uint8_t *p, __mmask8 k,
                                                             const struct ew8in *d)
{
    __m128i bytes = _mm_maskz_loadu_epi8(k, p);
    __m512i x = d->is_signed ? _mm512_cvtepi8_epi64(bytes) : _mm512_cvtepu8_epi64(bytes);
    x = _mm512_sub_epi64(x, _mm512_set1_epi64(d->zp));
    if (!d->scaled) {
        return x;
    }
    __m512i prod = _mm512_mul_epi32(x, _mm512_set1_epi64(d->m));
    __mmask8 neg = _mm512_movepi64_mask(prod);
    prod = _mm512_add_epi64(prod, _mm512_mask_blend_epi64(neg, _mm512_set1_epi64(d->c_pos),
                                                          _mm512_set1_epi64(d->c_neg)));
    return _mm512_sra_epi64(prod, _mm_cvtsi32_si128((int)d->s));
}

/* n outputs of one run of adjacent bytes (vnpu_ew8_run's contract, any n): a's values
 * computed, b's computed (bstep 1) or t2[b[0]] for all (bstep 0); everything in 64-bit lanes,
 * the products by 32-bit multiplies (every factor lies inside 32 bits, ew8_binary's bounds). */
static inline __attribute__((always_inline)) void
ew8_direct_run(const uint8_t *a, const uint8_t *b, ptrdiff_t bstep, uint8_t *o, int n,
               const struct ew8in *da, const struct ew8in *db, const int32_t *t2,
               const struct vnpu_ew8_out *q, const int mode, const int reversed)
{
    const __m512i bconst = _mm512_set1_epi64(bstep == 0 ? t2[b[0]] : 0);
    const __m512i m = _mm512_set1_epi64(q->m);
    const __m512i c_pos = _mm512_set1_epi64(q->c_pos);
    const __m512i c_neg = _mm512_set1_epi64(q->c_neg);
    const __m512i zp = _mm512_set1_epi64(q->zp);
    const __m512i lo = _mm512_set1_epi64(q->lo);
    const __m512i hi = _mm512_set1_epi64(q->hi);
    const __m128i s = _mm_cvtsi32_si128((int)q->s);
    for (int j = 0; j < n; j += 8) {
        const __mmask8 k = n - j >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (n - j)) - 1u);
        __m512i x1 = ew8_in8(a + j, k, da);
        __m512i x2 = bstep != 0 ? ew8_in8(b + j, k, db) : bconst;
        __m512i yl = reversed ? x2 : x1;
        __m512i yr = reversed ? x1 : x2;
        __m512i res = mode == EW8_MUL   ? _mm512_mul_epi32(yl, yr)
                      : mode == EW8_ADD ? _mm512_add_epi64(yl, yr)
                      : mode == EW8_SUB ? _mm512_sub_epi64(yl, yr)
                      : mode == EW8_MIN ? _mm512_min_epi64(yl, yr)
                                        : _mm512_max_epi64(yl, yr);
        __m512i p = _mm512_mul_epi32(res, m);
        __mmask8 neg = _mm512_movepi64_mask(p);
        p = _mm512_add_epi64(p, _mm512_mask_blend_epi64(neg, c_pos, c_neg));
        p = _mm512_add_epi64(_mm512_sra_epi64(p, s), zp);
        p = _mm512_min_epi64(_mm512_max_epi64(p, lo), hi);
        _mm_mask_storeu_epi8(o + j, k, _mm512_cvtepi64_epi8(p));
    }
}
#else
#define EW8_DIRECT 0
#endif

#if EW8_DIRECT
/* 1 if operand `op` (maps m) holds its values of each OFM row as one run in the OFM's order:
 * a scalar or a channel broadcast (step 0) does when it is one value a row; a stepping one
 * when its channels are adjacent and its pixels follow each other. */
static int ew8_row_run(const struct operand *op, const struct axis_map m[3], int w, int c)
{
    if (op->scalar) {
        return 1;
    }
    if (op->bc) {
        return op->bw || w == 1;
    }
    return !op->bw && !m[1].rev && !m[2].rev && (!m[2].brick || c <= 16) &&
           (m[2].brick || m[2].stride == 1) && (w == 1 || m[1].stride == c);
}
#endif

/* Every output, in runs of up to 16 adjacent channels (`mode` a constant in each call); on
 * the direct path in runs of whole channel rows, or whole OFM rows where every map's pixels
 * are adjacent (the per-run set-up costs as much as a run of 16). */
static inline __attribute__((always_inline)) void ew8_pixels(const struct ew8op *w, const int mode)
{
    const struct ofm85 *o = w->o;
    uint8_t *ob = o->fm.mem + o->fm.base[0];
#if EW8_DIRECT
    if (w->direct) {
        const int rows = ew8_row_run(w->a, w->am, o->w, o->c) &&
                         ew8_row_run(w->b, w->bm, o->w, o->c) &&
                         (o->w == 1 || w->om[1].stride == o->c) && !w->om[1].rev &&
                         (!w->om[2].brick || o->c <= 16);
        /* else runs of up to 16 channels: a brick's 16 channels are adjacent, no more */
        const int xs = rows ? 1 : o->w;
        const int cs = rows ? o->c : 16;
        for (int y = 0; y < o->h; y++) {
            for (int x = 0; x < xs; x++) {
                for (int c = 0; c < o->c; c += cs) {
                    const int n = rows ? o->w * o->c : (o->c - c < 16 ? o->c - c : 16);
                    uint8_t *po = ob + axis_off(&w->om[0], y) + axis_off(&w->om[1], x) +
                                  axis_off(&w->om[2], c);
                    ptrdiff_t sa;
                    ptrdiff_t sb;
                    const uint8_t *pa = ew8_at(w->a, w->am, y, x, c, &sa);
                    const uint8_t *pb = ew8_at(w->b, w->bm, y, x, c, &sb);
                    if (sa == 1) {
                        ew8_direct_run(pa, pb, sb, po, n, &w->d1, &w->d2, w->t2, &w->q, mode, 0);
                    } else { /* a broadcast along the channels: b steps, a does not */
                        ew8_direct_run(pb, pa, sa, po, n, &w->d2, &w->d1, w->t1, &w->q, mode, 1);
                    }
                }
            }
        }
        return;
    }
#endif
    for (int y = 0; y < o->h; y++) {
        for (int x = 0; x < o->w; x++) {
            uint8_t *po = ob + axis_off(&w->om[0], y) + axis_off(&w->om[1], x);
            for (int c = 0; c < o->c; c += 16) {
                ptrdiff_t sa;
                ptrdiff_t sb;
                const uint8_t *pa = ew8_at(w->a, w->am, y, x, c, &sa);
                const uint8_t *pb = ew8_at(w->b, w->bm, y, x, c, &sb);
                int n = o->c - c < 16 ? o->c - c : 16;
                if (sa == 1) {
                    vnpu_ew8_run(pa, pb, sb, po + axis_off(&w->om[2], c), n, w->t1, w->t2, &w->q,
                                 mode, 0);
                } else { /* a broadcast along the channels: b steps, a does not */
                    vnpu_ew8_run(pb, pa, sa, po + axis_off(&w->om[2], c), n, w->t2, w->t1, &w->q,
                                 mode, 1);
                }
            }
        }
    }
}

/*
 * The 8-bit path (common/ew8.h) of a binary MUL, ADD, SUB, MIN or MAX: 8-bit operands of
 * one tile (or scalars; broadcasts step 0), an 8-bit OFM of one tile whose channels are
 * adjacent, one clamp. 1 if it ran, 0 if the operation takes ew_run.
 */
static int ew8_binary(const struct operand *a, const struct operand *b, const struct ofm85 *o,
                      const struct vnpu_out *out, const struct ew *e)
{
    static const int identity[3] = {0, 1, 2};
    struct ew8op w;
    int64_t max1;
    int64_t max2;
    w.a = a;
    w.b = b;
    w.o = o;
    /* one operand must step along the channels (vnpu_ew8_run's a) */
    int a_steps = !a->scalar && !a->bc;
    int b_steps = !b->scalar && !b->bc;
    if (e->mode > MAX || !(a_steps || b_steps) ||
        (size_t)o->h * (size_t)o->w * (size_t)o->c <
            (e->rescaled ? EW8_MIN_VALUES : EW8_UNSCALED_MIN_VALUES) ||
        !vnpu_ew8_out_init(&w.q, &e->ro, out) || !u85_axes_of(&o->fm, o->axis, o->reverse, w.om) ||
        w.om[2].rev || !(w.om[2].brick || w.om[2].stride == 1) ||
        (!a->scalar && !u85_axes_of(&a->fm, identity, 0, w.am)) ||
        (!b->scalar && !u85_axes_of(&b->fm, identity, 0, w.bm)) ||
        !ew8_table(a, e, &e->r1, w.t1, &max1) || !ew8_table(b, e, &e->r2, w.t2, &max2) ||
        !vnpu_ew8_bounded((int)e->mode, max1, max2)) {
        return 0;
    }
    w.direct = EW8_DIRECT && w.q.m <= INT32_MAX && ew8_direct_in(&w.d1, a, e, &e->r1) &&
               ew8_direct_in(&w.d2, b, e, &e->r2);
/* A case of the switch below: ew8_pixels with the mode as a constant (EW8_<mode>). */
#define EW8_PIXELS_CASE(mode)                                                                      \
    case mode:                                                                                     \
        ew8_pixels(&w, EW8_##mode);                                                                \
        break
    switch (e->mode) {
        EW8_PIXELS_CASE(MUL);
        EW8_PIXELS_CASE(ADD);
        EW8_PIXELS_CASE(SUB);
        EW8_PIXELS_CASE(MIN);
    default:
        ew8_pixels(&w, EW8_MAX);
        break;
    }
#undef EW8_PIXELS_CASE
    return 1;
}

static int op_elementwise(struct run85 *run, uint32_t mode)
{
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
        return vnpu_fail(&run->x, "elementwise_mode %lu (%s) is not modelled", (unsigned long)mode,
                         mode < 12 ? names[mode] : "undefined");
    }
    int unary = mode == ABS || mode == NOT;
    if (u85_check_acc(run) != 0 || u85_setup_ofm(run, &ofm) != 0 ||
        u85_setup_out(run, &o, &ofm.fm) != 0 ||
        u85_setup_operand(run, &a_op, FM_IFM, &ofm, 1) != 0 ||
        (!unary && u85_setup_operand(run, &b_op, FM_IFM2, &ofm, 1) != 0) ||
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
        return vnpu_fail(&run->x,
                         "elementwise_mode %lu with a non-unit IFM/IFM2 scale is not modelled",
                         (unsigned long)mode);
    }
    /* the scales prepared once (vnpu_rescale_by: the same results as vnpu_rescale) */
    struct ew e;
    if (u85_ofm_global_rescaler(run, &e.ro, "an elementwise operation") != 0) {
        return -1;
    }
    int logic = mode >= AND;
    e.mode = mode;
    e.rescaled = rescaled;
    e.o = &o;
    vnpu_rescaler_init(&e.r1, s1.scale, s1.shift, s1.round);
    vnpu_rescaler_init(&e.r2, s2.scale, s2.shift, s2.round);
    /* one operand a scalar (or unary): one byte of the other per output */
    const struct operand *var = unary || b_op.scalar ? &a_op : &b_op;
    const struct operand *fixed = var == &a_op ? &b_op : &a_op;
    struct axis_map ia[3];
    struct axis_map oa[3];
    if (!var->scalar && (unary || fixed->scalar) && (var->bh | var->bw | var->bc) == 0 &&
        u85_map8_ok(&var->fm, &ofm, ia, oa)) {
        uint8_t own[256];
        int64_t k =
            logic ? fixed->value + fixed->fm.zp : fixed->value; /* as operand_raw / operand_at */
        u85_map8(&var->fm, ia, &ofm, oa,
                 ew_map8_table(&e, var, k, var == &a_op, unary, logic, own));
    } else if (!unary && !logic && ew8_binary(&a_op, &b_op, &ofm, &o, &e)) {
        /* ran on the 8-bit path */
    } else {
        ew_run(a_op, b_op, ofm, o, e, logic);
    }
    u85_chain_release(run, &a_op.fm, unary ? NULL : &b_op.fm);
    u85_ofm_done(run, &ofm);
    return 0;
}

int u85_op_elementwise(struct vnpu_exec *x, uint32_t param)
{
    return op_elementwise(u85_run(x), param & 0x3fu);
}

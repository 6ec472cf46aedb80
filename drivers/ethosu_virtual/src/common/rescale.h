/*
 * ethosu-porting-kit virtual NPU: the rescale and its rounding, the output stage (zero point,
 * LUTs, clamps) every product's operations end in.
 */
#ifndef VNPU_RESCALE_H
#define VNPU_RESCALE_H

#include "common/fm.h"

#include <stddef.h>
#include <stdint.h>

/* Rounding of vnpu_rescale: the U55's OFM/IFM round_mode values, and FLOOR (no rounding constant). */
enum {
    ROUND_DBL = 0,
    ROUND_TRUNCATE = 1, /* towards zero */
    ROUND_NATURAL = 2,
    ROUND_FLOOR = 3
};

/*
 * (v * m + rounding constant) >> s, exact (the product up to 96 bits): the rescale
 * of the command-stream reference section 8.1.
 */
int64_t vnpu_rescale(int64_t v, uint32_t m, unsigned s, int mode);

/* vnpu_rescale by one (m, s, mode), prepared once for many values (an OFM channel, an
 * operation): its rounding constants are computed once, by vnpu_rescale's own rules. */
struct vnpu_rescaler {
    uint32_t m;
    unsigned s;
    int mode;
    int fast;             /* s <= 61: values with |v| < 2^30 take the constants below */
    int64_t c_pos, c_neg; /* rounding constant for a product >= 0, < 0 */
};

void vnpu_rescaler_init(struct vnpu_rescaler *r, uint32_t m, unsigned s, int mode);

static inline int64_t vnpu_rescale_by(const struct vnpu_rescaler *r, int64_t v)
{
    if (r->fast && v > -((int64_t)1 << 30) && v < ((int64_t)1 << 30)) {
        int64_t p = (int64_t)(int32_t)v * (int64_t)r->m;
        return (p + (p < 0 ? r->c_neg : r->c_pos)) >> r->s;
    }
    return vnpu_rescale(v, r->m, r->s, r->mode);
}

/*
 * vnpu_rescale_by in 32-bit operands, for values the caller has proved to lie in
 * (-2^30, 2^30): the product's high word, shifted. A rescaler with s < 32 is taken as
 * (m * 2^k, s + k) with k = 32 - s and its rounding constant times 2^k, which gives the
 * same floor when m * 2^k still fits 31 bits. The same results as vnpu_rescale_by; the
 * per-value cost of the output stages where a 64-bit shift is several instructions
 * (Cortex-M, and QEMU running it).
 */
struct vnpu_rescale32 {
    int32_t m;
    unsigned shift;       /* applied to the product's high word */
    int64_t c_pos, c_neg; /* rounding constant for a product >= 0, < 0 */
};

/* 1 if r has a 32-bit form (into q), 0 if not. */
static inline int vnpu_rescale32_init(struct vnpu_rescale32 *q, const struct vnpu_rescaler *r)
{
    unsigned k = r->s < 32u ? 32u - r->s : 0u;
    if (!r->fast || ((uint64_t)r->m << k) > 0x7fffffffu) {
        return 0;
    }
    q->m = (int32_t)(r->m << k);
    q->shift = r->s + k - 32u;
    q->c_pos = r->c_pos * ((int64_t)1 << k);
    q->c_neg = r->c_neg * ((int64_t)1 << k);
    return 1;
}

static inline int32_t vnpu_rescale32(const struct vnpu_rescale32 *q, int32_t v)
{
    int64_t p = (int64_t)v * (int64_t)q->m;
    p += p < 0 ? q->c_neg : q->c_pos;
    return (int32_t)(p >> 32) >> q->shift;
}

/* The 8-bit output stage of the convolutions' 8-bit paths: rescale, zero point, one clamp. */
static inline uint8_t vnpu_out8(const struct vnpu_rescale32 *r, int32_t acc, int32_t zp, int32_t lo,
                                int32_t hi)
{
    int32_t v = vnpu_rescale32(r, acc) + zp;
    return (uint8_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* An output stage's clamps: the activation range (if `clamp`), then the OFM type's range. */
struct vnpu_limits {
    int clamp;
    int64_t amin, amax;
    int64_t tmin, tmax;
    int64_t lo, hi; /* the two clamps as one, to [lo, hi], when lo <= hi (they overlap) */
};

/* The limits from the ACTIVATION_MIN/MAX register values for this OFM. */
static inline void vnpu_limits_init(struct vnpu_limits *l, const struct fm *ofm, uint32_t act_min,
                                    uint32_t act_max, int clamp)
{
    /* a 64-bit OFM (U85 B64) holds 48-bit accumulators: saturating there is UNVERIFIED */
    int bits = ofm->elem > 4 ? 48 : ofm->elem * 8;
    if (ofm->is_signed) {
        l->amin = (int16_t)act_min;
        l->amax = (int16_t)act_max;
        l->tmin = -((int64_t)1 << (bits - 1));
        l->tmax = ((int64_t)1 << (bits - 1)) - 1;
    } else {
        l->amin = act_min;
        l->amax = act_max;
        l->tmin = 0;
        l->tmax = ((int64_t)1 << (ofm->elem * 8)) - 1;
    }
    l->clamp = clamp;
    l->lo = clamp && l->amin > l->tmin ? l->amin : l->tmin;
    l->hi = clamp && l->amax < l->tmax ? l->amax : l->tmax;
}

/* v through the activation clamp (if any), then saturated to the OFM type. */
static inline int64_t vnpu_limit(const struct vnpu_limits *l, int64_t v)
{
    if (l->clamp) {
        v = v < l->amin ? l->amin : (v > l->amax ? l->amax : v);
    }
    return v < l->tmin ? l->tmin : (v > l->tmax ? l->tmax : v);
}

/* A 256-entry 8-bit LUT (signed tables indexed from -128). */
static inline int64_t vnpu_lut8(const uint8_t *table, int is_unsigned, int64_t v)
{
    if (is_unsigned) {
        v = v < 0 ? 0 : (v > 255 ? 255 : v);
        return table[v];
    }
    v = v < -128 ? -128 : (v > 127 ? 127 : v);
    return (int8_t)table[v + 128];
}

/* The int16 LUT: 512 (base, slope) pairs, interpolated over 7 fraction bits, rounded. */
static inline int64_t vnpu_lut16(const uint8_t *table, int64_t v)
{
    v = v < -32768 ? -32768 : (v > 32767 ? 32767 : v);
    uint32_t u = (uint32_t)(v + 32768);
    const uint8_t *e = table + (u >> 7) * 4u;
    int32_t base = (int16_t)(uint16_t)(e[0] | (e[1] << 8));
    int32_t slope = (int16_t)(uint16_t)(e[2] | (e[3] << 8));
    int32_t y = base * 128 + slope * (int32_t)(u & 127u);
    return (y + 64) >> 7;
}

/* An operation's output stage after the rescale: zero point, LUT, clamps (setup_out of each product fills it). */
struct vnpu_out {
    int zp;
    int lut; /* 0 none, 8 = 8-bit in/out, 16 = interpolating int16; U85: 816/832 = int8 in, 16/32-bit out */
    const uint8_t *table;
    int lut_unsigned;
    struct vnpu_limits lim;
    int simple; /* no LUT and overlapping clamps: one clamp, to [lim.lo, lim.hi] */
};

/* A rescaled value through the output stage: once per output value, so inline and the common cases first. */
static inline int64_t vnpu_out_value(const struct vnpu_out *o, int64_t v)
{
    v += o->zp;
    if (o->simple) {
        return v < o->lim.lo ? o->lim.lo : (v > o->lim.hi ? o->lim.hi : v);
    }
    if (o->lut == 8) {
        v = vnpu_lut8(o->table, o->lut_unsigned, v);
    } else if (o->lut == 16) {
        v = vnpu_lut16(o->table, v);
    } else if (o->lut == 816 || o->lut == 832) {
        v = v < -128 ? -128 : (v > 127 ? 127 : v);
        const uint8_t *e = o->table + (size_t)(v + 128) * (o->lut == 816 ? 2u : 4u);
        v = o->lut == 816 ? (int16_t)(uint16_t)(e[0] | (e[1] << 8))
                          : (int32_t)((uint32_t)e[0] | ((uint32_t)e[1] << 8) |
                                      ((uint32_t)e[2] << 16) | ((uint32_t)e[3] << 24));
    }
    return vnpu_limit(&o->lim, v);
}

#endif /* VNPU_RESCALE_H */

/* ethosu-porting-kit virtual NPU: the exact rescale of the command-stream reference (section 8.1). */
#include "common/rescale.h"

#include "common/mutation.h"

/*
 * rescale(v, m, s, mode): the product v*m exactly (up to 96 bits), plus the mode's
 * rounding constant, arithmetically shifted right by s.
 */
/* The mode after the mutations (a mutant NPU's NATURAL rounding floors). */
static int effective_mode(int mode)
{
    if (VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_NATURAL_FLOOR) && mode == ROUND_NATURAL) {
        return ROUND_FLOOR;
    }
    return mode;
}

/* The rounding constant c of (p + c) >> s for a product of that sign, when p and c fit 63 bits. */
static int64_t round_const(unsigned s, int mode, int p_negative)
{
    if (s == 0) {
        return 0;
    }
    if (mode == ROUND_NATURAL) {
        return (int64_t)1 << (s - 1);
    }
    if (mode == ROUND_DBL) {
        int64_t c = (int64_t)1 << (s - 1);
        if (s > 31) {
            c += p_negative ? -((int64_t)1 << 30) : ((int64_t)1 << 30);
        }
        return c;
    }
    if (mode == ROUND_TRUNCATE && p_negative) {
        return ((int64_t)1 << s) - 1;
    }
    return 0;
}

void vnpu_rescaler_init(struct vnpu_rescaler *r, uint32_t m, unsigned s, int mode)
{
    r->m = m;
    r->s = s;
    r->mode = mode;
    r->fast = s <= 61;
    r->c_pos = r->fast ? round_const(s, effective_mode(mode), 0) : 0;
    r->c_neg = r->fast ? round_const(s, effective_mode(mode), 1) : 0;
}

int64_t vnpu_rescale(int64_t v, uint32_t m, unsigned s, int mode)
{
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int negative = v < 0 && m != 0;
    mode = effective_mode(mode);
    /* |v| < 2^30 and m < 2^32: the product and the rounding constant fit in 63 bits */
    if ((mag >> 30) == 0 && s <= 61) {
        int64_t p = (int64_t)mag * (int64_t)m;
        if (negative) {
            p = -p;
        }
        return (p + round_const(s, mode, p < 0)) >> s;
    }
#ifdef __SIZEOF_INT128__
    /* the host's 128-bit integers: the same value as the two words below, in a few
     * instructions (softmax's 32-bit steps take this path for most values); s <= 63 */
    if (s < 64) {
        __extension__ typedef __int128 i128;
        i128 p = (i128)v * (i128)m;
        i128 c = 0;
        if (s > 0 && (mode == ROUND_NATURAL || mode == ROUND_DBL)) {
            c = (i128)1 << (s - 1);
            if (mode == ROUND_DBL && s > 31) {
                c += p < 0 ? -((i128)1 << 30) : ((i128)1 << 30);
            }
        } else if (s > 0 && mode == ROUND_TRUNCATE && p < 0) {
            c = ((i128)1 << s) - 1;
        }
        return (int64_t)((p + c) >> s);
    }
#endif
    /* 128-bit two's complement: hi:lo */
    uint64_t a_lo = mag & 0xffffffffu;
    uint64_t a_hi = mag >> 32;
    uint64_t p0 = a_lo * m;
    uint64_t p1 = a_hi * m;
    uint64_t lo = p0 + (p1 << 32);
    uint64_t hi = (p1 >> 32) + (lo < p0 ? 1u : 0u);
    if (negative) {
        lo = ~lo + 1u;
        hi = ~hi + (lo == 0 ? 1u : 0u);
    }
    int p_negative = (int64_t)hi < 0;
    if (s == 0) {
        return (int64_t)lo;
    }
    /* rounding constant as a signed 128-bit value */
    uint64_t c_lo = 0;
    uint64_t c_hi = 0;
    if (mode == ROUND_NATURAL || mode == ROUND_DBL) {
        if (s - 1 < 64) {
            c_lo = (uint64_t)1 << (s - 1);
        }
        if (mode == ROUND_DBL && s > 31) {
            if (!p_negative) {
                c_lo += (uint64_t)1 << 30;
            } else {
                /* c - 2^30; c >= 2^31 here, so no borrow into hi */
                c_lo -= (uint64_t)1 << 30;
            }
        }
    } else if (mode == ROUND_TRUNCATE && p_negative) {
        c_lo = s >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << s) - 1u);
        c_hi = s >= 64 ? (((uint64_t)1 << (s - 64)) - 1u) : 0u;
    }
    uint64_t r_lo = lo + c_lo;
    uint64_t r_hi = hi + c_hi + (r_lo < lo ? 1u : 0u);
    if (s >= 64) {
        return (int64_t)r_hi >> (s - 64);
    }
    return (int64_t)((r_lo >> s) | (r_hi << (64 - s)));
}

/*
 * ethosu-porting-kit virtual NPU: internal interfaces between the driver shim,
 * the command interpreter, the MLW decoder and the command table.
 */
#ifndef VNPU_H
#define VNPU_H

#include "ethosu_virtual.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__ARM_FEATURE_SIMD32) && defined(__ARMEL__)
#include <arm_acle.h>
#endif

#define VNPU_MAX_REGIONS 8

struct vnpu_cmd_desc {
    uint16_t code;
    const char *name;
    const char *fields;
};

struct vnpu_enum_desc {
    const char *name;
    const char *values;
};

/* One instruction set: its commands (sorted by code) and field enumerations. */
struct vnpu_isa {
    const struct vnpu_cmd_desc *commands;
    size_t ncommands;
    const struct vnpu_enum_desc *enums;
    size_t nenums;
};

extern const struct vnpu_isa vnpu_isa_u55; /* vnpu_cmd.c */
extern const struct vnpu_isa vnpu_isa_u85; /* vnpu_u85_cmd.c */

/* CONFIG.product (bits 31:28) */
#define VNPU_PRODUCT_U55 0u
#define VNPU_PRODUCT_U65 1u
#define VNPU_PRODUCT_U85 2u

const struct vnpu_cmd_desc *vnpu_isa_find(const struct vnpu_isa *isa, uint32_t code);
int vnpu_isa_disasm(const struct vnpu_isa *isa, const uint32_t *words, size_t nwords, size_t *index,
                    char *buf, size_t len);
uint32_t vnpu_code_of(uint32_t word0);

/* What one run of a command stream sees: the regions and the NPU it runs on. */
struct vnpu_env {
    uint8_t *region[VNPU_MAX_REGIONS];
    size_t region_size[VNPU_MAX_REGIONS];
    int num_regions;
    uint32_t
        config; /* CONFIG register: MAC count and SHRAM size select weight order and LUT address */
    uint8_t *lut; /* 2 KiB LUT area at the top of SHRAM */
    char *error;  /* ETHOSU_VIRTUAL_ERROR_LEN bytes */
};

/* Run a register command stream (no COP1 header). 0 on NPU_OP_STOP, -1 with env->error set. */
int vnpu_run(struct vnpu_env *env, const uint32_t *words, size_t nwords);
/* The same for an Ethos-U85 stream (vnpu_u85_exec.c). */
int vnpu_u85_run(struct vnpu_env *env, const uint32_t *words, size_t nwords);

/* Working memory for weight decoding (the static default or the caller's). */
void *vnpu_workspace(size_t *size);
/* Record that an operation used `bytes` of it (the high-water mark ethosu_virtual_workspace_peak reads). */
void vnpu_workspace_used(size_t bytes);

/*
 * Decoded weights kept between runs (host builds: -DETHOSU_VIRTUAL_WEIGHT_CACHE=<bytes>),
 * shared by the U55/U65 and U85 operations. An entry is found by its key (the decode
 * order, as bytes) and the exact bytes of its weight streams (compared in full, so a
 * changed stream is decoded again). It records the working memory the decode took above
 * `base`, so the high-water mark that sizes firmware workspaces is the same with and
 * without the cache. Firmware builds leave it out: they run each stream once.
 */
struct vnpu_wseg {
    const uint8_t *p;
    size_t len;
};
#ifdef ETHOSU_VIRTUAL_WEIGHT_CACHE
/* The cached weights, or NULL; a hit counts base + need as used and only if it fits ws_size. */
const int16_t *vnpu_wcache_find(const void *key, size_t key_len, const struct vnpu_wseg *segs,
                                int nsegs, size_t base, size_t ws_size);
void vnpu_wcache_add(const void *key, size_t key_len, const struct vnpu_wseg *segs, int nsegs,
                     const int16_t *weights, size_t nweights, size_t need);
#else
#define vnpu_wcache_find(key, key_len, segs, nsegs, base, ws_size)                                 \
    ((void)(key), (void)(key_len), (void)(segs), (void)(nsegs), (void)(base), (void)(ws_size),     \
     (const int16_t *)NULL)
#define vnpu_wcache_add(key, key_len, segs, nsegs, weights, nweights, need)                        \
    ((void)(key), (void)(key_len), (void)(segs), (void)(nsegs), (void)(weights), (void)(nweights), \
     (void)(need))
#endif

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

/* A feature map as one operation addresses it: tiles, strides, precision, extent. */
struct fm {
    uint8_t *mem;
    size_t size;
    int64_t base[4];
    int32_t h0, h1, w0; /* tile split: HEIGHT0, HEIGHT1, WIDTH0 */
    int64_t sx, sy, sc;
    int elem;      /* bytes: 1, 2, 4 (8: U85 B64) */
    int is_signed; /* 0 unsigned, 1 signed */
    int brick;     /* NHCWB16 */
    int h, w, c;   /* extent used by the operation */
    int zp;
};

static inline int64_t fm_offset(const struct fm *f, int y, int x, int c)
{
    int t = 0;
    if (x >= f->w0) {
        x -= f->w0;
        if (y >= f->h1) {
            y -= f->h1;
            t = 3;
        } else {
            t = 1;
        }
    } else if (y >= f->h0) {
        y -= f->h0;
        t = 2;
    }
    int64_t off = f->base[t] + (int64_t)y * f->sy + (int64_t)x * f->sx;
    if (f->brick) {
        off += (int64_t)(c >> 4) * f->sc + (int64_t)(c & 15) * f->elem;
    } else {
        off += (int64_t)c * f->elem;
    }
    return off;
}

/* One element at p: kind = bytes * 2 + signed (struct fm's elem and is_signed). */
static inline int64_t load_elem(const uint8_t *p, int kind)
{
    switch (kind) {
    case 2:
        return p[0];
    case 3:
        return (int8_t)p[0];
    case 4:
        return (uint16_t)(p[0] | (p[1] << 8));
    case 5:
        return (int16_t)(uint16_t)(p[0] | (p[1] << 8));
    case 8:
        return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
               ((uint32_t)p[3] << 24);
    case 16:
    case 17: /* U85 B64: a 48-bit accumulator stored sign-extended */
    {
        uint64_t u = 0;
        for (int b = 7; b >= 0; b--) {
            u = (u << 8) | p[b];
        }
        return (int64_t)u;
    }
    default:
        return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                         ((uint32_t)p[3] << 24));
    }
}

/* The low `elem` bytes of v at p, little-endian. */
static inline void store_elem(uint8_t *p, int elem, int64_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (uint8_t)u;
    if (elem > 1) {
        p[1] = (uint8_t)(u >> 8);
    }
    if (elem > 2) {
        p[2] = (uint8_t)(u >> 16);
        p[3] = (uint8_t)(u >> 24);
    }
    if (elem > 4) {
        uint32_t hi = (uint32_t)((uint64_t)v >> 32);
        p[4] = (uint8_t)hi;
        p[5] = (uint8_t)(hi >> 8);
        p[6] = (uint8_t)(hi >> 16);
        p[7] = (uint8_t)(hi >> 24);
    }
}

static inline int64_t fm_read(const struct fm *f, int y, int x, int c)
{
    return load_elem(f->mem + fm_offset(f, y, x, c), f->elem * 2 + f->is_signed);
}

static inline void fm_write(const struct fm *f, int y, int x, int c, int64_t v)
{
    store_elem(f->mem + fm_offset(f, y, x, c), f->elem, v);
}

/* The register file: Vela only emits changes, so one lives for the whole stream. */
struct regs {
    uint16_t p0[256]; /* cmd0 registers 0x100..0x1ff: the 16-bit param */
    uint32_t w1[256]; /* cmd1 registers 0x000..0x0ff: the payload */
    uint16_t p1[256]; /* ... and their param (U65/U85: addr_hi; *_SCALE: shift, rounding) */
};

#define R0(op) (r->p0[(op) & 0xffu])
#define W1(op) (r->w1[(op) & 0xffu])
#define P1(op) (r->p1[(op) & 0xffu])

/* Registers with the same code and meaning on the U55/U65 and the U85 (cmd0 0x1xx, cmd1 0x0xx). */
enum {
    IFM_PAD_TOP = 0x100,
    IFM_PAD_LEFT = 0x101,
    IFM_PAD_RIGHT = 0x102,
    IFM_PAD_BOTTOM = 0x103,
    IFM_DEPTH_M1 = 0x104,
    IFM_PRECISION = 0x105,
    IFM_UPSCALE = 0x107,
    IFM_ZERO_POINT = 0x109,
    IFM_WIDTH0_M1 = 0x10a,
    IFM_HEIGHT0_M1 = 0x10b,
    IFM_HEIGHT1_M1 = 0x10c,
    IFM_REGION = 0x10f,
    OFM_WIDTH_M1 = 0x111,
    OFM_HEIGHT_M1 = 0x112,
    OFM_DEPTH_M1 = 0x113,
    OFM_PRECISION = 0x114,
    OFM_BLK_DEPTH_M1 = 0x117,
    OFM_ZERO_POINT = 0x118,
    OFM_WIDTH0_M1 = 0x11a,
    OFM_HEIGHT0_M1 = 0x11b,
    OFM_HEIGHT1_M1 = 0x11c,
    OFM_REGION = 0x11f,
    KERNEL_WIDTH_M1 = 0x120,
    KERNEL_HEIGHT_M1 = 0x121,
    KERNEL_STRIDE = 0x122,
    ACTIVATION = 0x125,
    ACTIVATION_MIN = 0x126,
    ACTIVATION_MAX = 0x127,
    WEIGHT_REGION = 0x128,
    SCALE_REGION = 0x129,
    DMA0_SRC_REGION = 0x130,
    DMA0_DST_REGION = 0x131,
    IFM2_BROADCAST = 0x180,
    IFM2_PRECISION = 0x185,
    IFM2_ZERO_POINT = 0x189,
    IFM2_WIDTH0_M1 = 0x18a,
    IFM2_HEIGHT0_M1 = 0x18b,
    IFM2_HEIGHT1_M1 = 0x18c,
    IFM2_REGION = 0x18f,
    IFM_BASE0 = 0x000,
    IFM_STRIDE_X = 0x004,
    IFM_STRIDE_Y = 0x005,
    IFM_STRIDE_C = 0x006,
    OFM_BASE0 = 0x010,
    OFM_STRIDE_X = 0x014,
    OFM_STRIDE_Y = 0x015,
    OFM_STRIDE_C = 0x016,
    WEIGHT_BASE = 0x020,
    WEIGHT_LENGTH = 0x021,
    SCALE_BASE = 0x022,
    SCALE_LENGTH = 0x023,
    OFM_SCALE = 0x024,
    DMA0_SRC = 0x030,
    DMA0_DST = 0x031,
    DMA0_LEN = 0x032,
    IFM2_BASE0 = 0x080,
    IFM2_STRIDE_X = 0x084,
    IFM2_STRIDE_Y = 0x085,
    IFM2_STRIDE_C = 0x086,
};

/* The feature maps an operation addresses (the index of vnpu_fm_regs). */
enum { FM_IFM, FM_IFM2, FM_OFM };

/* The registers of one feature map: the same codes on the U55/U65 and the U85. */
struct vnpu_fm_regs {
    uint16_t precision, region, zero_point, width0_m1, height0_m1, height1_m1; /* cmd0 */
    uint16_t base0, stride_x, stride_y, stride_c; /* cmd1; BASE0..3 in a row */
    unsigned
        precision_lsb; /* activation_precision: bits 3:2 of an input's register, 2:1 of the OFM's */
};

static inline const struct vnpu_fm_regs *vnpu_fm_regs(int which)
{
    static const struct vnpu_fm_regs regs[3] = {
        {IFM_PRECISION, IFM_REGION, IFM_ZERO_POINT, IFM_WIDTH0_M1, IFM_HEIGHT0_M1, IFM_HEIGHT1_M1,
         IFM_BASE0, IFM_STRIDE_X, IFM_STRIDE_Y, IFM_STRIDE_C, 2},
        {IFM2_PRECISION, IFM2_REGION, IFM2_ZERO_POINT, IFM2_WIDTH0_M1, IFM2_HEIGHT0_M1,
         IFM2_HEIGHT1_M1, IFM2_BASE0, IFM2_STRIDE_X, IFM2_STRIDE_Y, IFM2_STRIDE_C, 2},
        {OFM_PRECISION, OFM_REGION, OFM_ZERO_POINT, OFM_WIDTH0_M1, OFM_HEIGHT0_M1, OFM_HEIGHT1_M1,
         OFM_BASE0, OFM_STRIDE_X, OFM_STRIDE_Y, OFM_STRIDE_C, 1},
    };
    return &regs[which];
}

/*
 * What every product reads alike of the feature map `d` describes: its tile split and
 * zero point into f. Returns its precision register, *bits its activation_precision field.
 * Base addresses and strides are the caller's (32-bit on the U55/U65, 40-bit on the U85).
 */
static inline uint32_t vnpu_fm_read_regs(const struct regs *r, const struct vnpu_fm_regs *d,
                                         struct fm *f, int *bits)
{
    uint32_t prec = R0(d->precision);
    *bits = (int)((prec >> d->precision_lsb) & 3u);
    f->h0 = R0(d->height0_m1) + 1;
    f->h1 = R0(d->height1_m1) + 1;
    f->w0 = R0(d->width0_m1) + 1;
    f->zp = (int16_t)R0(d->zero_point);
    return prec;
}

/* The operations (cmd0 codes below 0x100): the same codes on every product; RESIZE is the U85's. */
enum {
    OP_STOP = 0x000,
    OP_IRQ = 0x001,
    OP_CONV = 0x002,
    OP_DEPTHWISE = 0x003,
    OP_POOL = 0x005,
    OP_ELEMENTWISE = 0x006,
    OP_RESIZE = 0x007,
    OP_DMA_START = 0x010,
    OP_DMA_WAIT = 0x011,
    OP_KERNEL_WAIT = 0x012,
    OP_PMU_MASK = 0x013,
};

/* What vnpu_next_command found. */
enum {
    VNPU_CMD_REGISTER,  /* a register write, done */
    VNPU_CMD_OPERATION, /* an NPU_OP_* (cmd0 below 0x100), for the product to run */
    VNPU_CMD_UNKNOWN,   /* a code the instruction set does not have */
    VNPU_CMD_TRUNCATED, /* a cmd1 without its payload word */
    VNPU_CMD_CMD1_OP    /* a cmd1 operation (0x4100 and up: the U85's NPU_OP_BRANCH) */
};

/*
 * The command at words[*i], as every product encodes it: *code and *param from its
 * first word; a register write goes into r (Vela only emits changes, so one register
 * file lives for the whole stream) and, like an operation, moves *i past the command.
 * Once per command, not per value: the interpreters' loop.
 */
static inline int vnpu_next_command(const struct vnpu_isa *isa, struct regs *r,
                                    const uint32_t *words, size_t nwords, size_t *i, uint32_t *code,
                                    uint32_t *param)
{
    uint32_t w0 = words[*i];
    *code = vnpu_code_of(w0);
    *param = w0 >> 16;
    if (vnpu_isa_find(isa, *code) == NULL) {
        return VNPU_CMD_UNKNOWN;
    }
    if (*code & 0x4000u) {
        if (*i + 1 >= nwords) {
            return VNPU_CMD_TRUNCATED;
        }
        uint32_t op = *code & 0x3ffu;
        if (op >= 0x100) {
            return VNPU_CMD_CMD1_OP;
        }
        r->w1[op] = words[*i + 1];
        r->p1[op] = (uint16_t)*param;
        *i += 2;
        return VNPU_CMD_REGISTER;
    }
    *i += 1;
    if (*code >= 0x100) {
        r->p0[*code & 0xffu] = (uint16_t)*param;
        return VNPU_CMD_REGISTER;
    }
    return VNPU_CMD_OPERATION;
}

/* Kernel geometry of a POOL/CONV/DEPTHWISE (same registers on the U55, U65 and U85). */
struct kernel {
    int kh, kw; /* dilated size (register value + 1) */
    int sy, sx; /* strides */
    int dy, dx; /* dilation */
    int pad_top, pad_left, pad_bottom, pad_right;
    int upscale; /* 0 none, 1 nearest, 2 zeros */
    int ih, iw;  /* logical (upscaled) IFM extent the kernel sweeps */
};

/*
 * The shared checks below return 0, or non-zero with the reason in why[len]; the caller
 * stops the stream with it (naming the command).
 */
/* The kernel from the cmd0 registers p0[0x00..0xff] (0x100..0x1ff) for an OFM of oh x ow. */
int vnpu_kernel_setup(struct kernel *k, const uint16_t *p0, int oh, int ow, char *why, size_t len);
/* Every address the box [0,h)x[0,w)x[0,c) of `f` touches lies in its memory. */
int vnpu_fm_check(const struct fm *f, const char *what, char *why, size_t len);
/* Element size, signedness and layout from a *_PRECISION register (`bits`: its precision field). */
int vnpu_fm_precision(struct fm *f, uint32_t prec, int bits, const char *what, char *why,
                      size_t len);
/* Base address and size of region `region` (the driver's base_addr[region]). */
int vnpu_region(const struct vnpu_env *env, unsigned region, uint8_t **mem, size_t *size,
                const char *what, char *why, size_t len);
/*
 * Decimal text of a 64-bit value, for error messages: the firmware's C library
 * (newlib-nano) has no %lld/%llu, so a message prints VNPU_I64(x) / VNPU_U64(x) with %s.
 * The text is in a compound literal of the caller's block (C99: it lives until the block
 * ends), so several may be arguments of one snprintf.
 */
#define VNPU_NUM_LEN 21 /* "-9223372036854775808" and its NUL */
const char *vnpu_i64(char *buf, int64_t v);
const char *vnpu_u64(char *buf, uint64_t v);
#define VNPU_I64(v) vnpu_i64((char[VNPU_NUM_LEN]){0}, (int64_t)(v))
#define VNPU_U64(v) vnpu_u64((char[VNPU_NUM_LEN]){0}, (uint64_t)(v))
/* "<prefix><command name> at command word N: <message>" into env->error. */
void vnpu_error(struct vnpu_env *env, const struct vnpu_isa *isa, uint32_t code, size_t word,
                const char *prefix, const char *fmt, va_list ap);

/* Logical IFM value at (y, x) of the upscaled map, minus the zero point; *valid = 0 for padding. */
static inline int64_t ifm_tap(const struct fm *ifm, const struct kernel *k, int y, int x, int c,
                              int *valid)
{
    if (y < 0 || x < 0 || y >= k->ih || x >= k->iw) {
        *valid = 0;
        return 0;
    }
    *valid = 1;
    if (k->upscale == 1) {
        y >>= 1;
        x >>= 1;
    } else if (k->upscale == 2) {
        if ((y | x) & 1) {
            return 0;
        }
        y >>= 1;
        x >>= 1;
    }
    return fm_read(ifm, y, x, c) - ifm->zp;
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

/*
 * All channels [0, ifm->c) of the tap (y, x) of an 8-bit IFM as ifm_tap gives them,
 * truncated to int16, at dst[0..c): the convolutions' receptive-field gather.
 */
void vnpu_tap16(const struct fm *ifm, const struct kernel *k, int y, int x, int16_t *dst);

/*
 * The accumulator of one pool output (oy, ox, c): mode 0 MAX, 5 MIN, 2 REDUCE_SUM (over
 * the IFM's channels), otherwise the sum of the valid taps. *count = the valid taps.
 */
int64_t vnpu_pool_acc(const struct fm *ifm, const struct kernel *k, int mode, int oy, int ox, int c,
                      int *count);

/* Dot product of 16-bit operands into 32 bits (the caller bounds n so it cannot overflow). */
static inline int32_t dot16(const int16_t *a, const int16_t *b, size_t n)
{
    int32_t sum = 0;
#if defined(__ARM_FEATURE_SIMD32) && defined(__ARMEL__)
    /* Cortex-M with DSP: SMLAD, two products per instruction, four per iteration (1.75
     * instructions a product instead of 4; under QEMU too) */
    int32_t sum2 = 0;
    for (; n >= 4u; n -= 4u, a += 4, b += 4) {
        int16x2_t a0;
        int16x2_t a1;
        int16x2_t b0;
        int16x2_t b1;
        memcpy(&a0, a, sizeof(a0));
        memcpy(&a1, a + 2, sizeof(a1));
        memcpy(&b0, b, sizeof(b0));
        memcpy(&b1, b + 2, sizeof(b1));
        sum = __smlad(a0, b0, sum);
        sum2 = __smlad(a1, b1, sum2);
    }
    sum += sum2;
#endif
    for (; n > 0u; n--) {
        sum += (int32_t)*a++ * (int32_t)*b++;
    }
    return sum;
}

#if defined(__ARM_FEATURE_SIMD32) && defined(__ARMEL__)
/* two int16 lanes read as one word (the arrays are int16: may_alias; 2-byte aligned) */
typedef int16x2_t __attribute__((may_alias, aligned(2))) vnpu_pair16;
#endif

/*
 * dot16 of one a against two b rows, added to *s0 and *s1: each load of a serves two
 * channels, 3 loads for 4 products instead of 4. Loads are what a convolution costs
 * under QEMU: MobileNetV2-224 runner + virtual NPU, QEMU CPU time 1.90 s -> 1.58 s.
 */
static inline void dot16x2(const int16_t *a, const int16_t *b0, const int16_t *b1, size_t n,
                           int32_t *s0, int32_t *s1)
{
    int32_t sum0 = *s0;
    int32_t sum1 = *s1;
#if defined(__ARM_FEATURE_SIMD32) && defined(__ARMEL__)
    /* SMLAD on word loads of two lanes */
    const vnpu_pair16 *pa = (const vnpu_pair16 *)(const void *)a;
    const vnpu_pair16 *p0 = (const vnpu_pair16 *)(const void *)b0;
    const vnpu_pair16 *p1 = (const vnpu_pair16 *)(const void *)b1;
    for (size_t i = n >> 2; i > 0u; i--) {
        int16x2_t a0 = *pa++;
        int16x2_t a1 = *pa++;
        sum0 = __smlad(a0, *p0++, sum0);
        sum0 = __smlad(a1, *p0++, sum0);
        sum1 = __smlad(a0, *p1++, sum1);
        sum1 = __smlad(a1, *p1++, sum1);
    }
    a = (const int16_t *)(const void *)pa;
    b0 = (const int16_t *)(const void *)p0;
    b1 = (const int16_t *)(const void *)p1;
    n &= 3u;
#endif
    for (; n > 0u; n--) {
        int32_t v = *a++;
        sum0 += v * (int32_t)*b0++;
        sum1 += v * (int32_t)*b1++;
    }
    *s0 = sum0;
    *s1 = sum1;
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

extern uint32_t vnpu_mutation_mask; /* ethosu_virtual_mutation bits, 0 = the real NPU */

/* Pull decoder of an MLW weight stream: one 9-bit value at a time. */
struct vnpu_mlw {
    const uint8_t *buf;
    size_t size;
    size_t bitpos;
    uint16_t *wval; /* slice buffers, in caller memory */
    uint32_t *zrun;
    size_t capacity; /* values the slice buffers can hold */
    int16_t palette[32];
    int palsize;
    int palbits;
    int direct_offset;
    int first;
    int prev_zero_run;
    /* emission state of the current slice */
    int nvalues;
    int new_palette;
    int use_zero_run;
    int index;      /* next weight of the slice */
    uint32_t zeros; /* zeros still to emit before it */
    int in_slice;
    int ended;
    size_t need; /* bytes of memory the largest slice seen so far needs (vnpu_mlw_bytes) */
};

/* Memory the decoder needs for a slice of `values` weights (+1 for a new palette's zero run). */
#define VNPU_MLW_BYTES(values) (4u + 6u * (size_t)(values))

void vnpu_mlw_init(struct vnpu_mlw *d, const uint8_t *buf, size_t size, void *mem, size_t mem_size);
/* Decode the next slice: 1, 0 at the end of the stream, -1 if malformed (or it does not fit). */
int vnpu_mlw_refill(struct vnpu_mlw *d);

/* 1 and *value set, 0 at the end of the stream, -1 if malformed (or the slice does not fit).
 * Inline: it runs once per weight, the slice decode behind it once per slice. */
static inline int vnpu_mlw_next(struct vnpu_mlw *d, int16_t *value)
{
    for (;;) {
        if (d->zeros > 0) {
            d->zeros--;
            *value = 0;
            return 1;
        }
        if (d->in_slice && d->index < d->nvalues) {
            int w = d->wval[d->index];
            int v = w < d->palsize ? d->palette[w] : w - d->palsize + d->direct_offset;
            int mag = v >> 1;
            *value = (int16_t)((v & 1) ? -mag : mag);
            if (d->use_zero_run) {
                d->zeros = d->zrun[d->index + d->new_palette];
            }
            d->index++;
            return 1;
        }
        int r = vnpu_mlw_refill(d);
        if (r <= 0) {
            return r;
        }
    }
}

/*
 * The next n values as n calls of vnpu_mlw_next would give them, into dst. Returns n, or
 * how many came before the call that would have returned 0 or -1 (*status gets that
 * value; 1 when all n came). The decoder's state is kept in locals over a run of values:
 * what the convolutions' weight decode costs per weight.
 */
static inline size_t vnpu_mlw_read(struct vnpu_mlw *d, int16_t *dst, size_t n, int *status)
{
    size_t got = 0;
    *status = 1;
    while (got < n) {
        if (d->zeros > 0) {
            size_t z = d->zeros < n - got ? d->zeros : n - got;
            memset(dst + got, 0, z * sizeof(int16_t));
            got += z;
            d->zeros -= (uint32_t)z;
            continue;
        }
        if (d->in_slice && d->index < d->nvalues) {
            const int palsize = d->palsize;
            const int offset = d->direct_offset - palsize;
            const uint16_t *wval = d->wval;
            int index = d->index;
            int end = d->nvalues;
            if (d->use_zero_run) {
                /* one value, then its zero run */
                end = index + 1;
            } else if ((size_t)(end - index) > n - got) {
                end = index + (int)(n - got);
            }
            for (; index < end; index++) {
                int w = wval[index];
                int v = w < palsize ? d->palette[w] : w + offset;
                int mag = v >> 1;
                dst[got++] = (int16_t)((v & 1) ? -mag : mag);
            }
            if (d->use_zero_run) {
                d->zeros = d->zrun[index - 1 + d->new_palette]; /* the run after that value */
            }
            d->index = index;
            continue;
        }
        int r = vnpu_mlw_refill(d);
        if (r <= 0) {
            *status = r;
            break;
        }
    }
    return got;
}

#endif /* VNPU_H */

/*
 * ethosu-porting-kit virtual NPU: the register file, the registers and operation codes every
 * product shares, and the feature-map registers read alike on each.
 */
#ifndef VNPU_REGS_H
#define VNPU_REGS_H

#include "common/fm.h"

#include <stdint.h>

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

#endif /* VNPU_REGS_H */

/*
 * ethosu-porting-kit virtual NPU: the Ethos-U85 executor, bit-exact with tosa_reference_model
 * on what Vela emits for ExecuTorch graphs (docs/virtual-npu.md, "Ethos-U85", lists what is
 * verified and how).
 *
 * What the U85 adds to the shared interpreter and kernels: 40-bit addresses, OFM transpose
 * and reverse, chained feature maps (an OFM kept inside the NPU for the next elementwise
 * operation), IFM/IFM2/OFM scales with their own rounding modes, OP_SCALAR and broadcast on
 * both operands, the U85 weight order (stride-aware, OFM-interleaved, one stream per weight
 * decoder) with 32- and 48-bit scale records, lutram LUTs and 1/2/3-D DMA. Anything else
 * stops the stream with an error naming the command and the value. This header is what the
 * operations (one file per family) share: the run state, registers, OFM and operands.
 */
#ifndef VNPU_U85_H
#define VNPU_U85_H

#include "common/fm.h"
#include "common/kernel.h"
#include "common/memo.h"
#include "common/rescale.h"
#include "interp.h"
#include "regs.h"

#include <stddef.h>
#include <stdint.h>

/* this architecture's own registers (the shared ones are in regs.h) */
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

/* The U85's run state: the interpreter's, then the chain buffers and kept accumulators. */
struct run85 {
    struct vnpu_exec x; /* first: the interpreter hands the operations &x */
    int macs;           /* MACs per cycle: 128 .. 2048 */
    int cores;          /* weight decoders: one SWD weight stream each */
    struct chain chain[CHAIN_BUFFERS];
    struct chain pending; /* the chain buffer the running operation fills (live at its end) */
    int pending_cb;       /* its index, -1 if the OFM goes to memory */
    size_t chain_end;     /* workspace bytes the live and pending chain buffers occupy */
    int b64_fm; /* the FM_* feature map that may be B64 in the running operation, -1 none */
    struct chain
        acc;      /* accumulators a CONV kept (acc_output DISABLE) for the next (acc_input KEEP) */
    int ofm_none; /* the running operation writes no OFM: its activation_storage may be NONE */
};

static inline struct run85 *u85_run(struct vnpu_exec *x) { return (struct run85 *)(void *)x; }

/* A 40-bit address or stride register: addr_hi in param bits 7:0 (sign-extended). */
static inline int64_t addr40(const struct regs *r, unsigned op)
{
    uint64_t v = ((uint64_t)(r->p1[op & 0xffu] & 0xffu) << 32) | r->w1[op & 0xffu];
    return (v & ((uint64_t)1 << 39)) ? (int64_t)(v | ~(((uint64_t)1 << 40) - 1u)) : (int64_t)v;
}

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

/* The operand value of byte b of an 8-bit map (signed per `is_signed`). */
static inline int64_t byte_value(int b, int is_signed)
{
    return is_signed ? (int64_t)(int8_t)(uint8_t)b : (int64_t)b;
}

struct operand {
    struct fm fm;
    int scalar;
    int64_t value;  /* the scalar, zero point removed */
    int bh, bw, bc; /* broadcast along H, W, C */
};

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

/*
 * The per-channel scale/bias records of an operation (10 bytes per OFM channel):
 * Acc32: bias int32, scale 31-bit, shift; Acc48: bias int48, scale 15-bit, shift.
 */
struct scale_stream {
    const uint8_t *rec;
    int acc48;
};

/* The OFM_SCALE register as one global scale (31-bit multiplier, shift, rounding). */
struct ofm_scale {
    uint32_t scale;
    unsigned shift;
    int round;
};
int u85_ofm_scale(struct run85 *run, struct ofm_scale *s);
/* OFM_SCALE as a rescaler; an OFM scale_mode PER_CHANNEL stops the stream (`what`: "a pool"). */
int u85_ofm_global_rescaler(struct run85 *run, struct vnpu_rescaler *out, const char *what);
/* OFM round_mode (param bits 15:13) -> vnpu_rescale mode; -1 (failed) if not modelled. */
int u85_ofm_round(struct run85 *run, uint32_t param, const char *what);
/*
 * Feature map `which` from the registers. *storage gets its activation_storage; for a
 * chained IFM the chain buffer's layout is taken (the operation sets the extent).
 */
int u85_setup_fm(struct run85 *run, struct fm *f, int which, int *storage, const char *what);
/* The OFM: transpose, reverse, a chain buffer; ofm_done once the inputs are read. */
int u85_setup_ofm(struct run85 *run, struct ofm85 *o);
void u85_ofm_done(struct run85 *run, const struct ofm85 *o);
/* Free the chain buffers this operation read; an OFM chain buffer takes their place. */
void u85_chain_release(struct run85 *run, const struct fm *a, const struct fm *b);
/* The output stage (activation function, lutram LUT, clamps) for this OFM. */
int u85_setup_out(struct run85 *run, struct vnpu_out *o, const struct fm *ofm);
/* The IFM as a kernel operation reads it (extent from the kernel, or a chain buffer's). */
int u85_setup_kernel_ifm(struct run85 *run, struct fm *ifm, const struct kernel *k, int depth);
/* An operation that neither keeps nor takes kept accumulators. */
int u85_check_acc(struct run85 *run);
/* Kept accumulators (u85_acc.c): the acc_input/acc_output modes, and their buffer. */
int u85_kept_modes(struct run85 *run, const char *what, int *keep, int *hold);
int u85_kept_buffer(struct run85 *run, const struct ofm85 *ofm, int keep, int hold, int64_t **kept);
/* `broadcast` 0: the operation ignores the broadcast registers (a stale value from an earlier one). */
int u85_setup_operand(struct run85 *run, struct operand *op, int which, const struct ofm85 *ofm,
                      int broadcast);
/* 8-bit maps (u85_map8.c): each output byte a function of one input byte. */
int u85_axes_of(const struct fm *f, const int axis[3], int reverse, struct axis_map m[3]);
int u85_map8_ok(const struct fm *in, const struct ofm85 *o, struct axis_map ia[3],
                struct axis_map oa[3]);
void u85_map8(const struct fm *in, const struct axis_map ia[3], const struct ofm85 *o,
              const struct axis_map oa[3], const uint8_t table[256]);
/*
 * The 256-byte table of an 8-bit map: the memo's entry for (kind, the n values the operation's
 * table depends on (n <= U85_MAP8_KEY_VALUES), output stage `o`) when an earlier run built it
 * (host builds; *fresh = 0), else memory to build it in (*fresh = 1), the memo's or `own`.
 */
#define U85_MAP8_KEY_VALUES 29
uint8_t *u85_map8_table(enum vnpu_memo_kind kind, const int64_t *values, int n,
                        const struct vnpu_out *o, uint8_t own[256], int *fresh);
/* The per-channel scale records (u85_weights.c). */
int u85_setup_scales(struct run85 *run, struct scale_stream *ss, int channels);
void u85_scale_record(const struct scale_stream *ss, int channel, int64_t *bias, uint32_t *scale,
                      unsigned *shift);

/* The order the U85 weight decoders deliver a convolution's weights in. */
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

/* The weight order of a CONV/DEPTHWISE from the registers and the kernel (u85_weights.c). */
int u85_weight_order(struct run85 *run, const struct kernel *k, int depthwise, const struct fm *ifm,
                     int ofm_depth, struct wgeom *g);
/*
 * The weights W[o][ky][kx][i] of the operation's weight streams (decoded at workspace offset
 * `used`, or the cache's); the operation keeps [used, fixed) of the workspace, the decoder's
 * slices go after it.
 */
int u85_decode_weights(struct run85 *run, const struct wgeom *g, size_t used, size_t fixed,
                       size_t nweights, const int16_t **weights);

/* The operations of the product's table (one file per family). */
vnpu_op u85_op_pool, u85_op_elementwise, u85_op_conv, u85_op_depthwise, u85_op_resize, u85_op_dma;

#endif /* VNPU_U85_H */

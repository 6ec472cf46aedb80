/*
 * ethosu-porting-kit virtual NPU: the one command interpreter of every product.
 *
 * Like the Arm core driver's one device interface with one implementation per product:
 * the loop (decode, register writes, the operation dispatch, the errors) is written once;
 * a product is its instruction set and a table of operations (u55/, u85/). Each run's
 * state (struct vnpu_exec, first member of the product's own state) lives in the memory
 * the driver hands down in vnpu_env, not in a global.
 */
#ifndef VNPU_INTERP_H
#define VNPU_INTERP_H

#include "common/env.h"
#include "common/fm.h"
#include "common/kernel.h"
#include "common/memo.h"
#include "isa.h"
#include "regs.h"

#include <stddef.h>
#include <stdint.h>

struct vnpu_product;

/* What every operation of a run sees: its env, the register file, the command running. */
struct vnpu_exec {
    struct vnpu_env *env;
    const struct vnpu_product *product;
    struct regs regs;
    size_t word; /* index of the command being executed, for error messages */
    uint32_t code;
    struct vnpu_stream_memo *memo; /* set-up kept from earlier runs of the stream, or NULL */
};

/* The bytes the operation at this command word kept under `tag` on an earlier run of the same
 * stream (vnpu_stream_memo), or NULL; vnpu_op_keep keeps them (a set-up that depends on the
 * registers and the run's key alone, and succeeded). */
static inline const void *vnpu_op_kept(const struct vnpu_exec *x, unsigned tag)
{
    return x->memo != NULL ? vnpu_stream_memo_find(x->memo, x->word, tag) : NULL;
}

static inline void vnpu_op_keep(struct vnpu_exec *x, unsigned tag, const void *data, size_t size)
{
    if (x->memo != NULL) {
        vnpu_stream_memo_keep(x->memo, x->word, tag, data, size);
    }
}

/* An operation (NPU_OP_*): 0, or -1 with the error set (vnpu_fail). The function type
 * declares each product's operations, so they cannot drift from the table's entry type. */
typedef int vnpu_op(struct vnpu_exec *x, uint32_t param);
typedef vnpu_op *vnpu_op_fn;

/* Operation codes the table covers (cmd0 0x000..0x013: STOP .. PMU_MASK). */
#define VNPU_NUM_OPS 0x14

struct vnpu_product {
    const struct vnpu_isa *isa;
    const char *name;       /* in messages ("Ethos-U85"), NULL for none */
    const char *cmd1_error; /* the error of a cmd1 operation (0x4100 and up) */
    size_t state_size;      /* the product's run state, struct vnpu_exec first */
    /* after the state is zeroed, before the first command: 0, or -1 with env->error set */
    int (*start)(struct vnpu_exec *x);
    /* 1: OFM_PRECISION bits 15:14 are activation_storage (CHAINED 2, NONE 3: no OFM in a
     * region); 0: they are not (the U55's round_mode) */
    int ofm_storage;
    vnpu_op_fn ops[VNPU_NUM_OPS]; /* NULL: "operation is not modelled" */
};

extern const struct vnpu_product vnpu_product_u55; /* u55/u55_fm.c: U55 and U65 */
extern const struct vnpu_product vnpu_product_u85; /* u85/u85_fm.c */

/*
 * Run a register command stream (no COP1 header) on `product`, its state in env->state.
 * 0 on NPU_OP_STOP, -1 with env->error set. *written gets bit i for every region i an
 * operation named as its output (OFM_REGION, an OFM in memory) or, at a DMA, its destination
 * (DMA0_DST_REGION), whether it wrote there or not: more than the stream wrote, never less.
 */
int vnpu_interp_run(const struct vnpu_product *product, struct vnpu_env *env, const uint32_t *words,
                    size_t nwords, uint32_t *written);

/* Stop the stream: "<product> <command name> at command word N: <message>". Returns -1. */
int vnpu_fail(struct vnpu_exec *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The shared checks, failing the stream with their reason (inline: several per operation). */
static inline int vnpu_check_fm(struct vnpu_exec *x, const struct fm *f, const char *what)
{
    char why[112];
    return vnpu_fm_check(f, what, why, sizeof(why)) != 0 ? vnpu_fail(x, "%s", why) : 0;
}

static inline int vnpu_region_of(struct vnpu_exec *x, unsigned region, uint8_t **mem, size_t *size,
                                 const char *what)
{
    char why[112];
    return vnpu_region(x->env, region, mem, size, what, why, sizeof(why)) != 0
               ? vnpu_fail(x, "%s", why)
               : 0;
}

static inline int vnpu_setup_kernel(struct vnpu_exec *x, struct kernel *k, int oh, int ow)
{
    char why[112];
    return vnpu_kernel_setup(k, x->regs.p0, oh, ow, why, sizeof(why)) != 0 ? vnpu_fail(x, "%s", why)
                                                                           : 0;
}
/*
 * An operation takes the first `need` bytes of the working memory: `decoded` of decoded weights,
 * then `extra` of `what` (what == NULL: the decoded weights and the operation's buffers alone).
 * 0 and the high-water mark raised, or -1 and the error if the working memory is smaller. Every
 * check of the working memory's size is a claim, and the peak it records is what the host
 * measures (ethosu_kit.vnpu.workspace): so a workspace of the measured size passes every check
 * the firmware makes, and one byte less fails one by name.
 */
int vnpu_workspace_claim(struct vnpu_exec *x, size_t need, size_t decoded, const char *what,
                         size_t extra);

#endif /* VNPU_INTERP_H */

/*
 * ethosu-porting-kit virtual NPU: the one interpreter loop. One register file for the whole
 * stream (Vela only emits changes); every operation runs to completion in stream order,
 * which gives the architected result. Anything outside the modelled scope stops the stream
 * with an error that names the command and the value.
 */
#include "interp.h"

#include "common/mutation.h"
#include "ethosu_virtual.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* What next_command found. */
enum {
    CMD_REGISTER,  /* a register write, done */
    CMD_OPERATION, /* an NPU_OP_* (cmd0 below 0x100), for the product to run */
    CMD_UNKNOWN,   /* a code the instruction set does not have */
    CMD_TRUNCATED, /* a cmd1 without its payload word */
    CMD_CMD1_OP    /* a cmd1 operation (0x4100 and up: the U85's NPU_OP_BRANCH) */
};

/*
 * The command at words[*i], as every product encodes it: *code and *param from its
 * first word; a register write goes into r and, like an operation, moves *i past the
 * command. Once per command, not per value.
 */
static inline int next_command(const struct vnpu_isa *isa, struct regs *r, const uint32_t *words,
                               size_t nwords, size_t *i, uint32_t *code, uint32_t *param)
{
    uint32_t w0 = words[*i];
    *code = vnpu_code_of(w0);
    *param = w0 >> 16;
    if (!vnpu_isa_known(isa, *code)) {
        return CMD_UNKNOWN;
    }
    if (*code & 0x4000u) {
        if (*i + 1 >= nwords) {
            return CMD_TRUNCATED;
        }
        uint32_t op = *code & 0x3ffu;
        if (op >= 0x100) {
            return CMD_CMD1_OP;
        }
        r->w1[op] = words[*i + 1];
        r->p1[op] = (uint16_t)*param;
        *i += 2;
        return CMD_REGISTER;
    }
    *i += 1;
    if (*code >= 0x100) {
        r->p0[*code & 0xffu] = (uint16_t)*param;
        return CMD_REGISTER;
    }
    return CMD_OPERATION;
}

int vnpu_fail(struct vnpu_exec *x, const char *fmt, ...)
{
    char msg[ETHOSU_VIRTUAL_ERROR_LEN]; /* the whole message fits: its way out comes last */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const struct vnpu_product *p = x->product;
    const struct vnpu_cmd_desc *cmd = vnpu_isa_find(p->isa, x->code);
    char *error = x->env->error;
    int n = snprintf(error, ETHOSU_VIRTUAL_ERROR_LEN,
                     "%.10s%s%.40s at command word %lu: ", p->name != NULL ? p->name : "",
                     p->name != NULL ? " " : "", cmd != NULL ? cmd->name : "command",
                     (unsigned long)x->word);
    size_t used =
        n < 0 ? 0
              : ((size_t)n < ETHOSU_VIRTUAL_ERROR_LEN ? (size_t)n : ETHOSU_VIRTUAL_ERROR_LEN - 1);
    for (size_t i = 0; msg[i] != '\0' && used + 1 < ETHOSU_VIRTUAL_ERROR_LEN; i++) {
        error[used++] = msg[i];
    }
    error[used] = '\0';
    return -1;
}

int vnpu_workspace_claim(struct vnpu_exec *x, size_t need, size_t decoded, const char *what,
                         size_t extra)
{
    unsigned long have = (unsigned long)x->env->workspace_size;
    if (need <= x->env->workspace_size) {
        vnpu_workspace_used(x->env, need);
        return 0;
    }
    if (what == NULL) {
        return vnpu_fail(x,
                         "needs %lu bytes of working memory (decoded weights), the virtual NPU "
                         "has %lu (ETHOSU_VIRTUAL_WORKSPACE_SIZE or ethosu_virtual_set_workspace)",
                         (unsigned long)need, have);
    }
    return vnpu_fail(
        x,
        "needs %lu bytes of working memory (decoded weights %lu + %s %lu), the virtual "
        "NPU has %lu (ETHOSU_VIRTUAL_WORKSPACE_SIZE or ethosu_virtual_set_workspace)",
        (unsigned long)need, (unsigned long)decoded, what, (unsigned long)extra, have);
}

/* The product's name and a separator, for the errors without a command. */
static const char *label(const struct vnpu_product *p, const char *sep)
{
    return p->name != NULL ? sep : "";
}

/* A stream the decoder cannot go on with (unknown, truncated or a cmd1 operation): -1. */
static int bad_command(struct vnpu_exec *x, int kind, uint32_t param)
{
    const struct vnpu_product *p = x->product;
    if (kind == CMD_UNKNOWN) {
        snprintf(x->env->error, ETHOSU_VIRTUAL_ERROR_LEN,
                 "%s%sunknown command code 0x%04lx (param 0x%04lx) at command word %lu",
                 p->name != NULL ? p->name : "", label(p, ": "), (unsigned long)x->code,
                 (unsigned long)param, (unsigned long)x->word);
        return -1;
    }
    if (kind == CMD_TRUNCATED) {
        return vnpu_fail(x, "truncated: the payload word is missing");
    }
    return vnpu_fail(x, p->cmd1_error, (unsigned long)(x->code & 0x3ffu));
}

/* One NPU_OP_*: 1 at NPU_OP_STOP, else 0 or -1. */
static int run_operation(struct vnpu_exec *x, uint32_t code, uint32_t param)
{
    switch (code) {
    case OP_STOP:
        return 1;
    case OP_IRQ:
    case OP_DMA_WAIT:
    case OP_KERNEL_WAIT:
    case OP_PMU_MASK:
        return 0; /* everything already ran to completion in order */
    default:
        break;
    }
    vnpu_op_fn op = code < VNPU_NUM_OPS ? x->product->ops[code] : NULL;
    return op != NULL ? op(x, param) : vnpu_fail(x, "operation is not modelled");
}

/* The regions operation `code` may write, as bits: a DMA's destination, else the OFM's region,
 * unless the operation writes none (the waits) or its OFM is not in memory (a product whose
 * OFM_PRECISION holds activation_storage: CHAINED goes to the working memory, NONE nowhere). */
static uint32_t destinations(const struct vnpu_product *p, const struct regs *r, uint32_t code)
{
    switch (code) {
    case OP_DMA_START:
        return 1u << (R0(DMA0_DST_REGION) & 7u);
    case OP_STOP:
    case OP_IRQ:
    case OP_DMA_WAIT:
    case OP_KERNEL_WAIT:
    case OP_PMU_MASK:
        return 0;
    default:
        break;
    }
    if (p->ofm_storage && ((R0(OFM_PRECISION) >> 14) & 3u) >= 2u) {
        return 0;
    }
    return 1u << (R0(OFM_REGION) & 7u);
}

int vnpu_interp_run(const struct vnpu_product *product, struct vnpu_env *env, const uint32_t *words,
                    size_t nwords, uint32_t *written)
{
    env->error[0] = '\0';
    if (env->state == NULL || env->state_size < product->state_size) {
        snprintf(env->error, ETHOSU_VIRTUAL_ERROR_LEN,
                 "the executor state needs %lu bytes, the driver has %lu",
                 (unsigned long)product->state_size, (unsigned long)env->state_size);
        return -1;
    }
    memset(env->state, 0, product->state_size);
    struct vnpu_exec *x = (struct vnpu_exec *)env->state;
    x->env = env;
    x->product = product;
    /* what a set-up reads besides the registers: regions, NPU, LUT memory, mutations */
    struct {
        const struct vnpu_product *product;
        uint8_t *region[VNPU_MAX_REGIONS];
        size_t region_size[VNPU_MAX_REGIONS];
        int num_regions;
        uint32_t config, mutations;
        uint8_t *lut;
    } key;
    memset(&key, 0, sizeof(key)); /* the padding too: the key is compared as bytes */
    key.product = product;
    for (int i = 0; i < env->num_regions && i < VNPU_MAX_REGIONS; i++) {
        key.region[i] = env->region[i];
        key.region_size[i] = env->region_size[i];
    }
    key.num_regions = env->num_regions;
    key.config = env->config;
    key.mutations = VNPU_MUTATIONS();
    key.lut = env->lut;
    x->memo = vnpu_stream_memo(words, nwords, &key, sizeof(key));
    vnpu_isa_build_index(product->isa);
    if (product->start != NULL && product->start(x) != 0) {
        return -1;
    }
    size_t i = 0;
    while (i < nwords) {
        uint32_t code;
        uint32_t param;
        x->word = i;
        int kind = next_command(product->isa, &x->regs, words, nwords, &i, &code, &param);
        x->code = code;
        if (kind == CMD_REGISTER) {
            continue;
        }
        if (kind != CMD_OPERATION) {
            return bad_command(x, kind, param);
        }
        *written |= destinations(product, &x->regs, code);
        int rc = run_operation(x, code, param);
        if (rc != 0) {
            return rc > 0 ? 0 : rc;
        }
    }
    snprintf(env->error, ETHOSU_VIRTUAL_ERROR_LEN,
             "%s%scommand stream of %lu words ends without NPU_OP_STOP",
             product->name != NULL ? product->name : "", label(product, " "),
             (unsigned long)nwords);
    return -1;
}

/*
 * ethosu-porting-kit: the virtual NPU's own API, beside the driver API of ethosu_driver.h.
 *
 * Configuration (which NPU it pretends to be, where its working memory is), error text,
 * a command-stream disassembler and the MLW weight decoder, for tests and tools.
 */
#ifndef ETHOSU_VIRTUAL_H
#define ETHOSU_VIRTUAL_H

#include "ethosu_driver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CONFIG / ID of an Ethos-U55-128 with 24 KiB SHRAM, architecture 1.0.6 (what Vela compiles for).
 * An Ethos-U85 is whatever CONFIG/ID its streams carry, e.g. U85-256 0x20000118 / 0x20007000. */
#define ETHOSU_VIRTUAL_U55_128_CONFIG 0x00001807u
#define ETHOSU_VIRTUAL_U55_ID 0x10066001u

/* Working memory for decoded weights (and the U85's chained feature maps): a static default
 * of this many bytes, or the caller's. */
#ifndef ETHOSU_VIRTUAL_WORKSPACE_SIZE
#define ETHOSU_VIRTUAL_WORKSPACE_SIZE (1024u * 1024u)
#endif

/* sizeof(struct ethosu_driver), for bindings that allocate it themselves. */
size_t ethosu_virtual_driver_size(void);

/* Make `drv` report (and accept streams compiled for) this CONFIG/ID. Call after ethosu_init. */
void ethosu_virtual_set_hw(struct ethosu_driver *drv, uint32_t config, uint32_t id);

/* Use `mem` (size bytes, any alignment) as working memory instead of the static default. */
void ethosu_virtual_set_workspace(void *mem, size_t size);

/*
 * Most working memory one operation used since start-up or the last reset. Weight
 * decoding does not depend on the data, so one run of a stream measures what it needs.
 */
size_t ethosu_virtual_workspace_peak(void);
void ethosu_virtual_reset_workspace_peak(void);

/*
 * The lowest stack address seen at the entry of ethosu_invoke_v3 since start-up (0 if
 * never entered): how deep the caller's stack is where a driver takes over. A real
 * driver's own path from there is a static bound (the kit's stack sizing adds it).
 */
uintptr_t ethosu_virtual_lowest_invoke_frame(void);

/*
 * Called by ethosu_invoke_v3 when a job starts and when it ends; weak, default nothing.
 * The kit measures its stack there without the virtual NPU's own frames, which a real
 * driver does not have (sdk/src/usage.c: `usage: stack_cpu`).
 */
void ethosu_virtual_stack_enter(void);
void ethosu_virtual_stack_leave(void);

/*
 * One inference of a host binding in one call: `weights_size` bytes from `weights` copied
 * into base_addr[0], the regions `zero_regions` names zeroed (bit i: base_addr[i]), the
 * `num_copy_in` copies made (a delegate's inputs from the binding's own buffers into the
 * zeroed scratch), then ethosu_invoke_v3 with the rest. A binding through a foreign-function
 * layer pays per call and per argument, more than a small model's whole run; prepared once, a
 * job is one pointer (codegen/ethosu_kit/vnpu/npu.py keeps the same layout).
 *
 * The weights are copied on the first run only while they stay in place: `weights_kept` is
 * the library's (zero when the job is made), set after a run that left base_addr[0] holding
 * the weights (no operation of the stream named region 0 as its output or DMA destination,
 * region 0 overlaps no other region nor copy, and is not zeroed), cleared by any other run.
 * A caller that writes region 0 itself (so also one running another job whose region 0 is
 * the same buffer), or changes `weights` or its bytes, zeroes it.
 */
struct ethosu_virtual_copy {
    const void *src;
    void *dst;
    size_t bytes;
};
struct ethosu_virtual_job {
    struct ethosu_driver *drv;
    const void *custom_data;
    uint64_t *base_addr;
    const size_t *base_addr_size;
    const void *weights;
    size_t weights_size;
    int custom_data_size;
    int num_base_addr;
    uint32_t zero_regions;
    int num_copy_in;
    const struct ethosu_virtual_copy *copy_in;
    uint32_t weights_kept; /* the library's: see above */
};
int ethosu_virtual_run_job(struct ethosu_virtual_job *job);

/* The reason the last job of `drv` failed ("" if it did not). */
const char *ethosu_virtual_last_error(const struct ethosu_driver *drv);

/* Called with the error text whenever a job fails; weak, default does nothing. */
void ethosu_virtual_report_error(const char *message);

/* Deliberately wrong rules, to prove the tests notice them. 0 = the real NPU. */
enum ethosu_virtual_mutation {
    ETHOSU_VIRTUAL_MUT_NONE = 0,
    ETHOSU_VIRTUAL_MUT_NATURAL_FLOOR = 1u << 0, /* NATURAL rounding truncates instead */
    ETHOSU_VIRTUAL_MUT_NO_BIAS = 1u << 1,       /* convolutions drop the bias */
    ETHOSU_VIRTUAL_MUT_CLAMP_32BIT = 1u << 2,   /* 32-bit OFMs get clamped to ACTIVATION_MIN/MAX */
    ETHOSU_VIRTUAL_MUT_SHIFT_18 = 1u << 3,      /* fixed shift 18 instead of 19 for 8-bit ADD/SUB */
    /* Ethos-U85 rules */
    ETHOSU_VIRTUAL_MUT_U85_NO_SERPENTINE =
        1u << 4, /* weight order walks every kernel row left to right */
    ETHOSU_VIRTUAL_MUT_U85_MINMAX_UNSCALED = 1u << 5, /* MIN/MAX ignore the IFM/IFM2 scales */
    ETHOSU_VIRTUAL_MUT_U85_AVG_FLOOR = 1u << 6,       /* AVERAGE pool divides rounding down */
    ETHOSU_VIRTUAL_MUT_U85_TRANSPOSE_SWAP = 1u << 7,  /* activation_transpose WCH taken as CHW */
    ETHOSU_VIRTUAL_MUT_U85_FWD_NO_INTERLEAVE =
        1u << 8, /* an FWD stream read as if one decoder had it all */
    ETHOSU_VIRTUAL_MUT_U85_SPARSE_AS_DENSE =
        1u << 9, /* 2:4 sparse weights walked in the dense order */
    ETHOSU_VIRTUAL_MUT_U85_CMP_TRUE_ONE = 1u << 10, /* a compare's true is 1 instead of all ones */
    ETHOSU_VIRTUAL_MUT_U85_B64_LOW32 = 1u
                                       << 11, /* B64 accumulators read back as their low 32 bits */
    ETHOSU_VIRTUAL_MUT_U85_GATHER_NO_INDEX = 1u
                                             << 12, /* an indexed DMA takes row i for row IDX[i] */
    ETHOSU_VIRTUAL_MUT_U85_ACC_KEEP_AS_RESET =
        1u << 13, /* acc_input KEEP starts from the bias again */
    ETHOSU_VIRTUAL_MUT_U85_CONV_IFM2_IGNORED =
        1u << 14, /* a CONV's acc_input IFM2 partial sum is dropped */
};
#ifdef ETHOSU_VIRTUAL_MUTATIONS
/* Only in the host test library (built with -DETHOSU_VIRTUAL_MUTATIONS): firmware has none. */
void ethosu_virtual_set_mutation(uint32_t mask);
#endif

/*
 * Disassemble the command at words[*index] into buf as
 * "<byte offset> <code> <NAME> field=value ..." and advance *index.
 * Returns 0, or -1 for an unknown command (buf names the code) or a truncated one.
 */
int ethosu_virtual_disasm(const uint32_t *words, size_t nwords, size_t *index, char *buf,
                          size_t len);
/* The same for the instruction set of CONFIG.product `product` (0 U55, 1 U65, 2 U85). */
int ethosu_virtual_disasm_product(uint32_t product, const uint32_t *words, size_t nwords,
                                  size_t *index, char *buf, size_t len);

/*
 * Decode an MLW weight stream into at most max_out 9-bit values.
 * Returns the number of values, -1 if the stream is malformed, -2 if out is too small.
 */
long ethosu_virtual_mlw_decode(const uint8_t *in, size_t len, int16_t *out, size_t max_out);

/*
 * Decode an Ethos-U85 fast-weight-decoder (FWD) stream into at most max_out values
 * (every code up to the stream's 256-bit padding). Returns the number of values,
 * -1 if the stream has no header, -2 if out is too small.
 */
long ethosu_virtual_fwd_decode(const uint8_t *in, size_t len, int16_t *out, size_t max_out);

#ifdef __cplusplus
}
#endif

#endif /* ETHOSU_VIRTUAL_H */

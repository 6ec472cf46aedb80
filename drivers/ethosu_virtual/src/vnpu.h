/*
 * ethosu-porting-kit virtual NPU: internal interfaces between the driver shim,
 * the command interpreter, the MLW decoder and the command table.
 */
#ifndef VNPU_H
#define VNPU_H

#include "ethosu_virtual.h"

#include <stddef.h>
#include <stdint.h>

#define VNPU_MAX_REGIONS 8

struct vnpu_cmd_desc
{
    uint16_t code;
    const char *name;
    const char *fields;
};

const struct vnpu_cmd_desc *vnpu_find_cmd(uint32_t code);
uint32_t vnpu_code_of(uint32_t word0);

/* What one run of a command stream sees: the regions and the NPU it runs on. */
struct vnpu_env
{
    uint8_t *region[VNPU_MAX_REGIONS];
    size_t region_size[VNPU_MAX_REGIONS];
    int num_regions;
    uint32_t config; /* CONFIG register: MAC count and SHRAM size select weight order and LUT address */
    uint8_t *lut;    /* 2 KiB LUT area at the top of SHRAM */
    char *error;     /* ETHOSU_VIRTUAL_ERROR_LEN bytes */
};

/* Run a register command stream (no COP1 header). 0 on NPU_OP_STOP, -1 with env->error set. */
int vnpu_run(struct vnpu_env *env, const uint32_t *words, size_t nwords);

/* Working memory for weight decoding (the static default or the caller's). */
void *vnpu_workspace(size_t *size);
/* Record that an operation used `bytes` of it (the high-water mark ethosu_virtual_workspace_peak reads). */
void vnpu_workspace_used(size_t bytes);

extern uint32_t vnpu_mutation_mask; /* ethosu_virtual_mutation bits, 0 = the real NPU */

/* Pull decoder of an MLW weight stream: one 9-bit value at a time. */
struct vnpu_mlw
{
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
/* 1 and *value set, 0 at the end of the stream, -1 if malformed (or the slice does not fit). */
int vnpu_mlw_next(struct vnpu_mlw *d, int16_t *value);

#endif /* VNPU_H */

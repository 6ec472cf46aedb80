/*
 * ethosu-porting-kit virtual NPU: what one run of a command stream sees, handed down by the
 * driver: the regions, the NPU it runs on, the working memory and the executor state.
 * Executors depend on these arguments only, never on the driver's globals.
 */
#ifndef VNPU_ENV_H
#define VNPU_ENV_H

#include <stddef.h>
#include <stdint.h>

#define VNPU_MAX_REGIONS 8

/* CONFIG.product (bits 31:28) */
#define VNPU_PRODUCT_U55 0u
#define VNPU_PRODUCT_U65 1u
#define VNPU_PRODUCT_U85 2u

struct vnpu_env {
    uint8_t *region[VNPU_MAX_REGIONS];
    size_t region_size[VNPU_MAX_REGIONS];
    int num_regions;
    uint32_t
        config; /* CONFIG register: MAC count and SHRAM size select weight order and LUT address */
    uint8_t *lut; /* 2 KiB LUT area at the top of SHRAM */
    char *error;  /* ETHOSU_VIRTUAL_ERROR_LEN bytes */
    /* working memory for decoded weights and the U85's chain buffers (the driver's) */
    uint8_t *workspace;
    size_t workspace_size;
    size_t peak; /* most of it one operation of this run used (the driver keeps the maximum) */
    void *state; /* the executor state of the run: register file and product state */
    size_t state_size;
};

/* Record that an operation used `bytes` of the workspace. */
static inline void vnpu_workspace_used(struct vnpu_env *env, size_t bytes)
{
    if (bytes > env->peak) {
        env->peak = bytes;
    }
}

#endif /* VNPU_ENV_H */

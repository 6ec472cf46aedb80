/*
 * NPU self-test: runs every Ethos-U delegate's own command stream on the board's NPU
 * and compares every output byte with the expected bytes built into the image.
 *
 * For each delegate, as the ExecuTorch Ethos-U delegate does: the command stream and
 * the weights are read in place from the placed network, the scratch is the plan's
 * temp pool (its start, 16-byte aligned), the inputs are copied to their Vela offsets
 * in the scratch, and the driver runs the stream with base addresses
 * [weights, scratch, fast scratch]. Cache maintenance is the driver's (its flush and
 * invalidate hooks, which the port implements): the app does none, so a port whose
 * hooks are wrong fails here. The rest of the scratch is filled with a pattern first,
 * so an output the NPU never writes cannot pass by accident.
 *
 * Prints one line per delegate, PASS or the first difference, and exits with
 * KIT_EXIT_OK (0), KIT_EXIT_FAIL (1: a mismatch), KIT_EXIT_NPU_ERROR (9) or
 * KIT_EXIT_SETUP (10); KIT_EXIT_DATA_MISMATCH (11) when the placed .ptd data lacks a key
 * the program reads (checked before any delegate runs).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ethosu_driver.h"
#include "kit/app.h"
#include "kit/log.h"
#include "kit/platform.h"
#include "kit/timing.h"
#include "kit/usage.h"
#include "kit_board_config.h"
#include "kit_memory_config.h"
#include "kit_model.h"
#include "kit_selftest.h"

#if defined(__has_include)
#if __has_include("kit_ptd.h")
/* The program's Vela blocks are in named external data (.ptd, docs/ptd.md). */
#include "kit/ptd_program.h"
#define KIT_SELFTEST_HAVE_PTD 1
#endif
#endif

/* The exit codes: the kit's one table (kit_exit_codes.h, via kit/platform.h). */
enum {
    SELFTEST_PASS = KIT_EXIT_OK,
    SELFTEST_MISMATCH = KIT_EXIT_FAIL, /* an output differs from the expected bytes */
    SELFTEST_NPU_ERROR =
        KIT_EXIT_NPU_ERROR, /* the driver refused the stream or the NPU reported an error */
    SELFTEST_SETUP = KIT_EXIT_SETUP, /* no NPU driver, or the plan cannot hold a delegate */
};

#define SCRATCH_FILL 0xA5u
#define NUM_BASE_ADDRS 3 /* weights, scratch, fast scratch: as the ExecuTorch delegate */

#if defined(KIT_SELFTEST_PROGRAMS)
/* An image of several programs: each delegate carries its program's network, temp pool
 * and fast scratch (kit_selftest.h). */
#include "kit/semihosting_files.h"
#define DELEGATE_NETWORK(d) ((d)->network)
#define DELEGATE_SCRATCH(d) ((d)->scratch)
#define DELEGATE_SCRATCH_CAPACITY(d) ((d)->scratch_capacity)
#define DELEGATE_FAST_SCRATCH(d) ((uintptr_t)(d)->fast_scratch)
#define DELEGATE_FAST_SCRATCH_SIZE(d) ((d)->fast_scratch_size)
#define DELEGATE_PROGRAM(d) ((d)->program)
#define DELEGATE_DOT "."
#else
#if defined(KIT_FAST_SCRATCH_SIZE) && KIT_FAST_SCRATCH_SIZE > 0
extern uint8_t kit_fast_scratch[];
#define FAST_SCRATCH ((uintptr_t)kit_fast_scratch)
#else
#define FAST_SCRATCH ((uintptr_t)0)
#endif
#define DELEGATE_NETWORK(d) ((void)(d), KIT_SELFTEST_NETWORK)
#define DELEGATE_SCRATCH(d) ((void)(d), KIT_SELFTEST_SCRATCH)
#define DELEGATE_SCRATCH_CAPACITY(d) ((void)(d), (uint32_t)KIT_SELFTEST_SCRATCH_SIZE)
#define DELEGATE_FAST_SCRATCH(d) ((void)(d), FAST_SCRATCH)
#define DELEGATE_FAST_SCRATCH_SIZE(d) ((void)(d), (size_t)KIT_FAST_SCRATCH_SIZE)
#define DELEGATE_PROGRAM(d) ((void)(d), "")
#define DELEGATE_DOT ""
#endif

/* A signed element of 1, 2 or 4 little-endian bytes. */
static int32_t element(const uint8_t *p, uint32_t elem_size)
{
    switch (elem_size) {
    case 2:
        return (int16_t)(uint16_t)(p[0] | (p[1] << 8));
    case 4:
        return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                         ((uint32_t)p[3] << 24));
    default:
        return (int8_t)p[0];
    }
}

/* First differing element of one output (or -1) and how many elements differ. */
static long first_difference(const uint8_t *got, const uint8_t *want,
                             const kit_selftest_tensor_t *t, uint32_t *count)
{
    const uint32_t size = t->elem_size ? t->elem_size : 1u;
    long first = -1;
    *count = 0;
    for (uint32_t i = 0; i < t->nbytes; i += size) {
        if (memcmp(got + i, want + i, size) != 0) {
            if (first < 0) {
                first = (long)(i / size);
            }
            ++*count;
        }
    }
    return first;
}

#if defined(KIT_SELFTEST_HAVE_PTD)
/* Delegate k's external blocks, read in place from their .ptd (the start-up check found
 * every key, so a lookup fails only on a file changed since). */
static int external_blocks(uint32_t k, const uint8_t **cmd, size_t *cmd_size,
                           const uint8_t **weights, size_t *weight_size)
{
    int rc = 0;
#define KIT_SELFTEST_BLOCK(index, block, tag, key)                                                 \
    if ((index) == k) {                                                                            \
        const int weight = strcmp(block, "weight_data") == 0;                                      \
        rc |= kit_ptd_lookup(kit_ptd_files, KIT_PTD_COUNT, tag, key, strlen(key),                  \
                             weight ? weights : cmd, weight ? weight_size : cmd_size);             \
    }
    KIT_PTD_DELEGATE_BLOCKS(KIT_SELFTEST_BLOCK)
#undef KIT_SELFTEST_BLOCK
    return rc;
}
#endif

static int run_delegate(struct ethosu_driver *drv, uint32_t k, const kit_selftest_delegate_t *d)
{
    uint8_t *scratch = DELEGATE_SCRATCH(d);
    const uint8_t *network = DELEGATE_NETWORK(d);
    const uint8_t *cmd = network + d->cmd_offset;
    size_t cmd_size = d->cmd_size;
    const uint8_t *weights = network + d->weight_offset;
    size_t weight_size = d->weight_size;
#if defined(KIT_SELFTEST_HAVE_PTD)
    if (external_blocks(k, &cmd, &cmd_size, &weights, &weight_size) != 0) {
        kit_printf("delegate %u: FAIL an external block is not in its .ptd\n", (unsigned)k);
        return KIT_EXIT_DATA_MISMATCH;
    }
#endif
    if (d->scratch_size > DELEGATE_SCRATCH_CAPACITY(d)) {
        kit_printf("delegate %u: FAIL scratch of %u bytes, the temp pool has %u\n", (unsigned)k,
                   (unsigned)d->scratch_size, (unsigned)DELEGATE_SCRATCH_CAPACITY(d));
        return SELFTEST_SETUP;
    }
    memset(scratch, SCRATCH_FILL, d->scratch_size);
    for (uint32_t i = 0; i < d->num_inputs; ++i) {
        const kit_selftest_tensor_t *t = &d->inputs[i];
        memcpy(scratch + t->scratch_offset, KIT_SELFTEST_VECTORS + t->vector_offset, t->nbytes);
    }

    uint64_t base[NUM_BASE_ADDRS] = {
        (uint64_t)(uintptr_t)weights,
        (uint64_t)(uintptr_t)scratch,
        (uint64_t)DELEGATE_FAST_SCRATCH(d),
    };
    const size_t size[NUM_BASE_ADDRS] = {weight_size, d->scratch_size,
                                         DELEGATE_FAST_SCRATCH_SIZE(d)};
    const uint64_t start = kit_cycles();
    const int rc = ethosu_invoke_v3(drv, cmd, (int)cmd_size, base, size, NUM_BASE_ADDRS, NULL);
    const uint64_t cycles = kit_cycles() - start;
    if (rc != 0) {
        kit_printf("delegate %u: FAIL ethosu_invoke_v3 returned %d (%s%s%s delegate %u, %u B "
                   "commands)\n",
                   (unsigned)k, rc, DELEGATE_PROGRAM(d), DELEGATE_DOT, d->method,
                   (unsigned)d->delegate_index, (unsigned)cmd_size);
        return SELFTEST_NPU_ERROR;
    }

    uint32_t compared = 0;
    for (uint32_t o = 0; o < d->num_outputs; ++o) {
        const kit_selftest_tensor_t *t = &d->outputs[o];
        compared += t->nbytes;
        const uint8_t *got = scratch + t->scratch_offset;
        const uint8_t *want = KIT_SELFTEST_VECTORS + t->vector_offset;
        uint32_t differ = 0;
        const long at = first_difference(got, want, t, &differ);
        if (at >= 0) {
            const uint32_t byte = (uint32_t)at * t->elem_size;
            kit_printf("delegate %u: FAIL output %u index %ld: got %ld, want %ld (%s; %u of %u "
                       "elements differ)\n",
                       (unsigned)k, (unsigned)o, at, (long)element(got + byte, t->elem_size),
                       (long)element(want + byte, t->elem_size), t->key, (unsigned)differ,
                       (unsigned)(t->nbytes / t->elem_size));
            return SELFTEST_MISMATCH;
        }
    }
    kit_printf("delegate %u: PASS (%s%s%s delegate %u: %u output(s), %u bytes compared, %u "
               "cycles)\n",
               (unsigned)k, DELEGATE_PROGRAM(d), DELEGATE_DOT, d->method,
               (unsigned)d->delegate_index, (unsigned)d->num_outputs, (unsigned)compared,
               (unsigned)cycles);
    return SELFTEST_PASS;
}

#if defined(KIT_SELFTEST_PROGRAMS)
/* The program named by `--kit-program=<name>` on the semihosting command line (`ethosu-kit
 * run --program <name>`), "" for every program, NULL (said why) for a name the image
 * does not have. */
static const char *chosen_program(void)
{
    static char cmdline[128];
    static const char *const names[] = {
#define KIT_PROGRAM_NAME(name, ...) #name,
        KIT_PROGRAMS(KIT_PROGRAM_NAME)
#undef KIT_PROGRAM_NAME
    };
    static const char flag[] = "--kit-program=";
    if (kit_semihost_cmdline(cmdline, sizeof cmdline) != 0) {
        return "";
    }
    const char *at = strstr(cmdline, flag);
    if (at == NULL) {
        return "";
    }
    char *name = (char *)at + sizeof flag - 1;
    name[strcspn(name, " ")] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        if (strcmp(name, names[i]) == 0) {
            kit_printf("selftest: program %s only\n", name);
            return name;
        }
    }
    kit_printf("selftest: FAIL no program named %s in this image (it has", name);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        kit_printf(" %s", names[i]);
    }
    kit_printf(")\n");
    return NULL;
}
#else
static const char *chosen_program(void) { return ""; }
#endif

static int selftest(void)
{
    kit_stack_paint();
    if (kit_platform_init() != 0) {
        return KIT_EXIT_INIT;
    }
    kit_printf("selftest: board %s, mode %s, model for %s, %u delegate(s)\n", kit_board_name(),
               KIT_MEMORY_MODE, KIT_ACCELERATOR, (unsigned)KIT_SELFTEST_NUM_DELEGATES);
#if defined(KIT_SELFTEST_PROGRAMS)
    kit_printf("selftest: %u programs\n", (unsigned)KIT_SELFTEST_NUM_PROGRAMS);
#endif
    kit_printf("selftest: vectors: %s\n", KIT_SELFTEST_VECTORS_SOURCE);
#if defined(KIT_SELFTEST_HAVE_PTD)
    if (kit_ptd_check_program() != 0) {
        return KIT_EXIT_DATA_MISMATCH;
    }
#endif
    struct ethosu_driver *drv = (struct ethosu_driver *)kit_npu_driver();
    if (drv == NULL) {
        kit_printf("selftest: FAIL no NPU driver (build with --npu driver or virtual)\n");
        return SELFTEST_SETUP;
    }
    const char *only = chosen_program();
    if (only == NULL) {
        return SELFTEST_SETUP;
    }
    int result = SELFTEST_PASS;
    uint32_t passed = 0;
    uint32_t ran = 0;
    for (uint32_t k = 0; k < KIT_SELFTEST_NUM_DELEGATES; ++k) {
        const kit_selftest_delegate_t *d = &kit_selftest_delegates[k];
        if (only[0] != '\0' && strcmp(only, DELEGATE_PROGRAM(d)) != 0) {
            continue;
        }
        ++ran;
        const int rc = run_delegate(drv, k, d);
        if (rc == SELFTEST_PASS) {
            ++passed;
        } else if (result == SELFTEST_PASS) {
            result = rc;
        }
    }
    kit_usage_report_stack_heap();
    kit_printf("SELFTEST %s (%u of %u delegates passed)\n",
               result == SELFTEST_PASS ? "PASS" : "FAIL", (unsigned)passed, (unsigned)ran);
    return result;
}

int ethosu_kit_app_main(void) { return kit_app_result(selftest()); }

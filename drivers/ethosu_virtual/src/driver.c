/*
 * ethosu-porting-kit virtual NPU: the Ethos-U core driver API over the interpreter.
 *
 * Behaves like the driver towards its callers (COP1 and alignment checks, the
 * OPTIMIZER_CONFIG check, the fast-memory override of base_addr[2], reserve/release,
 * the weak hooks in the same order), but runs the command stream synchronously
 * inside ethosu_invoke_async, so ethosu_wait returns at once and no IRQ is needed.
 */
#include "common/env.h"
#include "common/mlw.h"
#include "common/mutation.h"
#include "ethosu_virtual.h"
#include "interp.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define COP1_FOURCC 0x31504f43u
#define DA_OPTIMIZER_CONFIG 1u
#define DA_COMMAND_STREAM 2u
#define DA_NOP 5u
#define FAST_MEMORY_INDEX 2

static struct ethosu_driver *registered_drivers;
static void *driver_mutex;
static void *driver_semaphore;

#ifdef ETHOSU_VIRTUAL_MUTATIONS
/* the host test library only (common/mutation.h) */
uint32_t vnpu_mutation_mask;

void ethosu_virtual_set_mutation(uint32_t mask) { vnpu_mutation_mask = mask; }
#endif

#ifdef ETHOSU_VIRTUAL_WORKSPACE_SECTION
/* firmware: a NOLOAD section the linker script puts in external RAM, not the TCMs */
#define WORKSPACE_PLACEMENT __attribute__((aligned(16), section(ETHOSU_VIRTUAL_WORKSPACE_SECTION)))
#else
#define WORKSPACE_PLACEMENT __attribute__((aligned(16)))
#endif
static uint8_t default_workspace[ETHOSU_VIRTUAL_WORKSPACE_SIZE] WORKSPACE_PLACEMENT;
static void *workspace_mem = default_workspace;
static size_t workspace_size = sizeof(default_workspace);
static size_t workspace_peak;

size_t ethosu_virtual_workspace_peak(void) { return workspace_peak; }

void ethosu_virtual_reset_workspace_peak(void) { workspace_peak = 0; }

void ethosu_virtual_set_workspace(void *mem, size_t size)
{
    /* keep 8-byte alignment for the decoded weights */
    uintptr_t p = (uintptr_t)mem;
    uintptr_t aligned = (p + 7u) & ~(uintptr_t)7u;
    if (mem == NULL || size < (size_t)(aligned - p) + 64u) {
        workspace_mem = default_workspace;
        workspace_size = sizeof(default_workspace);
        return;
    }
    workspace_mem = (void *)aligned;
    workspace_size = size - (size_t)(aligned - p);
}

long ethosu_virtual_mlw_decode(const uint8_t *in, size_t len, int16_t *out, size_t max_out)
{
    struct vnpu_mlw d;
    vnpu_mlw_init(&d, in, len, workspace_mem, workspace_size); /* its slices */
    size_t n = 0;
    int16_t v;
    int r;
    while ((r = vnpu_mlw_next(&d, &v)) == 1) {
        if (n >= max_out) {
            return -2;
        }
        out[n++] = v;
    }
    return r < 0 ? -1 : (long)n;
}

/* ---- weak hooks: the defaults of a single-threaded bare-metal system ------------------- */

void __attribute__((weak)) ethosu_flush_dcache(const uint64_t *base_addr,
                                               const size_t *base_addr_size, int num)
{
    (void)base_addr;
    (void)base_addr_size;
    (void)num;
}

void __attribute__((weak)) ethosu_invalidate_dcache(const uint64_t *base_addr,
                                                    const size_t *base_addr_size, int num)
{
    (void)base_addr;
    (void)base_addr_size;
    (void)num;
}

static int mutex_token;
static int semaphore_count; /* the virtual NPU never blocks: count only */

void *__attribute__((weak)) ethosu_mutex_create(void) { return &mutex_token; }

void __attribute__((weak)) ethosu_mutex_destroy(void *mutex) { (void)mutex; }

int __attribute__((weak)) ethosu_mutex_lock(void *mutex)
{
    (void)mutex;
    return 0;
}

int __attribute__((weak)) ethosu_mutex_unlock(void *mutex)
{
    (void)mutex;
    return 0;
}

void *__attribute__((weak)) ethosu_semaphore_create(void) { return &semaphore_count; }

void __attribute__((weak)) ethosu_semaphore_destroy(void *sem) { (void)sem; }

int __attribute__((weak)) ethosu_semaphore_take(void *sem, uint64_t timeout)
{
    (void)sem;
    (void)timeout;
    return 0;
}

int __attribute__((weak)) ethosu_semaphore_give(void *sem)
{
    (void)sem;
    return 0;
}

void __attribute__((weak)) ethosu_inference_begin(struct ethosu_driver *drv, void *user_arg)
{
    (void)drv;
    (void)user_arg;
}

void __attribute__((weak)) ethosu_inference_end(struct ethosu_driver *drv, void *user_arg)
{
    (void)drv;
    (void)user_arg;
}

uint64_t __attribute__((weak)) ethosu_address_remap(uint64_t address, int index)
{
    (void)index;
    return address;
}

unsigned int __attribute__((weak)) ethosu_config_select(uint64_t address, int index)
{
    (void)address;
    (void)index;
    return 0;
}

void __attribute__((weak)) ethosu_virtual_report_error(const char *message)
{
#ifdef ETHOSU_VIRTUAL_REPORT_STDERR
    /* firmware: the delegate only says "invocation failed"; the reason goes to the UART */
    fprintf(stderr, "ethosu_virtual: %s\n", message);
#else
    (void)message;
#endif
}

/* ---- driver life cycle ---------------------------------------------------------------------- */

static int job_error(struct ethosu_driver *drv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int job_error(struct ethosu_driver *drv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(drv->error, sizeof(drv->error), fmt, ap);
    va_end(ap);
    ethosu_virtual_report_error(drv->error);
    return -1;
}

int ethosu_init(struct ethosu_driver *drv, void *const base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable)
{
    (void)base_address; /* no registers: the NPU is this library */
    if (drv == NULL) {
        return -1;
    }
    if (driver_mutex == NULL) {
        driver_mutex = ethosu_mutex_create();
        driver_semaphore = ethosu_semaphore_create();
        if (driver_mutex == NULL || driver_semaphore == NULL) {
            return -1;
        }
    }
    memset(drv, 0, sizeof(*drv));
    drv->fast_memory = (uint64_t)(uintptr_t)fast_memory;
    drv->fast_memory_size = fast_memory_size;
    drv->secure = secure_enable;
    drv->privileged = privilege_enable;
    drv->config = ETHOSU_VIRTUAL_U55_128_CONFIG;
    drv->id = ETHOSU_VIRTUAL_U55_ID;
    drv->semaphore = ethosu_semaphore_create();
    if (drv->semaphore == NULL) {
        return -1;
    }
    ethosu_mutex_lock(driver_mutex);
    struct ethosu_driver **p = &registered_drivers;
    while (*p != NULL && *p != drv) {
        p = &(*p)->next;
    }
    if (*p == NULL) {
        *p = drv;
        drv->next = NULL;
    }
    ethosu_mutex_unlock(driver_mutex);
    ethosu_semaphore_give(driver_semaphore);
    return 0;
}

void ethosu_deinit(struct ethosu_driver *drv)
{
    ethosu_mutex_lock(driver_mutex);
    for (struct ethosu_driver **p = &registered_drivers; *p != NULL; p = &(*p)->next) {
        if (*p == drv) {
            *p = drv->next;
            break;
        }
    }
    ethosu_mutex_unlock(driver_mutex);
    ethosu_semaphore_destroy(drv->semaphore);
    drv->semaphore = NULL;
}

size_t ethosu_virtual_driver_size(void) { return sizeof(struct ethosu_driver); }

void ethosu_virtual_set_hw(struct ethosu_driver *drv, uint32_t config, uint32_t id)
{
    drv->config = config;
    drv->id = id;
}

const char *ethosu_virtual_last_error(const struct ethosu_driver *drv) { return drv->error; }

int ethosu_soft_reset(struct ethosu_driver *drv)
{
    memset(drv->lut, 0, sizeof(drv->lut));
    return 0;
}

int ethosu_request_power(struct ethosu_driver *drv)
{
    if (drv->power_request_counter++ == 0) {
        return ethosu_soft_reset(drv);
    }
    return 0;
}

void ethosu_release_power(struct ethosu_driver *drv)
{
    if (drv->power_request_counter > 0) {
        drv->power_request_counter--;
    }
}

void ethosu_get_driver_version(struct ethosu_driver_version *ver)
{
    ver->major = ETHOSU_DRIVER_VERSION_MAJOR;
    ver->minor = ETHOSU_DRIVER_VERSION_MINOR;
    ver->patch = ETHOSU_DRIVER_VERSION_PATCH;
}

void ethosu_get_hw_info(struct ethosu_driver *drv, struct ethosu_hw_info *hw)
{
    uint32_t id = drv->id;
    uint32_t cfg = drv->config;
    hw->version.version_status = id & 0xfu;
    hw->version.version_minor = (id >> 4) & 0xfu;
    hw->version.version_major = (id >> 8) & 0xfu;
    hw->version.product_major = (id >> 12) & 0xfu;
    hw->version.arch_patch_rev = (id >> 16) & 0xfu;
    hw->version.arch_minor_rev = (id >> 20) & 0xffu;
    hw->version.arch_major_rev = (id >> 28) & 0xfu;
    hw->cfg.macs_per_cc = cfg & 0xfu;
    hw->cfg.cmd_stream_version = (cfg >> 4) & 0xfu;
    hw->cfg.custom_dma = (cfg >> 30) & 1u;
}

void ethosu_irq_handler(struct ethosu_driver *drv)
{
    (void)drv; /* jobs finish inside ethosu_invoke_async; there is no interrupt */
}

struct ethosu_driver *ethosu_reserve_driver(void)
{
    struct ethosu_driver *found = NULL;
    ethosu_semaphore_take(driver_semaphore, ETHOSU_SEMAPHORE_WAIT_FOREVER);
    ethosu_mutex_lock(driver_mutex);
    for (struct ethosu_driver *d = registered_drivers; d != NULL; d = d->next) {
        if (!d->reserved) {
            d->reserved = true;
            found = d;
            break;
        }
    }
    ethosu_mutex_unlock(driver_mutex);
    return found;
}

struct ethosu_driver *ethosu_reserve_driver_ex(uint32_t product, uint32_t log2_macs)
{
    struct ethosu_driver *found = NULL;
    ethosu_semaphore_take(driver_semaphore, ETHOSU_SEMAPHORE_WAIT_FOREVER);
    ethosu_mutex_lock(driver_mutex);
    for (struct ethosu_driver *d = registered_drivers; d != NULL; d = d->next) {
        if (!d->reserved && ((d->config >> 28) & 0xfu) == product &&
            (d->config & 0xfu) == log2_macs) {
            d->reserved = true;
            found = d;
            break;
        }
    }
    ethosu_mutex_unlock(driver_mutex);
    return found;
}

void ethosu_release_driver(struct ethosu_driver *drv)
{
    ethosu_mutex_lock(driver_mutex);
    if (drv != NULL && drv->reserved) {
        if (drv->job.state == ETHOSU_JOB_RUNNING || drv->job.state == ETHOSU_JOB_DONE) {
            ethosu_soft_reset(drv);
            drv->job.state = ETHOSU_JOB_IDLE;
        }
        drv->reserved = false;
        ethosu_semaphore_give(driver_semaphore);
    }
    ethosu_mutex_unlock(driver_mutex);
}

int ethosu_get_product_config_from_cop_data(const void *custom_data_ptr, const int custom_data_size,
                                            uint32_t *product_out, uint32_t *log2_macs_out)
{
    const uint32_t *w = (const uint32_t *)custom_data_ptr;
    if (w == NULL || custom_data_size < 16 || w[0] != COP1_FOURCC ||
        (w[1] & 0xffu) != DA_OPTIMIZER_CONFIG) {
        return -1;
    }
    *product_out = (w[2] >> 28) & 0xfu;
    *log2_macs_out = w[2] & 0xfu;
    return 0;
}

/* ---- jobs ----------------------------------------------------------------------------------- */

/* The stream's CONFIG/ID against this NPU's, as the driver compares them. */
static int check_optimizer_config(struct ethosu_driver *drv, uint32_t cfg, uint32_t id)
{
    uint32_t hw = drv->config;
    if (((hw >> 28) & 0xfu) > VNPU_PRODUCT_U85) {
        return job_error(drv, "CONFIG 0x%08lx: product %lu is not modelled, only U55, U65 and U85",
                         (unsigned long)hw, (unsigned long)((hw >> 28) & 0xfu));
    }
    if (cfg != hw) {
        int same = ((cfg >> 28) & 0xfu) == ((hw >> 28) & 0xfu) && (cfg & 0xfu) == (hw & 0xfu) &&
                   ((cfg >> 4) & 0xfu) == ((hw >> 4) & 0xfu);
        if (!same || (((cfg >> 30) & 1u) && !((hw >> 30) & 1u))) {
            return job_error(
                drv, "OPTIMIZER_CONFIG: stream compiled for CONFIG 0x%08lx, this NPU is 0x%08lx",
                (unsigned long)cfg, (unsigned long)hw);
        }
    }
    if (((id >> 28) & 0xfu) != ((drv->id >> 28) & 0xfu) ||
        ((id >> 20) & 0xffu) > ((drv->id >> 20) & 0xffu)) {
        return job_error(
            drv, "OPTIMIZER_CONFIG: stream needs architecture ID 0x%08lx, this NPU is 0x%08lx",
            (unsigned long)id, (unsigned long)drv->id);
    }
    return 0;
}

static int run_command_stream(struct ethosu_driver *drv, const uint32_t *words, size_t nwords,
                              uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr,
                              void *user_arg)
{
    if (((uintptr_t)words & 15u) != 0) {
        return job_error(drv, "command stream at 0x%08lx is not 16-byte aligned",
                         (unsigned long)(uintptr_t)words);
    }
    for (int i = 0; i < num_base_addr; i++) {
        if ((base_addr[i] & 15u) != 0) {
            return job_error(drv, "base_addr[%lu] = 0x%08lx is not 16-byte aligned",
                             (unsigned long)i, (unsigned long)base_addr[i]);
        }
    }
    ethosu_flush_dcache(base_addr, base_addr_size, num_base_addr);
    ethosu_request_power(drv);
    drv->job.state = ETHOSU_JOB_RUNNING;
    ethosu_inference_begin(drv, user_arg);

    struct vnpu_env env;
    memset(&env, 0, sizeof(env));
    env.num_regions = num_base_addr < VNPU_MAX_REGIONS ? num_base_addr : VNPU_MAX_REGIONS;
    for (int i = 0; i < env.num_regions; i++) {
        env.region[i] = (uint8_t *)(uintptr_t)base_addr[i];
        env.region_size[i] = base_addr_size != NULL ? base_addr_size[i] : (size_t)-1;
    }
    env.config = drv->config;
    env.lut = drv->lut;
    env.error = drv->error;
    env.workspace = (uint8_t *)workspace_mem;
    env.workspace_size = workspace_size;
    env.state = drv->state;
    env.state_size = sizeof(drv->state);
    const struct vnpu_product *product =
        ((drv->config >> 28) & 0xfu) == VNPU_PRODUCT_U85 ? &vnpu_product_u85 : &vnpu_product_u55;
    int rc = vnpu_interp_run(product, &env, words, nwords, &drv->written_regions);
    if (env.peak > workspace_peak) {
        workspace_peak = env.peak;
    }
    drv->job.result = rc == 0 ? ETHOSU_JOB_RESULT_OK : ETHOSU_JOB_RESULT_ERROR;
    drv->job.state = ETHOSU_JOB_DONE;
    if (rc != 0) {
        ethosu_virtual_report_error(drv->error);
    }
    ethosu_semaphore_give(drv->semaphore);
    return 0;
}

int ethosu_invoke_async(struct ethosu_driver *drv, const void *custom_data_ptr,
                        const int custom_data_size, uint64_t *const base_addr,
                        const size_t *base_addr_size, const int num_base_addr, void *user_arg)
{
    if (drv == NULL || custom_data_ptr == NULL) {
        return -1;
    }
    drv->error[0] = '\0';
    drv->written_regions = 0;
    if (drv->job.state != ETHOSU_JOB_IDLE) {
        return job_error(drv, "a job is already running (state %lu)",
                         (unsigned long)drv->job.state);
    }
    const uint32_t *w = (const uint32_t *)custom_data_ptr;
    if (custom_data_size < 8 || (custom_data_size % 4) != 0 || w[0] != COP1_FOURCC) {
        return job_error(drv, "custom data is not a COP1 stream (size %lu, first word 0x%08lx)",
                         (unsigned long)custom_data_size,
                         custom_data_size >= 4 ? (unsigned long)w[0] : 0ul);
    }
    if (drv->fast_memory != 0 && num_base_addr > FAST_MEMORY_INDEX) {
        if (base_addr_size != NULL && base_addr_size[FAST_MEMORY_INDEX] > drv->fast_memory_size) {
            return job_error(drv, "fast scratch needs %lu bytes, ethosu_init gave %lu",
                             (unsigned long)base_addr_size[FAST_MEMORY_INDEX],
                             (unsigned long)drv->fast_memory_size);
        }
        base_addr[FAST_MEMORY_INDEX] = drv->fast_memory;
    }
    drv->job.custom_data_ptr = custom_data_ptr;
    drv->job.custom_data_size = custom_data_size;
    drv->job.base_addr = base_addr;
    drv->job.base_addr_size = base_addr_size;
    drv->job.num_base_addr = num_base_addr;
    drv->job.user_arg = user_arg;
    drv->job.result = ETHOSU_JOB_RESULT_OK;

    size_t n = (size_t)custom_data_size / 4u;
    size_t i = 1;
    while (i < n) {
        uint32_t tag = w[i];
        uint32_t cmd = tag & 0xffu;
        if (cmd == DA_OPTIMIZER_CONFIG) {
            if (i + 2 >= n) {
                return job_error(drv, "OPTIMIZER_CONFIG at word %lu is truncated",
                                 (unsigned long)i);
            }
            if (check_optimizer_config(drv, w[i + 1], w[i + 2]) != 0) {
                return -1;
            }
            i += 3;
        } else if (cmd == DA_COMMAND_STREAM) {
            size_t len = ((size_t)((tag >> 8) & 0xffu) << 16) | (tag >> 16);
            if (i + 1 + len > n) {
                return job_error(drv,
                                 "COMMAND_STREAM of %lu words overruns the %lu-word custom data",
                                 (unsigned long)len, (unsigned long)n);
            }
            if (run_command_stream(drv, w + i + 1, len, base_addr, base_addr_size, num_base_addr,
                                   user_arg) != 0) {
                return -1;
            }
            i += 1 + len;
        } else if (cmd == DA_NOP) {
            i += 1;
        } else {
            return job_error(drv, "unsupported driver action %lu at word %lu", (unsigned long)cmd,
                             (unsigned long)i);
        }
    }
    return 0;
}

int ethosu_wait(struct ethosu_driver *drv, bool block)
{
    (void)block;
    switch (drv->job.state) {
    case ETHOSU_JOB_IDLE:
        return -2;
    case ETHOSU_JOB_RUNNING:
        return 1;
    default:
        break;
    }
    ethosu_semaphore_take(drv->semaphore, ETHOSU_SEMAPHORE_WAIT_INFERENCE);
    ethosu_invalidate_dcache(drv->job.base_addr, drv->job.base_addr_size, drv->job.num_base_addr);
    ethosu_inference_end(drv, drv->job.user_arg);
    ethosu_release_power(drv);
    drv->job.state = ETHOSU_JOB_IDLE;
    return drv->job.result == ETHOSU_JOB_RESULT_OK ? 0 : -1;
}

void __attribute__((weak)) ethosu_virtual_stack_enter(void) {}

void __attribute__((weak)) ethosu_virtual_stack_leave(void) {}

/* The lowest stack address seen at the entry of ethosu_invoke_v3 (0: never entered). */
static uintptr_t lowest_invoke_frame;

uintptr_t ethosu_virtual_lowest_invoke_frame(void) { return lowest_invoke_frame; }

int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr,
                     const int custom_data_size, uint64_t *const base_addr,
                     const size_t *base_addr_size, const int num_base_addr, void *user_arg)
{
    volatile char here = 0; /* its address: at or below the caller's stack pointer */
    const uintptr_t frame = (uintptr_t)&here;
    if (lowest_invoke_frame == 0 || frame < lowest_invoke_frame) {
        lowest_invoke_frame = frame;
    }
    ethosu_virtual_stack_enter();
    int rc = -1;
    if (ethosu_invoke_async(drv, custom_data_ptr, custom_data_size, base_addr, base_addr_size,
                            num_base_addr, user_arg) >= 0) {
        rc = ethosu_wait(drv, true);
    }
    ethosu_virtual_stack_leave();
    return rc;
}

/* [a, a + an) and [b, b + bn) share a byte. */
static int overlaps(uintptr_t a, size_t an, uintptr_t b, size_t bn)
{
    return an > 0 && bn > 0 && a < b + bn && b < a + an;
}

/* Nothing but the stream can change region 0 between runs of `job`: no other region and no
 * copy shares its memory, and the job does not zero it. */
static int weights_region_apart(const struct ethosu_virtual_job *job)
{
    uintptr_t w = (uintptr_t)job->base_addr[0];
    size_t wn = job->base_addr_size[0];
    if ((job->zero_regions & 1u) != 0) {
        return 0;
    }
    for (int i = 1; i < job->num_base_addr; i++) {
        if (overlaps(w, wn, (uintptr_t)job->base_addr[i], job->base_addr_size[i])) {
            return 0;
        }
    }
    for (int i = 0; i < job->num_copy_in; i++) {
        if (overlaps(w, wn, (uintptr_t)job->copy_in[i].dst, job->copy_in[i].bytes)) {
            return 0;
        }
    }
    return 1;
}

int ethosu_virtual_run_job(struct ethosu_virtual_job *job)
{
    int n = job->num_base_addr;
    if (job->weights_size > 0) {
        if (n < 1 || job->weights_size > job->base_addr_size[0]) {
            job->weights_kept = 0;
            return job_error(job->drv, "weights of %lu bytes do not fit region 0 (%lu bytes)",
                             (unsigned long)job->weights_size,
                             n < 1 ? 0ul : (unsigned long)job->base_addr_size[0]);
        }
        if (!job->weights_kept) {
            memcpy((void *)(uintptr_t)job->base_addr[0], job->weights, job->weights_size);
        }
    }
    job->weights_kept = 0;
    for (int i = 0; i < n && i < 32; i++) {
        if ((job->zero_regions >> i) & 1u) {
            memset((void *)(uintptr_t)job->base_addr[i], 0, job->base_addr_size[i]);
        }
    }
    for (int i = 0; i < job->num_copy_in; i++) {
        memcpy(job->copy_in[i].dst, job->copy_in[i].src, job->copy_in[i].bytes);
    }
    int rc = ethosu_invoke_v3(job->drv, job->custom_data, job->custom_data_size, job->base_addr,
                              job->base_addr_size, n, NULL);
    /* the weights stay for the next run if the stream could not have written them */
    job->weights_kept = rc == 0 && job->weights_size > 0 && (job->drv->written_regions & 1u) == 0 &&
                        weights_region_apart(job);
    return rc;
}

/*
 * ethosu-porting-kit: virtual Ethos-U55/U65 (functional model of the NPU).
 *
 * The public API of the Ethos-U core driver (1.x), declared from the kit's command
 * stream reference: same function names, argument lists and public types, so code
 * written for the driver (the ExecuTorch Ethos-U delegate, board glue) compiles and
 * links against the virtual NPU unchanged. The driver struct's contents are ours;
 * callers only ever allocate it and pass its address.
 */
#ifndef ETHOSU_DRIVER_H
#define ETHOSU_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ETHOSU_DRIVER_VERSION_MAJOR 1
#define ETHOSU_DRIVER_VERSION_MINOR 0
#define ETHOSU_DRIVER_VERSION_PATCH 0

#define ETHOSU_SEMAPHORE_WAIT_FOREVER (UINT64_MAX)
#ifndef ETHOSU_SEMAPHORE_WAIT_INFERENCE
#define ETHOSU_SEMAPHORE_WAIT_INFERENCE ETHOSU_SEMAPHORE_WAIT_FOREVER
#endif

enum ethosu_error_codes {
    ETHOSU_SUCCESS = 0,
    ETHOSU_GENERIC_FAILURE = -1,
    ETHOSU_INVALID_PARAM = -2
};

enum ethosu_clock_q_request {
    ETHOSU_CLOCK_Q_DISABLE = 0,
    ETHOSU_CLOCK_Q_ENABLE = 1,
    ETHOSU_CLOCK_Q_UNCHANGED = 2
};

enum ethosu_power_q_request {
    ETHOSU_POWER_Q_DISABLE = 0,
    ETHOSU_POWER_Q_ENABLE = 1,
    ETHOSU_POWER_Q_UNCHANGED = 2
};

/* ID register, field by field. */
struct ethosu_id {
    uint32_t version_status;
    uint32_t version_minor;
    uint32_t version_major;
    uint32_t product_major;
    uint32_t arch_patch_rev;
    uint32_t arch_minor_rev;
    uint32_t arch_major_rev;
};

/* CONFIG register, the fields the driver reports. */
struct ethosu_config {
    uint32_t macs_per_cc;
    uint32_t cmd_stream_version;
    uint32_t custom_dma;
};

struct ethosu_hw_info {
    struct ethosu_id version;
    struct ethosu_config cfg;
};

struct ethosu_driver_version {
    uint8_t major;
    uint8_t minor;
    uint8_t patch;
};

enum ethosu_job_state { ETHOSU_JOB_IDLE = 0, ETHOSU_JOB_RUNNING, ETHOSU_JOB_DONE };

enum ethosu_job_result {
    ETHOSU_JOB_RESULT_OK = 0,
    ETHOSU_JOB_RESULT_TIMEOUT,
    ETHOSU_JOB_RESULT_ERROR
};

enum ethosu_request_clients {
    ETHOSU_PMU_REQUEST = 0,
    ETHOSU_INFERENCE_REQUEST = 1,
};

struct ethosu_job {
    volatile enum ethosu_job_state state;
    volatile enum ethosu_job_result result;
    const void *custom_data_ptr;
    int custom_data_size;
    const uint64_t *base_addr;
    const size_t *base_addr_size;
    int num_base_addr;
    void *user_arg;
};

/* Error text of the last failed job (the virtual NPU names the command and value, then the
 * way out: the longest, a working-memory refusal, is ~230 characters). */
#define ETHOSU_VIRTUAL_ERROR_LEN 256
/* Bytes of the state a running stream keeps in the driver: the register file (2 KiB) and
 * the executor's own (the U85's chain buffers); the executors check that theirs fits. */
#define ETHOSU_VIRTUAL_STATE_SIZE 3072u

/* One NPU instance. Allocate it (static is fine) and hand it to ethosu_init(). */
struct ethosu_driver {
    struct ethosu_driver *next;
    struct ethosu_job job;
    void *semaphore;
    uint64_t fast_memory;
    size_t fast_memory_size;
    uint32_t power_request_counter;
    bool reserved;
    /* virtual NPU state */
    uint32_t config; /* CONFIG register this NPU reports */
    uint32_t id;     /* ID register this NPU reports */
    uint32_t secure;
    uint32_t privileged;
    uint8_t lut[2048]; /* the LUT area at the top of SHRAM */
    /* the register file and executor state of the running stream (src/interp.h) */
    uint64_t state[ETHOSU_VIRTUAL_STATE_SIZE / 8u];
    char error[ETHOSU_VIRTUAL_ERROR_LEN];
    /* bit i: an operation of the last job named region i as its output or DMA destination */
    uint32_t written_regions;
};

/* Weak hooks the platform may override (driver 1.x signatures). */
void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size,
                         int num_base_addr);
void ethosu_invalidate_dcache(const uint64_t *base_addr, const size_t *base_addr_size,
                              int num_base_addr);
void *ethosu_mutex_create(void);
void ethosu_mutex_destroy(void *mutex);
int ethosu_mutex_lock(void *mutex);
int ethosu_mutex_unlock(void *mutex);
void *ethosu_semaphore_create(void);
void ethosu_semaphore_destroy(void *sem);
int ethosu_semaphore_take(void *sem, uint64_t timeout);
int ethosu_semaphore_give(void *sem);
void ethosu_inference_begin(struct ethosu_driver *drv, void *user_arg);
void ethosu_inference_end(struct ethosu_driver *drv, void *user_arg);
uint64_t ethosu_address_remap(uint64_t address, int index);
unsigned int ethosu_config_select(uint64_t address, int index);

void ethosu_irq_handler(struct ethosu_driver *drv);

int ethosu_init(struct ethosu_driver *drv, void *const base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable);
void ethosu_deinit(struct ethosu_driver *drv);
int ethosu_soft_reset(struct ethosu_driver *drv);
int ethosu_request_power(struct ethosu_driver *drv);
void ethosu_release_power(struct ethosu_driver *drv);
void ethosu_get_driver_version(struct ethosu_driver_version *ver);
void ethosu_get_hw_info(struct ethosu_driver *drv, struct ethosu_hw_info *hw);

int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr,
                     const int custom_data_size, uint64_t *const base_addr,
                     const size_t *base_addr_size, const int num_base_addr, void *user_arg);

#define ethosu_invoke(drv, custom_data_ptr, custom_data_size, base_addr, base_addr_size,           \
                      num_base_addr)                                                               \
    ethosu_invoke_v3(drv, custom_data_ptr, custom_data_size, base_addr, base_addr_size,            \
                     num_base_addr, 0)

int ethosu_invoke_async(struct ethosu_driver *drv, const void *custom_data_ptr,
                        const int custom_data_size, uint64_t *const base_addr,
                        const size_t *base_addr_size, const int num_base_addr, void *user_arg);
int ethosu_wait(struct ethosu_driver *drv, bool block);

struct ethosu_driver *ethosu_reserve_driver(void);
void ethosu_release_driver(struct ethosu_driver *drv);

/* Multi-variant entry points the ExecuTorch delegate looks for (it has weak fallbacks). */
int ethosu_get_product_config_from_cop_data(const void *custom_data_ptr, const int custom_data_size,
                                            uint32_t *product_out, uint32_t *log2_macs_out);
struct ethosu_driver *ethosu_reserve_driver_ex(uint32_t product, uint32_t log2_macs);

static inline int ethosu_invoke_v2(const void *custom_data_ptr, const int custom_data_size,
                                   uint64_t *const base_addr, const size_t *base_addr_size,
                                   const int num_base_addr)
{
    struct ethosu_driver *drv = ethosu_reserve_driver();
    if (!drv) {
        return -1;
    }
    int result = ethosu_invoke_v3(drv, custom_data_ptr, custom_data_size, base_addr, base_addr_size,
                                  num_base_addr, 0);
    ethosu_release_driver(drv);
    return result;
}

#ifdef __cplusplus
}
#endif

#endif /* ETHOSU_DRIVER_H */

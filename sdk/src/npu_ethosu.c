/*
 * Ethos-U bring-up and the driver's platform hooks (Ethos-U core driver 1.x API),
 * compiled only when a driver is linked: the Arm driver (ETHOSU_DRIVER_ROOT) or the
 * kit's virtual NPU (drivers/ethosu_virtual), which declares the same API.
 * QCONFIG/REGIONCFG are not here: they are the driver's compile definitions, taken
 * from kit_board_config.h by ethosu_add_firmware.
 */
#include <stddef.h>
#include <stdint.h>

#include "ethosu_driver.h"
#include "kit/cortex_m.h"
#include "kit/log.h"
#include "kit/platform.h"
#include "kit/usage.h"
#include "kit_board_config.h"
#include "kit_memory_config.h"
#include "kit_model.h"
#ifdef KIT_NPU_VIRTUAL
#include "ethosu_virtual.h"
#endif

#ifdef KIT_FAST_SCRATCH_SIZE
extern uint8_t kit_fast_scratch[];
#endif

#if defined(KIT_NPU_VIRTUAL)
/* The virtual NPU's working memory: the plan's buffer (kit_buffers.c), fit-checked. */
#include "ethosu_virtual.h"
#ifdef KIT_VNPU_WORKSPACE_LIMIT
#define KIT_VNPU_GIVE                                                                              \
    (KIT_VNPU_WORKSPACE_LIMIT < KIT_VNPU_WORKSPACE_SIZE ? KIT_VNPU_WORKSPACE_LIMIT                 \
                                                        : KIT_VNPU_WORKSPACE_SIZE)
#else
#define KIT_VNPU_GIVE KIT_VNPU_WORKSPACE_SIZE
#endif
#endif

static struct ethosu_driver npu;
static int npu_ready;
static kit_hal_npu_t npu_config;

static void npu_irq(void *arg) { ethosu_irq_handler((struct ethosu_driver *)arg); }

int kit_npu_init(void)
{
    const void *fast = NULL;
    size_t fast_size = 0;
#if defined(KIT_FAST_SCRATCH_SIZE) && KIT_FAST_SCRATCH_SIZE > 0
    /* Dedicated_Sram: the driver hands this to the NPU as region 2 (fast scratch). */
    fast = kit_fast_scratch;
    fast_size = KIT_FAST_SCRATCH_SIZE;
#endif
    /* Where the NPU is and how to reach it: the board's data, or its own npu hook. */
    if (kit_hal_npu_config(&npu_config) != 0) {
        KIT_LOG_ERROR("the board's NPU set-up (kit_hal_npu_config) failed\n");
        return -1;
    }
#if defined(KIT_NPU_VIRTUAL)
    ethosu_virtual_set_workspace(kit_vnpu_workspace, KIT_VNPU_GIVE);
#endif
    if (ethosu_init(&npu, (void *)npu_config.base, fast, fast_size, (uint32_t)npu_config.secure,
                    (uint32_t)npu_config.privileged) != 0) {
        KIT_LOG_ERROR("ethosu_init failed: NPU at 0x%08x (secure %d, privileged %d)\n",
                      (unsigned)npu_config.base, npu_config.secure, npu_config.privileged);
        return -1;
    }
#if defined(KIT_NPU_VIRTUAL) && defined(KIT_ETHOSU_CONFIG)
    /* A functional model: it is the NPU the model's streams were compiled for. */
    ethosu_virtual_set_hw(&npu, KIT_ETHOSU_CONFIG, KIT_ETHOSU_ID);
#endif
    const int irq_status = kit_irq_register(npu_config.irq, npu_irq, &npu);
    if (irq_status == -2) {
        KIT_LOG_ERROR("NPU IRQ %u: all KIT_IRQ_SLOTS interrupt slots are taken\n", npu_config.irq);
        return -1;
    }
    if (irq_status != 0) {
        KIT_LOG_ERROR("NPU IRQ %u is beyond the vector table ([cpu] irqs = %d)\n", npu_config.irq,
                      KIT_CPU_IRQS);
        return -1;
    }
    kit_irq_set_enabled(npu_config.irq, 1);
    npu_ready = 1;
    return 0;
}

void *kit_npu_driver(void) { return npu_ready ? &npu : NULL; }

#if defined(KIT_NPU_VIRTUAL)
/* kit/usage.h: the stack depth where the driver is entered, for the stack's sizing. */
uintptr_t kit_npu_lowest_entry(void) { return ethosu_virtual_lowest_invoke_frame(); }

/* The stack outside the virtual NPU's jobs, measured apart (kit/usage.h). */
void ethosu_virtual_stack_enter(void) { kit_stack_npu_enter(); }
void ethosu_virtual_stack_leave(void) { kit_stack_npu_leave(); }
#endif

/* Driver 1.x cache hooks: ranges of the base addresses; no ranges means everything. */
static void dcache_ranges(void (*op)(const void *, size_t), const uint64_t *base_addr,
                          const size_t *base_addr_size, int num)
{
    if (base_addr == NULL || base_addr_size == NULL) {
        kit_hal_dcache_clean_invalidate_all();
        return;
    }
    for (int i = 0; i < num; ++i) {
        op((const void *)(uintptr_t)base_addr[i], base_addr_size[i]);
    }
}

void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num)
{
    dcache_ranges(kit_hal_dcache_clean, base_addr, base_addr_size, num);
}

void ethosu_invalidate_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num)
{
    dcache_ranges(kit_hal_dcache_invalidate, base_addr, base_addr_size, num);
}

/* Bare-metal synchronisation: one core, no RTOS, the NPU IRQ gives the semaphore.
 * Static objects instead of the driver's malloc-based defaults. */
#define KIT_NPU_SEMAPHORES 4

struct kit_sem {
    volatile uint32_t count;
    int used;
};

static struct kit_sem sems[KIT_NPU_SEMAPHORES];
static int mutex_token;

void *ethosu_mutex_create(void) { return &mutex_token; }

void ethosu_mutex_destroy(void *mutex) { (void)mutex; }

int ethosu_mutex_lock(void *mutex)
{
    (void)mutex;
    return 0;
}

int ethosu_mutex_unlock(void *mutex)
{
    (void)mutex;
    return 0;
}

void *ethosu_semaphore_create(void)
{
    for (int i = 0; i < KIT_NPU_SEMAPHORES; ++i) {
        if (!sems[i].used) {
            sems[i].used = 1;
            sems[i].count = 0;
            return &sems[i];
        }
    }
    KIT_LOG_ERROR("out of NPU semaphores (%d)\n", KIT_NPU_SEMAPHORES);
    return NULL;
}

void ethosu_semaphore_destroy(void *sem)
{
    if (sem != NULL) {
        ((struct kit_sem *)sem)->used = 0;
    }
}

int ethosu_semaphore_take(void *sem, uint64_t timeout)
{
    (void)timeout; /* the NPU either finishes or faults; its IRQ always comes */
    struct kit_sem *s = (struct kit_sem *)sem;
    if (s == NULL) {
        return -1;
    }
    for (;;) {
        kit_irq_disable_all();
        if (s->count > 0u) {
            s->count = s->count - 1u;
            kit_irq_enable_all();
            return 0;
        }
        kit_irq_enable_all();
        kit_wfe();
    }
}

int ethosu_semaphore_give(void *sem)
{
    struct kit_sem *s = (struct kit_sem *)sem;
    if (s == NULL) {
        return -1;
    }
    s->count = s->count + 1u;
    kit_sev();
    return 0;
}

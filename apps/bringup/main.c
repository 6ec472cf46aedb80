/*
 * Bring-up: proves the memory plan on the board before any ExecuTorch is involved.
 * For every buffer of KIT_BUFFERS: name, address, size and region over UART; the
 * address inside the plan's region, 16-byte aligned, NPU buffers outside the TCMs;
 * a write/read-back of two patterns across the whole buffer (the network is not
 * written: its first bytes must be the .pte header instead; the stack only below
 * the live frame). Exits 0 only if everything holds. Never touches the NPU.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kit/app.h"
#include "kit/cortex_m.h"
#include "kit/log.h"
#include "kit/platform.h"
#include "kit/timing.h"
#include "kit/usage.h"
#include "kit_board_config.h"
#include "kit_memory_config.h"
#include "kit_model.h"
#include "kit_sections.h"

#define CPU_ALIGN 8u      /* AAPCS stack and double-word data */
#define STACK_MARGIN 512u /* bytes kept below the live stack pointer */

typedef struct {
    const char *name;
    uintptr_t base;
    uintptr_t size;
} region_t;

#define KIT_REGION_ROW(name, base, size) {name, (uintptr_t)(base), (uintptr_t)(size)},
static const region_t regions[] = {KIT_REGIONS(KIT_REGION_ROW)};
#define NUM_REGIONS (sizeof(regions) / sizeof(regions[0]))

static const region_t *region_at(uintptr_t addr, uintptr_t size)
{
    for (size_t i = 0; i < NUM_REGIONS; ++i) {
        if (addr >= regions[i].base && size <= regions[i].size &&
            addr - regions[i].base <= regions[i].size - size) {
            return &regions[i];
        }
    }
    return NULL;
}

#if defined(KIT_ITCM_BASE) || defined(KIT_DTCM_BASE)
static int in_range(uintptr_t addr, uintptr_t size, uintptr_t base, uintptr_t len)
{
    return addr < base + len && base < addr + size;
}
#endif

static int in_tcm(uintptr_t addr, uintptr_t size)
{
    int hit = 0;
    (void)addr; /* a board without TCMs uses neither */
    (void)size;
#ifdef KIT_ITCM_BASE
    hit |= in_range(addr, size, KIT_ITCM_BASE, KIT_ITCM_SIZE);
#endif
#ifdef KIT_DTCM_BASE
    hit |= in_range(addr, size, KIT_DTCM_BASE, KIT_DTCM_SIZE);
#endif
    return hit;
}

/* Two passes (an address-derived pattern, then its complement) catch stuck and aliased bits. */
static int pattern_test(volatile uint8_t *p, size_t n)
{
    for (int pass = 0; pass < 2; ++pass) {
        const uint32_t flip = pass ? 0xFFFFFFFFu : 0u;
        volatile uint32_t *w = (volatile uint32_t *)p;
        const size_t words = n / 4u;
        for (size_t i = 0; i < words; ++i) {
            w[i] = ((uint32_t)(uintptr_t)&w[i] * 2654435761u) ^ flip;
        }
        for (size_t i = words * 4u; i < n; ++i) {
            p[i] = (uint8_t)(i ^ flip);
        }
        kit_dsb();
        for (size_t i = 0; i < words; ++i) {
            const uint32_t want = ((uint32_t)(uintptr_t)&w[i] * 2654435761u) ^ flip;
            if (w[i] != want) {
                kit_printf("  mismatch at 0x%08x: read 0x%08x, wrote 0x%08x\n",
                           (unsigned)(uintptr_t)&w[i], (unsigned)w[i], (unsigned)want);
                return 0;
            }
        }
        for (size_t i = words * 4u; i < n; ++i) {
            if (p[i] != (uint8_t)(i ^ flip)) {
                kit_printf("  mismatch at 0x%08x\n", (unsigned)(uintptr_t)&p[i]);
                return 0;
            }
        }
    }
    return 1;
}

static unsigned failures;
static unsigned checked;

static void check_buffer(const char *name, uint8_t *addr, size_t size, const char *region, int npu)
{
    const uintptr_t a = (uintptr_t)addr;
    const region_t *actual = region_at(a, size);
    const int placed = actual != NULL && strcmp(actual->name, region) == 0;
    const int aligned = (a % (npu ? KIT_NPU_ALIGN : CPU_ALIGN)) == 0u;
    const int npu_ok = !npu || !in_tcm(a, size);
    const char *memory = "skipped";
    int memory_ok = 1;

    if (strcmp(name, "network") == 0) {
        /* ExecuTorch program: flatbuffer root offset, then "ET" + two digits. */
        memory_ok = size >= 8u && addr[4] == 'E' && addr[5] == 'T' && addr[6] >= '0' &&
                    addr[6] <= '9' && addr[7] >= '0' && addr[7] <= '9';
        memory = memory_ok ? "pte-magic-ok" : "pte-magic-BAD";
    } else if (strcmp(name, "stack") == 0) {
        const uintptr_t sp = kit_get_msp();
        const uintptr_t low = a + kit_stack_guard; /* above the MPU guard, if there is one */
        if (sp > low + STACK_MARGIN && sp <= a + size) {
            memory_ok = pattern_test(addr + kit_stack_guard, (size_t)(sp - STACK_MARGIN - low));
            memory = memory_ok ? "ok-below-sp" : "BAD";
        } else {
            memory_ok = 0;
            memory = "sp-outside-stack";
        }
    } else if (strcmp(name, "selftest_vectors") == 0 || strncmp(name, "input_data_", 11) == 0) {
        memory = "read-only"; /* self-test vectors, compiled-in inputs: const, maybe in flash */
    } else if (strcmp(name, "heap") == 0 && kit_heap_used() != 0u) {
        memory = "in-use";
    } else if (size > 0u) {
        memory_ok = pattern_test(addr, size);
        memory = memory_ok ? "ok" : "BAD";
    }

    const int ok = placed && aligned && npu_ok && memory_ok;
    kit_printf("buffer %-14s addr=0x%08x size=%-9u region=%-5s actual=%-5s align=%s npu=%s "
               "memory=%s %s\n",
               name, (unsigned)a, (unsigned)size, region, actual ? actual->name : "none",
               aligned ? "ok" : "BAD", npu ? (npu_ok ? "ok" : "IN-TCM") : "-", memory,
               ok ? "PASS" : "FAIL");
    ++checked;
    if (!ok) {
        ++failures;
    }
}

#define KIT_CHECK_ROW(name, symbol, size, region, npu)                                             \
    check_buffer(#name, (uint8_t *)(uintptr_t)(symbol), (size_t)(size), region, npu);

static int bringup(void)
{
    kit_sections_init();
    if (kit_platform_init() != 0) {
        return KIT_EXIT_INIT;
    }
    const uint64_t start = kit_cycles();
    kit_printf("bringup: board %s, mode %s, npu %s (not touched)\n", kit_board_name(),
               KIT_MEMORY_MODE, KIT_NPU_KIND);
    KIT_BUFFERS(KIT_CHECK_ROW)
    const uint64_t cycles = kit_cycles() - start;
    kit_printf("bringup: %u buffers checked, %u failed, %u cycles\n", checked, failures,
               (unsigned)cycles);
    kit_printf("BRINGUP %s\n", failures == 0u ? "PASS" : "FAIL");
    return failures == 0u ? KIT_EXIT_OK : KIT_EXIT_FAIL;
}

int ethosu_kit_app_main(void) { return kit_app_result(bringup()); }

#include "kit/usage.h"

#include "kit/app.h"
#include "kit/cortex_m.h"
#include "kit/hal.h"
#include "kit/log.h"
#include "kit/platform.h"

#if defined(__ARMCC_VERSION)
extern uint8_t Image$$ARM_LIB_STACK$$ZI$$Base[];
extern uint8_t Image$$ARM_LIB_STACK$$ZI$$Limit[];
extern uint8_t Image$$ARM_LIB_HEAP$$ZI$$Base[];
extern uint8_t Image$$ARM_LIB_HEAP$$ZI$$Limit[];
#define STACK_LIMIT Image$$ARM_LIB_STACK$$ZI$$Base
#define STACK_TOP Image$$ARM_LIB_STACK$$ZI$$Limit
#define HEAP_BASE Image$$ARM_LIB_HEAP$$ZI$$Base
#define HEAP_LIMIT Image$$ARM_LIB_HEAP$$ZI$$Limit
/* The Arm C library's heap is not ours to count. */
size_t kit_heap_used(void) { return 0; }
#else
/* The plan's stack and heap, from kit_sections.ld: the same names in the kit's whole
 * image and in a team's script that INCLUDEs it (its own __StackTop may be elsewhere). */
extern uint8_t __kit_stack_top[];
extern uint8_t __kit_stack_base[];
extern uint8_t __kit_heap_base[];
extern uint8_t __kit_heap_limit[];
#define STACK_LIMIT __kit_stack_base
#define STACK_TOP __kit_stack_top
#define HEAP_BASE __kit_heap_base
#define HEAP_LIMIT __kit_heap_limit
/* sdk/src/syscalls.c counts the heap in the kit's whole image; a team's tree with its
 * own C-library glue has no count: 0 then. */
__attribute__((weak)) size_t kit_heap_used(void) { return 0; }
#endif

size_t kit_stack_guard;

#define PAINT 0x5AC3A53Cu
/* Bytes below the live stack pointer left unpainted: this function's own frame and an
 * interrupt's exception frame may land there while it runs. */
#define PAINT_MARGIN 256u

/* Whether the live stack is the plan's: a team's start-up may keep a stack of its own
 * elsewhere. Then nothing is painted (from the plan's stack base up to that stack
 * pointer would paint over other memory) and nothing measured (an unpainted stack
 * would read as used to its bottom: a false overflow); said once. */
static int stack_foreign;

void kit_stack_paint(void)
{
    const uintptr_t sp = kit_get_msp();
    if (stack_foreign) {
        return;
    }
    if (sp <= (uintptr_t)STACK_LIMIT + kit_stack_guard || sp > (uintptr_t)STACK_TOP) {
        stack_foreign = 1;
        kit_printf("W: stack: the live stack pointer 0x%08x is outside the plan's stack "
                   "(0x%08x..0x%08x): the start-up keeps its own, so it is not painted or "
                   "measured\n",
                   (unsigned)sp, (unsigned)(uintptr_t)STACK_LIMIT, (unsigned)(uintptr_t)STACK_TOP);
        return;
    }
    uint32_t *w = (uint32_t *)(uintptr_t)(STACK_LIMIT + kit_stack_guard);
    uint32_t *end = (uint32_t *)((sp - PAINT_MARGIN) & ~(uintptr_t)3u);
    while (w < end) {
        *w++ = PAINT;
    }
}

/* The deepest marks inside the virtual NPU's jobs and outside them (kit_stack_npu_*). */
static size_t npu_mark;
static size_t cpu_mark;
static int npu_tracked;

size_t kit_stack_high_water(void)
{
    if (stack_foreign) {
        return 0;
    }
    const uint32_t *w = (const uint32_t *)(uintptr_t)(STACK_LIMIT + kit_stack_guard);
    const uint32_t *top = (const uint32_t *)(uintptr_t)STACK_TOP;
    while (w < top && *w == PAINT) {
        ++w;
    }
    return (size_t)((uintptr_t)top - (uintptr_t)w);
}

size_t kit_stack_size(void) { return (size_t)(STACK_TOP - STACK_LIMIT); }

int kit_stack_guard_hit(uintptr_t addr) { return addr - (uintptr_t)STACK_LIMIT < kit_stack_guard; }

size_t kit_heap_size(void) { return (size_t)(HEAP_LIMIT - HEAP_BASE); }

void kit_usage_report(const char *what, size_t used, size_t size)
{
    kit_printf("usage: %s used %u of %u bytes\n", what, (unsigned)used, (unsigned)size);
}

/* The lowest stack address at the NPU driver's entry, where the virtual NPU records it
 * (npu_ethosu.c); 0 otherwise. */
__attribute__((weak)) uintptr_t kit_npu_lowest_entry(void) { return 0; }

void kit_stack_npu_enter(void)
{
    const size_t mark = kit_stack_high_water();
    cpu_mark = mark > cpu_mark ? mark : cpu_mark;
    npu_tracked = 1;
}

void kit_stack_npu_leave(void)
{
    const size_t mark = kit_stack_high_water();
    npu_mark = mark > npu_mark ? mark : npu_mark;
    kit_stack_paint(); /* the job's frames are dead: paint them over */
}

void kit_usage_report_stack_heap(void)
{
    if (stack_foreign) { /* not the plan's stack: its use is unknown (kit_stack_paint) */
        kit_usage_report("heap", kit_heap_used(), kit_heap_size());
        return;
    }
    const size_t mark = kit_stack_high_water();
    const size_t deepest = mark > npu_mark ? mark : npu_mark;
    kit_usage_report("stack", deepest, kit_stack_size());
    kit_usage_report("heap", kit_heap_used(), kit_heap_size());
    if (npu_tracked) {
        kit_usage_report("stack_cpu", mark > cpu_mark ? mark : cpu_mark, kit_stack_size());
    }
    /* How deep the stack is where the NPU driver is entered: the host adds a real
     * driver's own path to it, which a run with the virtual NPU does not take. */
    const uintptr_t entry = kit_npu_lowest_entry();
    if (entry != 0 && entry <= (uintptr_t)STACK_TOP) {
        kit_usage_report("npu_entry", (size_t)((uintptr_t)STACK_TOP - entry), kit_stack_size());
    }
    /* A mark at the bottom word (above the guard, where there is one): the stack was used
     * to its last byte, so it most likely went on below it into whatever the link put
     * there (.bss on many layouts). Armv8-M faults on that at the first push (MSPLIM) and
     * an Armv7-M MPU guard on an access to it, but a core with neither, or a frame that
     * stepped over the guard, overflows silently: this is the check every core gets. An
     * image that used every byte with none to spare for an interrupt is wrong anyway. */
    if (deepest >= kit_stack_size() - kit_stack_guard) {
        kit_printf("E: stack overflow: the stack of %u bytes was used to its bottom (painted "
                   "stack), memory below it may be corrupt; gen-firmware --stack auto sizes it "
                   "from a measurement\n",
                   (unsigned)kit_stack_size());
        kit_hal_exit(kit_app_result(KIT_EXIT_FAULT)); /* the code `ethosu-kit run` reports */
    }
}

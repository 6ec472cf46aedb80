/*
 * Vector table and reset for Armv7-M and Armv8-M mainline cores (Cortex-M4, M7, M33,
 * M55, M85): what the core has decides the code (FPU/MVE enable, MSPLIM, SecureFault),
 * the board's data the vector table's size (KIT_CPU_IRQS) and alignment.
 *
 * The linker script (linker/gnu_ld.ld.j2 or armclang.sct.j2) provides the stack
 * top, the copy and zero tables and the init arrays, and puts section .vectors at the
 * board's boot address ([boot] in board.toml); every external interrupt goes
 * through one dispatcher so handlers can take an argument (the NPU IRQ needs its
 * driver handle) and be registered at run time without a RAM vector table.
 */
#include <stddef.h>
#include <stdint.h>

#include "kit/cortex_m.h"
#include "kit/hal.h"
#include "kit/platform.h"
#include "kit/usage.h"
#include "kit_board_config.h"
#include "kit_memory_config.h"
#include "kit_sections.h"

#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define KIT_COMPILED_ARMV8M 1
#else
#define KIT_COMPILED_ARMV8M 0
#endif
_Static_assert(KIT_COMPILED_ARMV8M == KIT_CPU_ARMV8M,
               "the compiler flags are for another architecture than the board's [cpu] core");

typedef void (*kit_vector_t)(void);

typedef struct {
    uint32_t load; /* LMA */
    uint32_t dest; /* VMA */
    uint32_t size; /* bytes */
} kit_copy_entry_t;

typedef struct {
    uint32_t dest;
    uint32_t size;
} kit_zero_entry_t;

#if defined(__ARMCC_VERSION)
/* Arm Compiler 6: the scatter file's ARM_LIB_STACK holds kit_stack; __main (the Arm C
 * library) does the copy/zero work and the constructors, then calls main. */
extern uint8_t Image$$ARM_LIB_STACK$$ZI$$Base[];
extern uint8_t Image$$ARM_LIB_STACK$$ZI$$Limit[];
#define __StackTop Image$$ARM_LIB_STACK$$ZI$$Limit
#define __StackLimit Image$$ARM_LIB_STACK$$ZI$$Base
__attribute__((noreturn)) void __main(void);
#else
/* From the linker script. */
extern uint8_t __StackTop[];
extern uint8_t __StackLimit[];
#endif
extern const kit_copy_entry_t __copy_table_start__[];
extern const kit_copy_entry_t __copy_table_end__[];
extern const kit_zero_entry_t __zero_table_start__[];
extern const kit_zero_entry_t __zero_table_end__[];
extern kit_vector_t __preinit_array_start[];
extern kit_vector_t __preinit_array_end[];
extern kit_vector_t __init_array_start[];
extern kit_vector_t __init_array_end[];

int main(void);
void Reset_Handler(void);
void HardFault_Handler(void);
void Default_Handler(void);
void kit_irq_dispatch(void);

void NMI_Handler(void) __attribute__((weak, alias("Default_Handler")));
void MemManage_Handler(void) __attribute__((weak, alias("HardFault_Handler")));
void BusFault_Handler(void) __attribute__((weak, alias("HardFault_Handler")));
void UsageFault_Handler(void) __attribute__((weak, alias("HardFault_Handler")));
#if KIT_CPU_ARMV8M
void SecureFault_Handler(void) __attribute__((weak, alias("HardFault_Handler")));
#define KIT_SECURE_FAULT_VECTOR SecureFault_Handler
#else
#define KIT_SECURE_FAULT_VECTOR 0 /* reserved on Armv7-M */
#endif
void SVC_Handler(void) __attribute__((weak, alias("Default_Handler")));
void DebugMon_Handler(void) __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler(void) __attribute__((weak, alias("Default_Handler")));
/* The HAL's timer may use SysTick (drivers/timer_systick counts its wraps); without it
 * SysTick is unexpected. drivers/timer_systick's SysTick_Handler is weak too (an app's
 * or a team's own links over both), and of two weak ones the linker keeps whichever it
 * sees first: so this one counts the wrap too when that driver is linked. */
void kit_systick_wrap(void) __attribute__((weak));
__attribute__((weak)) void SysTick_Handler(void)
{
    if (kit_systick_wrap != 0) {
        kit_systick_wrap();
    } else {
        Default_Handler();
    }
}

/* VTOR ignores the low bits: the table is aligned to its size rounded up to a power of 2. */
__attribute__((used, section(KIT_SECTION_VECTORS), aligned(KIT_VECTOR_TABLE_ALIGN)))
const kit_vector_t kit_vectors[16 + KIT_CPU_IRQS] = {
    (kit_vector_t)(uintptr_t)__StackTop,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    KIT_SECURE_FAULT_VECTOR,
    0,
    0,
    0,
    SVC_Handler,
    DebugMon_Handler,
    0,
    PendSV_Handler,
    SysTick_Handler,
    /* every external interrupt: the run-time dispatcher (GNU range designator) */
    [16 ... 15 + KIT_CPU_IRQS] = kit_irq_dispatch,
};
_Static_assert(sizeof(kit_vectors) <= KIT_VECTOR_TABLE_ALIGN, "VTOR alignment too small");

/*
 * C++ static objects with destructors (the delegate's registration, libstdc++'s
 * globals) register them with __cxa_atexit(..., &__dso_handle). crtbegin.o defines
 * it; the kit's -nostartfiles/-nostdlib links do not, so give a weak one that yields
 * to crtbegin's. Unreferenced in C-only firmware, --gc-sections drops it.
 */
__attribute__((weak)) void *__dso_handle = NULL;

#if !KIT_COMPILED_ARMV8M && !defined(__ARMCC_VERSION)
/* Armv7-M has no stack limit register. Where the core has an MPU, the stack's lowest
 * KIT_STACK_ALIGN bytes become a no-access region: a push into them is a MemManage fault
 * before anything below the stack is written (a frame larger than the guard that skips
 * it is left to the painted stack's check, kit_usage_report_stack_heap). The plan aligns
 * the stack's base to KIT_STACK_ALIGN (planner.STACK_ALIGN), a region's size and
 * alignment. The highest region number wins where a port's own regions overlap it. */
_Static_assert(KIT_STACK_ALIGN >= 32u && (KIT_STACK_ALIGN & (KIT_STACK_ALIGN - 1u)) == 0u,
               "the stack guard is an MPU region: a power of two of at least 32 bytes");
static void kit_stack_guard_init(void)
{
    const uint32_t regions = MPU_TYPE_DREGION(MPU_TYPE);
    if (regions == 0u) {
        return; /* no MPU: the painted stack's check only */
    }
    MPU_RNR = regions - 1u;
    MPU_RBAR = (uint32_t)(uintptr_t)__StackLimit;
    MPU_RASR =
        MPU_RASR_XN | MPU_RASR_SIZE((uint32_t)__builtin_ctz(KIT_STACK_ALIGN)) | MPU_RASR_ENABLE;
    MPU_CTRL = MPU_CTRL_PRIVDEFENA | MPU_CTRL_ENABLE;
    kit_dsb();
    kit_isb();
    kit_stack_guard = KIT_STACK_ALIGN;
}
#define KIT_STACK_GUARD_INIT() kit_stack_guard_init()
#else
#define KIT_STACK_GUARD_INIT() ((void)0)
#endif

#if defined(KIT_SECTION_BOOT_TEXT)
/* [boot] code = "copy" (kit_sections.h): the code runs from RAM the loops below fill, so
 * Reset_Handler itself stays in non-volatile memory with the vectors and the copy tables,
 * and calls nothing before its loops are done (the volatile accesses keep a compiler from
 * turning them into a call of memcpy/memset, which would be in that RAM). */
#define KIT_BOOT_CODE __attribute__((section(KIT_SECTION_BOOT_TEXT)))
#define KIT_BOOT_VOLATILE volatile
#else
#define KIT_BOOT_CODE
#define KIT_BOOT_VOLATILE
#endif

KIT_BOOT_CODE __attribute__((noreturn)) void Reset_Handler(void)
{
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    /* FPU and MVE first: the compiler may use their registers in any C below. */
    SCB_CPACR |= SCB_CPACR_CP10_CP11_FULL;
    kit_dsb();
    kit_isb();
#endif
#if KIT_COMPILED_ARMV8M
    /* Stack overflow then faults instead of silently overwriting what lies below
     * (Armv8-M only; an Armv7-M core has no stack limit register). */
    __asm volatile("msr msplim, %0" ::"r"(__StackLimit));
#endif
#if defined(__ARMCC_VERSION)
    SCB_VTOR = (uint32_t)(uintptr_t)kit_vectors;
#if defined(KIT_SECTION_BOOT_TEXT)
    /* kit_system_init is in the code __main copies into RAM: $Sub$$main below runs it */
    __main();
#else
    kit_system_init();
    __main();
#endif
#else

    for (const kit_copy_entry_t *e = __copy_table_start__; e < __copy_table_end__; ++e) {
        const KIT_BOOT_VOLATILE uint8_t *src = (const uint8_t *)(uintptr_t)e->load;
        KIT_BOOT_VOLATILE uint8_t *dst = (uint8_t *)(uintptr_t)e->dest;
        if (src == dst) {
            continue;
        }
        /* words, then the tail: an .incbin'd network need not be a multiple of 4 */
        const uint32_t words = e->size / 4u;
        for (uint32_t i = 0; i < words; ++i) {
            ((KIT_BOOT_VOLATILE uint32_t *)dst)[i] = ((const KIT_BOOT_VOLATILE uint32_t *)src)[i];
        }
        for (uint32_t i = words * 4u; i < e->size; ++i) {
            dst[i] = src[i];
        }
    }
    for (const kit_zero_entry_t *e = __zero_table_start__; e < __zero_table_end__; ++e) {
        KIT_BOOT_VOLATILE uint32_t *dst = (uint32_t *)(uintptr_t)e->dest;
        for (uint32_t i = 0; i < e->size / 4u; ++i) {
            dst[i] = 0;
        }
    }

    SCB_VTOR = (uint32_t)(uintptr_t)kit_vectors;
    kit_system_init();
    KIT_STACK_GUARD_INIT(); /* after .bss: it records the guard in kit_stack_guard */

    /* C++ static constructors (no crti/_init: the arrays are all there is). */
    for (kit_vector_t *f = __preinit_array_start; f < __preinit_array_end; ++f) {
        (*f)();
    }
    for (kit_vector_t *f = __init_array_start; f < __init_array_end; ++f) {
        (*f)();
    }

    kit_hal_exit(main());
#endif
}

#if defined(__ARMCC_VERSION) && defined(KIT_SECTION_BOOT_TEXT)
/* armlink's $Sub$$ wrapping: __main calls this in place of main once its scatter-loading
 * has copied the code into RAM, so the system set-up runs from there. Not compiled by the
 * kit's tests (no Arm Compiler here). */
int $Super$$main(void);
int $Sub$$main(void);
int $Sub$$main(void)
{
    kit_system_init();
    return $Super$$main();
}
#endif

void Default_Handler(void) { kit_fault(NULL); }

/* The stacked frame tells where it happened; without it a fault is just a hang. */
__attribute__((used)) void kit_fault_report(const uint32_t *frame);
__attribute__((used)) void kit_fault_report(const uint32_t *frame) { kit_fault(frame); }

__attribute__((naked)) void HardFault_Handler(void)
{
    __asm volatile(
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
        /* After a stack overflow (MSPLIM) the report's first push would fault again and
         * lock the core up: lift the limit, the image ends here anyway. */
        "movs r1, #0\n"
        "msr msplim, r1\n"
#endif
        "tst lr, #4\n"
        "ite eq\n"
        "mrseq r0, msp\n"
        "mrsne r0, psp\n"
#if !KIT_COMPILED_ARMV8M && !defined(__ARMCC_VERSION)
        /* With the stack guard (kit_stack_guard_init): the MPU off, so the report's pushes
         * do not fault again; and when the stack pointer is in the guard or below the
         * stack, the report runs from the stack's top (the image ends here anyway). No
         * guard (no MPU): nothing to undo, MPU_CTRL is not touched. */
        "ldr r3, =kit_stack_guard\n"
        "ldr r3, [r3]\n"
        "cbz r3, 1f\n"
        "ldr r1, =0xE000ED94\n" /* MPU_CTRL_ADDR */
        "movs r2, #0\n"
        "str r2, [r1]\n"
        "dsb\n"
        "isb\n"
        "mrs r1, msp\n"
        "ldr r2, =__StackLimit\n"
        "add r2, r3\n"
        "cmp r1, r2\n"
        "bhs 1f\n"
        "ldr r1, =__StackTop\n"
        "msr msp, r1\n"
        "1:\n"
#endif
        "b kit_fault_report\n");
}

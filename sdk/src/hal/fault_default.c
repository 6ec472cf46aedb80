/* HAL fault default: one line with the registers on the console, then exit 16. */
#include "kit/app.h"
#include "kit/cortex_m.h"
#include "kit/hal.h"
#include "kit/log.h"
#include "kit/platform.h"
#include "kit/semihosting.h"
#include "kit/usage.h"
#include "kit_board_config.h"

/* On new silicon a bus fault at a precise address is most often a board fact that is not
 * true: no NPU answers at [npu] base (or not to this security state/privilege), or a
 * region copied from another board is not there, or not all of it. Name the key. */
#define KIT_FAULT_REGION(name, base, size)                                                         \
    if (addr - (uint32_t)(base) < (uint32_t)(size)) {                                              \
        kit_printf("E: the bus fault is in region %s (0x%08x, %u bytes) of the board: is the "     \
                   "memory there, all of it, and writable? (board.toml [[region]] %s)\n",          \
                   name, (unsigned)(base), (unsigned)(size), name);                                \
        return;                                                                                    \
    }

static void explain_bus_fault(const kit_hal_fault_t *fault)
{
    const uint32_t addr = fault->bfar;
    if (!(fault->cfsr & SCB_CFSR_BFARVALID)) {
        return;
    }
#if defined(KIT_NPU_BASE)
    if (addr - (uint32_t)KIT_NPU_BASE < 0x1000u) {
        kit_printf("E: the bus fault is at NPU register 0x%03x of npu.base 0x%08x: no NPU answers "
                   "there (board.toml [npu] base, secure, privileged; docs/porting.md)\n",
                   (unsigned)(addr - (uint32_t)KIT_NPU_BASE), (unsigned)KIT_NPU_BASE);
        return;
    }
#endif
#if defined(KIT_REGIONS)
    KIT_REGIONS(KIT_FAULT_REGION)
#endif
    (void)addr;
}

void kit_hal_fault_report(const kit_hal_fault_t *fault)
{
    if (kit_semihost_active) {
        for (;;) { /* the fault is the semihosting call itself: no host, nothing to tell */
        }
    }
    /* Armv7-M: an access to the MPU guard at the stack's bottom, or exception entry's
     * stacking into it (MSTKERR: the frame is not there); the guard is the only region. */
    const int guard = kit_stack_guard != 0u &&
                      ((fault->cfsr & SCB_CFSR_MSTKERR) ||
                       ((fault->cfsr & SCB_CFSR_MMARVALID) && kit_stack_guard_hit(fault->mmfar)));
    if ((fault->cfsr & SCB_CFSR_STKOF) || guard) {
        /* Stacking itself hit the stack limit (MSPLIM) or the guard: no frame to show. */
        kit_printf("\nE: stack overflow: the stack of %u bytes is too small (%s; "
                   "gen-firmware --stack auto sizes it from a measurement)\n",
                   (unsigned)kit_stack_size(),
                   guard ? "the MPU guard at its bottom was hit" : "CFSR.STKOF");
    } else if (fault->frame == NULL) {
        kit_printf("\nE: unhandled %s %u\n", fault->exception >= 16u ? "interrupt" : "exception",
                   (unsigned)(fault->exception >= 16u ? fault->exception - 16u : fault->exception));
    } else {
        kit_printf("\nE: fault: exception %u pc=0x%08x lr=0x%08x CFSR=0x%08x HFSR=0x%08x "
                   "MMFAR=0x%08x BFAR=0x%08x\n",
                   (unsigned)fault->exception, (unsigned)fault->frame[6], (unsigned)fault->frame[5],
                   (unsigned)fault->cfsr, (unsigned)fault->hfsr, (unsigned)fault->mmfar,
                   (unsigned)fault->bfar);
        explain_bus_fault(fault);
    }
    kit_hal_exit(kit_app_result(KIT_EXIT_FAULT)); /* the code `ethosu-kit run` reports */
}

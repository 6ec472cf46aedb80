/*
 * External interrupts through one dispatcher, so a handler can take an argument (the
 * NPU IRQ needs its driver handle) and be registered at run time without a RAM vector
 * table. Part of the model objects (a team's tree links it too): a team's vector table
 * points the interrupts it leaves to the kit (the NPU's, KIT_NPU_IRQ) at kit_irq_dispatch.
 * Also the one way a fault reaches the HAL's fault hook (kit_fault).
 */
#include <stddef.h>
#include <stdint.h>

#include "kit/cortex_m.h"
#include "kit/hal.h"
#include "kit/platform.h"
#include "kit_board_config.h"

void kit_irq_dispatch(void);

/* A few slots, not one per interrupt: a board has hundreds of IRQs (Corstone-300: 96,
 * 768 bytes of fn+arg), a firmware registers one or two (the NPU's). A port that needs
 * more builds with -DKIT_IRQ_SLOTS=n. */
#ifndef KIT_IRQ_SLOTS
#define KIT_IRQ_SLOTS 4
#endif

static struct {
    kit_irq_fn fn;
    void *arg;
    uint16_t irq;
} irq_table[KIT_IRQ_SLOTS];

int kit_irq_register(unsigned irq, kit_irq_fn fn, void *arg)
{
    if (irq >= KIT_CPU_IRQS) {
        return -1;
    }
    int slot = -1;
    for (int i = 0; i < KIT_IRQ_SLOTS; ++i) {
        if (irq_table[i].fn != NULL && irq_table[i].irq == irq) {
            slot = i; /* registered again: replaced */
            break;
        }
        if (irq_table[i].fn == NULL && slot < 0) {
            slot = i;
        }
    }
    if (slot < 0) {
        return -2;
    }
    irq_table[slot].fn = NULL; /* never a half-written slot to a dispatch in between */
    irq_table[slot].irq = (uint16_t)irq;
    irq_table[slot].arg = arg;
    irq_table[slot].fn = fn;
    return 0;
}

void kit_irq_set_enabled(unsigned irq, int enabled)
{
    if (enabled) {
        NVIC_ICPR(irq / 32u) = 1u << (irq % 32u);
        NVIC_ISER(irq / 32u) = 1u << (irq % 32u);
    } else {
        NVIC_ICER(irq / 32u) = 1u << (irq % 32u);
        kit_dsb();
        kit_isb();
    }
}

void kit_fault(const uint32_t *frame)
{
    const kit_hal_fault_t fault = {
        .exception = kit_get_ipsr() & 0x1FFu,
        .frame = frame,
        .cfsr = SCB_CFSR,
        .hfsr = SCB_HFSR,
        .mmfar = SCB_MMFAR,
        .bfar = SCB_BFAR,
    };
    kit_hal_fault_report(&fault);
}

void kit_irq_dispatch(void)
{
    const uint32_t irq = (kit_get_ipsr() & 0x1FFu) - 16u;
    for (int i = 0; i < KIT_IRQ_SLOTS; ++i) {
        if (irq_table[i].irq == irq && irq_table[i].fn != NULL) {
            irq_table[i].fn(irq_table[i].arg);
            return;
        }
    }
    kit_fault(NULL); /* an interrupt nobody registered */
}

/*
 * External interrupts through one dispatcher, so a handler can take an argument (the
 * NPU IRQ needs its driver handle) and be registered at run time without a RAM vector
 * table. Part of the model objects (a team's tree links it too): a team's vector table
 * points the interrupts it leaves to the kit (the NPU's, KIT_NPU_IRQ) at kit_irq_dispatch.
 * Also the one way a fault reaches the HAL's fault hook (kit_fault).
 */
#include <stddef.h>
#include <stdint.h>

#include "kit/armv8m.h"
#include "kit/hal.h"
#include "kit/platform.h"
#include "kit_board_config.h"

void kit_irq_dispatch(void);

static struct {
    kit_irq_fn fn;
    void *arg;
} irq_table[KIT_CPU_IRQS];

int kit_irq_register(unsigned irq, kit_irq_fn fn, void *arg)
{
    if (irq >= KIT_CPU_IRQS) {
        return -1;
    }
    irq_table[irq].arg = arg;
    irq_table[irq].fn = fn;
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
    const kit_fault_t fault = {
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
    if (irq < KIT_CPU_IRQS && irq_table[irq].fn != NULL) {
        irq_table[irq].fn(irq_table[irq].arg);
        return;
    }
    kit_fault(NULL); /* an interrupt nobody registered */
}

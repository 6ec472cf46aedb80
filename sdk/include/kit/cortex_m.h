/*
 * Cortex-M system registers the kit's glue touches, written from the Armv8-M (DDI0553)
 * and Armv7-M (DDI0403) Architecture Reference Manuals so that no CMSIS header is
 * needed. Only what the glue uses is here; the addresses are architectural (PPB) and
 * the same on both, so these serve every core the kit builds for (Cortex-M4, M7, M33,
 * M55, M85). What only one architecture has is marked.
 */
#ifndef KIT_CORTEX_M_H
#define KIT_CORTEX_M_H

#include <stdint.h>

#define KIT_REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* System Control Block (v8-M B11.2, v7-M B3.2) */
#define SCB_ICSR KIT_REG32(0xE000ED04u)
#define SCB_ICSR_PENDSTSET (1u << 26) /* SysTick exception pending */
#define SCB_VTOR KIT_REG32(0xE000ED08u)
#define SCB_CCR KIT_REG32(0xE000ED14u)
#define SCB_SHCSR KIT_REG32(0xE000ED24u)
#define SCB_CFSR KIT_REG32(0xE000ED28u)
#define SCB_CFSR_STKOF (1u << 20)     /* UsageFault: stack limit (MSPLIM) violated */
#define SCB_CFSR_BFARVALID (1u << 15) /* BusFault: BFAR holds the faulting address */
#define SCB_CFSR_MMARVALID (1u << 7)  /* MemManage: MMFAR holds the faulting address */
#define SCB_CFSR_MSTKERR (1u << 4)    /* MemManage: exception entry's stacking faulted */
#define SCB_HFSR KIT_REG32(0xE000ED2Cu)
#define SCB_MMFAR KIT_REG32(0xE000ED34u)
#define SCB_BFAR KIT_REG32(0xE000ED38u)
#define SCB_CCSIDR KIT_REG32(0xE000ED80u)
#define SCB_CSSELR KIT_REG32(0xE000ED84u)
#define SCB_CPACR KIT_REG32(0xE000ED88u)

#define SCB_CCR_DC (1u << 16)           /* data cache enable */
#define SCB_CCR_IC (1u << 17)           /* instruction cache enable */
#define SCB_SHCSR_FAULTS_ENA (7u << 16) /* MemManage, BusFault, UsageFault enables */
/* CP10/CP11 = FPU and MVE (Armv8.1-M shares the coprocessor enables): full access */
#define SCB_CPACR_CP10_CP11_FULL (0xFu << 20)

/* Armv7-M MPU (PMSAv7) */
#define MPU_TYPE KIT_REG32(0xE000ED90u)
#define MPU_CTRL_ADDR 0xE000ED94u
#define MPU_CTRL KIT_REG32(MPU_CTRL_ADDR)
#define MPU_RNR KIT_REG32(0xE000ED98u)
#define MPU_RBAR KIT_REG32(0xE000ED9Cu)
#define MPU_RASR KIT_REG32(0xE000EDA0u)
#define MPU_TYPE_DREGION(t) (((t) >> 8) & 0xFFu)
#define MPU_CTRL_ENABLE (1u << 0)
#define MPU_CTRL_PRIVDEFENA (1u << 2) /* the default memory map for what no region covers */
#define MPU_RASR_ENABLE (1u << 0)
#define MPU_RASR_SIZE(log2) (((log2) - 1u) << 1) /* region of 2^log2 bytes */
#define MPU_RASR_XN (1u << 28)                   /* AP = 0 (bits 26:24): no access at all */

/* Cache maintenance operations (B11.2, "Cache maintenance operations") */
#define CACHE_ICIALLU KIT_REG32(0xE000EF50u)
#define CACHE_DCIMVAC KIT_REG32(0xE000EF5Cu)
#define CACHE_DCISW KIT_REG32(0xE000EF60u)
#define CACHE_DCCMVAC KIT_REG32(0xE000EF68u)
#define CACHE_DCCIMVAC KIT_REG32(0xE000EF70u)
#define CACHE_DCCISW KIT_REG32(0xE000EF74u)

/* NVIC (B11.3) */
#define NVIC_ISER(n) KIT_REG32(0xE000E100u + 4u * (n))
#define NVIC_ICER(n) KIT_REG32(0xE000E180u + 4u * (n))
#define NVIC_ICPR(n) KIT_REG32(0xE000E280u + 4u * (n))

/* SysTick (B11.1) */
#define SYST_CSR KIT_REG32(0xE000E010u)
#define SYST_RVR KIT_REG32(0xE000E014u)
#define SYST_CVR KIT_REG32(0xE000E018u)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2) /* processor clock */

/* Debug: DEMCR.TRCENA gates the DWT; DWT_CTRL.CYCCNTENA starts CYCCNT */
#define DCB_DEMCR KIT_REG32(0xE000EDFCu)
#define DCB_DEMCR_TRCENA (1u << 24)
#define DWT_CTRL KIT_REG32(0xE0001000u)
#define DWT_CYCCNT KIT_REG32(0xE0001004u)
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_CTRL_NOCYCCNT (1u << 25)
#define DWT_LAR KIT_REG32(0xE0001FB0u) /* Armv7-M CoreSight lock (Cortex-M7) */
#define DWT_LAR_UNLOCK 0xC5ACCE55u

/* Always inlined: Reset_Handler runs them before it has copied the code into RAM
 * ([boot] code = "copy"), where an out-of-line copy (-O0) would be. */
__attribute__((always_inline)) static inline void kit_dsb(void)
{
    __asm volatile("dsb 0xF" ::: "memory");
}
__attribute__((always_inline)) static inline void kit_isb(void)
{
    __asm volatile("isb 0xF" ::: "memory");
}
static inline void kit_irq_enable_all(void) { __asm volatile("cpsie i" ::: "memory"); }
static inline void kit_irq_disable_all(void) { __asm volatile("cpsid i" ::: "memory"); }
static inline void kit_wfe(void) { __asm volatile("wfe"); }
static inline void kit_sev(void) { __asm volatile("sev"); }

static inline uint32_t kit_get_ipsr(void)
{
    uint32_t v;
    __asm volatile("mrs %0, ipsr" : "=r"(v));
    return v;
}

static inline uint32_t kit_get_msp(void)
{
    uint32_t v;
    __asm volatile("mrs %0, msp" : "=r"(v));
    return v;
}

#endif /* KIT_CORTEX_M_H */

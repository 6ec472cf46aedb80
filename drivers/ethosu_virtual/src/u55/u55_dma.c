/* ethosu-porting-kit virtual NPU: Ethos-U55/U65 DMA. */
#include "u55/u55.h"

#include "common/num.h"

#include <string.h>

/* ---- DMA ----------------------------------------------------------------------------------- */

/* The memory of the region a DMA*_REGION register names, proved to hold [addr, addr + len). */
static int dma_span(struct vnpu_exec *run, uint32_t region_reg, uint64_t addr, uint64_t len,
                    uint8_t **mem, const char *what)
{
    size_t size = 0;
    if (vnpu_region_of(run, region_reg & 7u, mem, &size, what) != 0) {
        return -1;
    }
    if (addr + len > size) {
        return vnpu_fail(run, "%s [%s, +%s) outside region %lu of %lu bytes", what, VNPU_U64(addr),
                         VNPU_U64(len), (unsigned long)(region_reg & 7u), (unsigned long)size);
    }
    return 0;
}

int u55_op_dma(struct vnpu_exec *run, uint32_t param)
{
    (void)param;
    struct regs *r = &run->regs;
    uint32_t src_reg = R0(DMA0_SRC_REGION);
    uint32_t dst_reg = R0(DMA0_DST_REGION);
    uint64_t src = W1(DMA0_SRC);
    uint64_t dst = W1(DMA0_DST);
    uint64_t len = W1(DMA0_LEN);
    if (((src_reg >> 9) & 3u) != 0 || ((dst_reg >> 9) & 3u) != 0) {
        return vnpu_fail(run, "DMA stride_mode %lu/%lu (2-D/3-D) is not modelled",
                         (unsigned long)((src_reg >> 9) & 3u),
                         (unsigned long)((dst_reg >> 9) & 3u));
    }
    if ((src_reg >> 8) & 1u) {
        return vnpu_fail(run,
                         "DMA from internal memory (SRC region_mode INTERNAL) is not modelled");
    }
    uint8_t *smem = NULL;
    if (dma_span(run, src_reg, src, len, &smem, "DMA source") != 0) {
        return -1;
    }
    if ((dst_reg >> 8) & 1u) {
        uint64_t shram = ((run->env->config >> 8) & 0xffu) * 1024u;
        uint64_t lut_base = shram - 2048u;
        if (shram < 2048u || dst < lut_base || dst + len > shram) {
            return vnpu_fail(run, "DMA into SHRAM [%s, +%s) outside the LUT area [%s, %s)",
                             VNPU_U64(dst), VNPU_U64(len), VNPU_U64(lut_base), VNPU_U64(shram));
        }
        memcpy(run->env->lut + (dst - lut_base), smem + src, (size_t)len);
        return 0;
    }
    uint8_t *dmem = NULL;
    if (dma_span(run, dst_reg, dst, len, &dmem, "DMA destination") != 0) {
        return -1;
    }
    memmove(dmem + dst, smem + src, (size_t)len);
    return 0;
}

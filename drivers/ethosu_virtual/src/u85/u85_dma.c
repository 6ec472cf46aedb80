/* ethosu-porting-kit virtual NPU: Ethos-U85 DMA: 1/2/3-D and indexed (gather, scatter). */
#include "u85/u85.h"

#include "common/mutation.h"
#include "common/num.h"
#include "ethosu_virtual.h"

#include <string.h>

/* ---- DMA ----------------------------------------------------------------------------------- */

/*
 * An indexed DMA, as Vela emits TOSA GATHER (index_select; SRC idx_mode ENABLED) and
 * SCATTER (index_put; DST idx_mode ENABLED): row (i1, i0) < (SIZE1, SIZE0) copies LEN bytes
 * from SRC + i1 * SRC_STRIDE1 + j * SRC_STRIDE0 to DST + i1 * DST_STRIDE1 + j' * DST_STRIDE0,
 * where the indexed side takes k, the int32 index read in order from DMA0_IDX
 * (DMA0_IDX_REGION), and the other i0; IDX_SKIP1 more bytes are skipped after each run
 * of SIZE0 (regor gives 4 for int64 indices; only 0 was seen: UNVERIFIED). D1 is one row,
 * D2 one run. An index beyond IDX_MAX stops the job (what the NPU does then is UNVERIFIED).
 */
static int op_dma_indexed(struct run85 *run, unsigned mode)
{
    struct regs *r = &run->x.regs;
    uint32_t src_reg = R0(DMA0_SRC_REGION);
    uint32_t dst_reg = R0(DMA0_DST_REGION);
    int scatter = (int)((dst_reg >> 11) & 1u);
    if (scatter && ((src_reg >> 11) & 1u)) {
        return vnpu_fail(&run->x, "DMA index mode on both source and destination is not defined");
    }
    if (((src_reg | dst_reg) >> 8) & 1u) {
        return vnpu_fail(&run->x, "DMA index mode with internal memory is not modelled");
    }
    int64_t src = addr40(r, DMA0_SRC);
    int64_t dst = addr40(r, DMA0_DST);
    int64_t len = addr40(r, DMA0_LEN);
    int64_t idx = addr40(r, DMA0_IDX);
    int64_t idx_max = (int64_t)(W1(DMA0_IDX_MAX) & 0x7fffffffu);
    int64_t n0 = mode >= 1 ? (int64_t)R0(DMA0_SIZE0) : 1;
    int64_t n1 = mode == 2 ? (int64_t)R0(DMA0_SIZE1) : 1;
    /* regor writes the indexed side's STRIDE0 even in D1 */
    int64_t ss0 = mode >= 1 || !scatter ? addr40(r, DMA0_SRC_STRIDE0) : 0;
    int64_t ss1 = mode == 2 ? addr40(r, DMA0_SRC_STRIDE1) : 0;
    int64_t ds0 = mode >= 1 || scatter ? addr40(r, DMA0_DST_STRIDE0) : 0;
    int64_t ds1 = mode == 2 ? addr40(r, DMA0_DST_STRIDE1) : 0;
    int64_t skip1 = mode == 2 ? addr40(r, DMA0_IDX_SKIP1) : 0;
    uint8_t *smem = NULL, *dmem = NULL, *imem = NULL;
    size_t ssize = 0, dsize = 0, isize = 0;
    if (vnpu_region_of(&run->x, src_reg & 7u, &smem, &ssize, "DMA source") != 0 ||
        vnpu_region_of(&run->x, dst_reg & 7u, &dmem, &dsize, "DMA destination") != 0 ||
        vnpu_region_of(&run->x, R0(DMA0_IDX_REGION) & 7u, &imem, &isize, "DMA index") != 0) {
        return -1;
    }
    int64_t idx_end = idx + n1 * (4 * n0 + skip1) - skip1;
    if (len < 0 || n0 < 1 || n1 < 1 || skip1 < 0 || idx < 0 || idx_end > (int64_t)isize) {
        return vnpu_fail(&run->x,
                         "indexed DMA of %sx%s rows of %s bytes, indices [%s, %s): "
                         "not inside region %lu of %lu bytes",
                         VNPU_I64(n1), VNPU_I64(n0), VNPU_I64(len), VNPU_I64(idx),
                         VNPU_I64(idx_end), (unsigned long)(R0(DMA0_IDX_REGION) & 7u),
                         (unsigned long)isize);
    }
    for (int64_t i = 0; i < n0 * n1; i++) {
        int64_t i0 = i % n0;
        int64_t i1 = i / n0;
        const uint8_t *e = imem + idx + i1 * (4 * n0 + skip1) + 4 * i0;
        int64_t k = (int32_t)((uint32_t)e[0] | ((uint32_t)e[1] << 8) | ((uint32_t)e[2] << 16) |
                              ((uint32_t)e[3] << 24));
        if (VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_GATHER_NO_INDEX)) {
            k = i0;
        }
        if (k < 0 || k > idx_max) {
            return vnpu_fail(&run->x, "indexed DMA: index %s (row %s) outside 0..IDX_MAX %s",
                             VNPU_I64(k), VNPU_I64(i), VNPU_I64(idx_max));
        }
        int64_t s = src + i1 * ss1 + (scatter ? i0 : k) * ss0;
        int64_t d = dst + i1 * ds1 + (scatter ? k : i0) * ds0;
        if (s < 0 || s + len > (int64_t)ssize || d < 0 || d + len > (int64_t)dsize) {
            return vnpu_fail(&run->x,
                             "indexed DMA row %s: [%s, +%s) -> [%s, +%s) outside its regions",
                             VNPU_I64(i), VNPU_I64(s), VNPU_I64(len), VNPU_I64(d), VNPU_I64(len));
        }
        memmove(dmem + d, smem + s, (size_t)len);
    }
    return 0;
}

static int op_dma(struct run85 *run)
{
    struct regs *r = &run->x.regs;
    uint32_t src_reg = R0(DMA0_SRC_REGION);
    uint32_t dst_reg = R0(DMA0_DST_REGION);
    int64_t src = addr40(r, DMA0_SRC);
    int64_t dst = addr40(r, DMA0_DST);
    int64_t len = addr40(r, DMA0_LEN);
    unsigned mode = (src_reg >> 9) & 3u;
    if (mode == 3) {
        return vnpu_fail(&run->x, "DMA stride_mode 3 is not defined");
    }
    if (((src_reg | dst_reg) >> 11) & 1u) {
        return op_dma_indexed(run, mode);
    }
    if ((src_reg >> 8) & 1u) {
        return vnpu_fail(&run->x,
                         "DMA from internal memory (SRC region_mode INTERNAL) is not modelled");
    }
    int64_t n0 = mode >= 1 ? (int64_t)R0(DMA0_SIZE0) : 1;
    int64_t n1 = mode == 2 ? (int64_t)R0(DMA0_SIZE1) : 1;
    int64_t ss0 = mode >= 1 ? addr40(r, DMA0_SRC_STRIDE0) : 0;
    int64_t ss1 = mode == 2 ? addr40(r, DMA0_SRC_STRIDE1) : 0;
    int64_t ds0 = mode >= 1 ? addr40(r, DMA0_DST_STRIDE0) : 0;
    int64_t ds1 = mode == 2 ? addr40(r, DMA0_DST_STRIDE1) : 0;
    uint8_t *smem = NULL;
    size_t ssize = 0;
    if (vnpu_region_of(&run->x, src_reg & 7u, &smem, &ssize, "DMA source") != 0) {
        return -1;
    }
    uint8_t *dmem = NULL;
    size_t dsize = 0;
    if ((dst_reg >> 8) & 1u) {
        dmem = run->x.env->lut;
        dsize = LUTRAM_SIZE;
    } else if (vnpu_region_of(&run->x, dst_reg & 7u, &dmem, &dsize, "DMA destination") != 0) {
        return -1;
    }
    if (len < 0 || n0 < 1 || n1 < 1) {
        return vnpu_fail(&run->x, "DMA of %s bytes x %s x %s is not defined", VNPU_I64(len),
                         VNPU_I64(n0), VNPU_I64(n1));
    }
    /* every row must lie inside both memories: check the corners */
    for (int corner = 0; corner < 4; corner++) {
        int64_t i0 = (corner & 1) ? n0 - 1 : 0;
        int64_t i1 = (corner & 2) ? n1 - 1 : 0;
        int64_t s = src + i1 * ss1 + i0 * ss0;
        int64_t d = dst + i1 * ds1 + i0 * ds0;
        if (s < 0 || s + len > (int64_t)ssize) {
            return vnpu_fail(&run->x, "DMA source row [%s, +%s) outside region %lu of %lu bytes",
                             VNPU_I64(s), VNPU_I64(len), (unsigned long)(src_reg & 7u),
                             (unsigned long)ssize);
        }
        if (d < 0 || d + len > (int64_t)dsize) {
            return vnpu_fail(&run->x, "DMA destination row [%s, +%s) outside %s of %lu bytes",
                             VNPU_I64(d), VNPU_I64(len),
                             ((dst_reg >> 8) & 1u) ? "the lutram" : "its region",
                             (unsigned long)dsize);
        }
    }
    for (int64_t i1 = 0; i1 < n1; i1++) {
        for (int64_t i0 = 0; i0 < n0; i0++) {
            memmove(dmem + dst + i1 * ds1 + i0 * ds0, smem + src + i1 * ss1 + i0 * ss0,
                    (size_t)len);
        }
    }
    return 0;
}

int u85_op_dma(struct vnpu_exec *x, uint32_t param)
{
    (void)param;
    return op_dma(u85_run(x));
}

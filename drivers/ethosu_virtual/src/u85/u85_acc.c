/* ethosu-porting-kit virtual NPU: Ethos-U85 kept accumulators (a split stride-4 kernel). */
#include "u85/u85.h"

#include "common/mutation.h"
#include "ethosu_virtual.h"

/*
 * Kept accumulators. Vela splits a kernel with stride 4 or more into 1x1 operations that
 * accumulate into the same accumulators: the first RESET + acc_output DISABLE (OFM
 * activation_storage NONE), then KEEP + DISABLE, the last KEEP + ENABLE. Between them the
 * accumulators live in the workspace, like a chain buffer (run->acc).
 */
int u85_kept_modes(struct run85 *run, const char *what, int *keep, int *hold)
{
    struct regs *r = &run->x.regs;
    uint32_t input = (R0(ACC_FORMAT) >> 4) & 3u;
    *keep = input == 1 && !VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_ACC_KEEP_AS_RESET);
    *hold = (int)((R0(ACC_FORMAT) >> 6) & 1u);
    if (input == 2 || input == 3) {
        return vnpu_fail(&run->x, "acc_input %s for %s is not modelled", input == 2 ? "IFM2" : "3",
                         what);
    }
    if (input == 1 && !run->acc.live) {
        return vnpu_fail(
            &run->x, "acc_input KEEP with no accumulators kept by an earlier acc_output DISABLE");
    }
    if (input == 0 && run->acc.live) {
        return vnpu_fail(
            &run->x,
            "acc_input RESET while kept accumulators wait for acc_input KEEP is not modelled");
    }
    return 0;
}

/* The kept accumulators of `ofm` (allocated by the first holding operation), or NULL. */
int u85_kept_buffer(struct run85 *run, const struct ofm85 *ofm, int keep, int hold, int64_t **kept)
{
    struct regs *r = &run->x.regs;
    size_t bytes = (size_t)ofm->h * (size_t)ofm->w * (size_t)ofm->c * sizeof(int64_t);
    *kept = NULL;
    if (!keep && !hold) {
        return 0;
    }
    if (ofm->h > (int)R0(OFM_BLK_HEIGHT_M1) + 1 || ofm->w > (int)R0(OFM_BLK_WIDTH_M1) + 1 ||
        ofm->c > (int)R0(OFM_BLK_DEPTH_M1) + 1 || (run->acc.live && run->acc.bytes != bytes)) {
        return vnpu_fail(
            &run->x,
            "kept accumulators over an OFM of %dx%dx%d that is not one OFM block (or not the kept one)",
            ofm->h, ofm->w, ofm->c);
    }
    size_t ws_size = run->x.env->workspace_size;
    uint8_t *ws = run->x.env->workspace;
    if (!run->acc.live) {
        run->acc.offset = run->chain_end;
        run->acc.bytes = bytes;
        run->acc.live = 1;
        run->chain_end = (run->acc.offset + bytes + 15u) & ~(size_t)15u;
        if (run->chain_end > ws_size) {
            return vnpu_fail(
                &run->x,
                "kept accumulators need %lu bytes of working memory, the virtual NPU has %lu",
                (unsigned long)run->chain_end, (unsigned long)ws_size);
        }
        vnpu_workspace_used(run->x.env, run->chain_end);
    }
    *kept = (int64_t *)(void *)(ws + run->acc.offset);
    return 0;
}

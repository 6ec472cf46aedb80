/* ethosu-porting-kit virtual NPU: Ethos-U85 POOL, and POOL NONE over accumulators from IFM2. */
#include "u85/u85.h"

#include "common/memo.h"
#include "common/mutation.h"
#include "ethosu_virtual.h"

#include <string.h>

/* ---- POOL ---------------------------------------------------------------------------------- */

static int op_pool_acc(struct run85 *run);

/* The output value of a pool's accumulator over `count` valid taps. */
static inline int64_t pool_eval(int mode, int64_t acc, int count,
                                const struct vnpu_rescaler *out_scale, const struct vnpu_out *o)
{
    if (mode == 1 && count > 0) {
        /* divide by the valid taps with TOSA's reciprocal_scale, single rounding */
        int kbits = 0;
        while ((1 << kbits) < count) {
            kbits++;
        }
        uint32_t mult = (uint32_t)(((((int64_t)1 << 30) + 1) << kbits) / count);
        int avg_round = VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_AVG_FLOOR) ? ROUND_FLOOR : ROUND_NATURAL;
        acc = vnpu_rescale(acc, mult, 30u + (unsigned)kbits, avg_round);
    }
    return vnpu_out_value(o, vnpu_rescale_by(out_scale, acc));
}

/* OFM byte for each IFM byte of a pool with one tap: from the memo when an earlier run built it
 * (host builds), else built, into the memo or `own`. The key holds every input of pool_eval. */
static const uint8_t *pool_map8_table(const struct fm *ifm, int mode,
                                      const struct vnpu_rescaler *out_scale,
                                      const struct vnpu_out *o, uint8_t own[256])
{
    int64_t key[9] = {mode, ifm->is_signed, ifm->zp};
    vnpu_memo_rescaler(&key[3], out_scale);
    int fresh;
    uint8_t *table = u85_map8_table(VNPU_MEMO_U85_POOL_MAP8, key, 9, o, own, &fresh);
    for (int b = 0; fresh && b < 256; b++) {
        int64_t v = byte_value(b, ifm->is_signed) - ifm->zp;
        table[b] = (uint8_t)pool_eval(mode, v, 1, out_scale, o);
    }
    return table;
}

/* Every output of a pool (kept accumulators: the running maximum), on copies no pointer
 * reaches (the OFM stores cannot alias them). */
static void pool_run(const struct fm ifm, const struct kernel k, const struct ofm85 ofm,
                     const struct vnpu_out o, const struct vnpu_rescaler out_scale, int mode,
                     int64_t *kept, int keep, int hold)
{
    for (int oy = 0; oy < ofm.h; oy++) {
        for (int ox = 0; ox < ofm.w; ox++) {
            for (int c = 0; c < ofm.c; c++) {
                int count;
                int64_t acc = vnpu_pool_acc(&ifm, &k, mode, oy, ox, c, &count);
                if (kept != NULL) {
                    /* a window of padding only leaves the maximum as it was */
                    int64_t *m = &kept[((size_t)oy * (size_t)ofm.w + (size_t)ox) * (size_t)ofm.c +
                                       (size_t)c];
                    acc = keep && (count == 0 || *m > acc) ? *m : acc;
                    count = keep || count > 0 ? 1 : 0;
                    if (hold) {
                        *m = count == 0 ? INT64_MIN : acc;
                        continue;
                    }
                }
                ofm_put(&ofm, oy, ox, c, pool_eval(mode, acc, count, &out_scale, &o));
            }
        }
    }
}

static int op_pool(struct run85 *run, uint32_t mode)
{
    struct regs *r = &run->x.regs;
    struct fm ifm;
    struct ofm85 ofm;
    struct kernel k;
    struct vnpu_out o;
    static const char *const names[8] = {"MAX",  "AVERAGE", "REDUCE_SUM", "SUM",
                                         "NONE", "MIN",     "ARGMAX_X",   "ARGMAX_Y"};
    if (mode >= 6) {
        return vnpu_fail(&run->x, "pooling_mode %s is not modelled", names[mode & 7u]);
    }
    if (mode == 4) {
        return op_pool_acc(run);
    }
    /* MAX pools may keep accumulators (a split stride-4 kernel): the running maximum */
    int keep = 0, hold = 0;
    if ((mode == 0 ? u85_kept_modes(run, "a pool", &keep, &hold) : u85_check_acc(run)) != 0) {
        return -1;
    }
    run->ofm_none = hold;
    int ofm_rc = u85_setup_ofm(run, &ofm);
    run->ofm_none = 0;
    if (ofm_rc != 0 || vnpu_setup_kernel(&run->x, &k, ofm.h, ofm.w) != 0 ||
        u85_setup_out(run, &o, &ofm.fm) != 0 ||
        u85_setup_kernel_ifm(run, &ifm, &k, mode == 2 ? (int)R0(IFM_DEPTH_M1) + 1 : ofm.c) != 0) {
        return -1;
    }
    int64_t *kept = NULL;
    if (u85_kept_buffer(run, &ofm, keep, hold, &kept) != 0) {
        return -1;
    }
    if (mode == 2 && ofm.c != 1) {
        return vnpu_fail(&run->x, "REDUCE_SUM with OFM depth %d (expected 1)", ofm.c);
    }
    struct vnpu_rescaler out_scale;
    if (u85_ofm_global_rescaler(run, &out_scale, "a pool") != 0) {
        return -1;
    }
    /* a 1x1 kernel without padding (the transposing copies): one IFM byte per output */
    struct axis_map ia[3];
    struct axis_map oa[3];
    if (mode != 2 && kept == NULL && k.kh == 1 && k.kw == 1 && k.sy == 1 && k.sx == 1 &&
        !k.upscale && (k.pad_top | k.pad_left | k.pad_bottom | k.pad_right) == 0 &&
        u85_map8_ok(&ifm, &ofm, ia, oa)) {
        uint8_t own[256];
        u85_map8(&ifm, ia, &ofm, oa, pool_map8_table(&ifm, (int)mode, &out_scale, &o, own));
    } else {
        pool_run(ifm, k, ofm, o, out_scale, (int)mode, kept, keep, hold);
    }
    run->acc.live = hold;
    u85_chain_release(run, &ifm, NULL);
    u85_ofm_done(run, &ofm);
    return 0;
}

/* The output stage over accumulators from IFM2 (per channel: the scale stream's records, or
 * the global OFM scale), on copies no pointer reaches. */
static void pool_acc_run(const struct operand acc_in, const struct ofm85 ofm,
                         const struct vnpu_out o, const struct ofm_scale os,
                         const struct scale_stream *ss, int low32)
{
    for (int c = 0; c < ofm.c; c++) {
        int64_t bias = 0;
        uint32_t scale = os.scale;
        unsigned shift = os.shift;
        if (ss != NULL) {
            u85_scale_record(ss, c, &bias, &scale, &shift);
        }
        struct vnpu_rescaler chan_scale;
        vnpu_rescaler_init(&chan_scale, scale, shift, os.round);
        for (int y = 0; y < ofm.h; y++) {
            for (int x = 0; x < ofm.w; x++) {
                int64_t v = operand_at(&acc_in, y, x, c);
                v = (low32 ? (int64_t)(uint32_t)v : v) + bias;
                ofm_put(&ofm, y, x, c, vnpu_out_value(&o, vnpu_rescale_by(&chan_scale, v)));
            }
        }
    }
}

/*
 * POOL NONE with acc_input IFM2: the accumulators are loaded from a 32-bit IFM2 and only
 * the output stage runs (OFM scale, zero point, clamp, transpose). Vela ends a transpose
 * convolution with it, after 1x1 CONVs wrote the int32 phases (int16 activations: Acc48
 * CONVs write B64, the 48-bit accumulators sign-extended, and this reads them back).
 */
static int op_pool_acc(struct run85 *run)
{
    struct regs *r = &run->x.regs;
    struct ofm85 ofm;
    struct vnpu_out o;
    struct operand acc_in;
    uint32_t acc = R0(ACC_FORMAT);
    if (((acc >> 4) & 3u) != 2) {
        return vnpu_fail(&run->x, "pooling_mode NONE needs acc_input IFM2, not %lu",
                         (unsigned long)((acc >> 4) & 3u));
    }
    if ((acc >> 6) & 1u) {
        return vnpu_fail(&run->x, "acc_output DISABLE is not modelled");
    }
    if (R0(KERNEL_WIDTH_M1) != 0 || R0(KERNEL_HEIGHT_M1) != 0) {
        return vnpu_fail(&run->x, "pooling_mode NONE with a %dx%d kernel is not modelled",
                         R0(KERNEL_HEIGHT_M1) + 1, R0(KERNEL_WIDTH_M1) + 1);
    }
    if (u85_setup_ofm(run, &ofm) != 0 || u85_setup_out(run, &o, &ofm.fm) != 0) {
        return -1;
    }
    run->b64_fm = (acc & 3u) == 1 ? FM_IFM2 : -1; /* Acc48 accumulators read back */
    int acc_rc = u85_setup_operand(run, &acc_in, FM_IFM2, &ofm, 0);
    run->b64_fm = -1;
    if (acc_rc != 0) {
        return -1;
    }
    if (acc_in.scalar || (acc_in.fm.elem != 4 && acc_in.fm.elem != 8)) {
        return vnpu_fail(&run->x,
                         "accumulators from IFM2 need a 32-bit or 64-bit IFM2 feature map");
    }
    /* GLOBAL: OFM_SCALE; PER_CHANNEL: the scale stream's records, bias included */
    int per_channel = ((R0(OFM_PRECISION) >> 8) & 1u) == 0;
    struct scale_stream ss;
    if (per_channel && u85_setup_scales(run, &ss, ofm.c) != 0) {
        return -1;
    }
    struct ofm_scale os;
    if (u85_ofm_scale(run, &os) != 0) {
        return -1;
    }
    int low32 = acc_in.fm.elem == 8 && VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_B64_LOW32);
    pool_acc_run(acc_in, ofm, o, os, per_channel ? &ss : NULL, low32);
    u85_chain_release(run, &acc_in.fm, NULL);
    u85_ofm_done(run, &ofm);
    return 0;
}

int u85_op_pool(struct vnpu_exec *x, uint32_t param) { return op_pool(u85_run(x), param & 7u); }

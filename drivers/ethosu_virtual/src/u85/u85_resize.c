/* ethosu-porting-kit virtual NPU: Ethos-U85 RESIZE. */
#include "u85/u85.h"

/* ---- RESIZE -------------------------------------------------------------------------------- */

/* Per axis (y, x): the scale numerator n, the step d, the offset, in 1/n units. */
struct resize_steps {
    int n[2], d[2], off[2];
};

/* One axis' sample of output index o: the two clamped neighbours i0, i1 < len and the
 * distance from i0 in 1/n units (floor division, also for the negative offsets). */
static inline int resize_axis(int o, int n, int d, int off, int len, int *i0, int *i1)
{
    int v = o * d + off;
    int i = v >= 0 ? v / n : -((-v + n - 1) / n);
    *i0 = i < 0 ? 0 : (i >= len ? len - 1 : i);
    *i1 = i + 1 < 0 ? 0 : (i + 1 >= len ? len - 1 : i + 1);
    return v - i * n;
}

/* Every output of the resize, on copies no pointer reaches (the OFM stores cannot alias them). */
static void resize_run(const struct fm ifm, const struct ofm85 ofm, const struct vnpu_out o,
                       const struct ofm_scale os, const struct resize_steps st, uint32_t mode)
{
    for (int oy = 0; oy < ofm.h; oy++) {
        int y0;
        int y1;
        int dy = resize_axis(oy, st.n[0], st.d[0], st.off[0], ifm.h, &y0, &y1);
        for (int ox = 0; ox < ofm.w; ox++) {
            int x0;
            int x1;
            int dx = resize_axis(ox, st.n[1], st.d[1], st.off[1], ifm.w, &x0, &x1);
            for (int c = 0; c < ofm.c; c++) {
                int64_t acc;
                if (mode == 0) {
                    int64_t v00 = fm_read(&ifm, y0, x0, c) - ifm.zp;
                    int64_t v01 = fm_read(&ifm, y0, x1, c) - ifm.zp;
                    int64_t v10 = fm_read(&ifm, y1, x0, c) - ifm.zp;
                    int64_t v11 = fm_read(&ifm, y1, x1, c) - ifm.zp;
                    acc = v00 * (st.n[0] - dy) * (st.n[1] - dx) + v01 * (st.n[0] - dy) * dx +
                          v10 * dy * (st.n[1] - dx) + v11 * dy * dx;
                } else {
                    acc =
                        fm_read(&ifm, dy >= st.n[0] / 2 ? y1 : y0, dx >= st.n[1] / 2 ? x1 : x0, c) -
                        ifm.zp;
                }
                ofm_put(
                    &ofm, oy, ox, c,
                    vnpu_out_value(&o, vnpu_rescale(acc * 65536, os.scale, os.shift, os.round)));
            }
        }
    }
}

/*
 * TOSA RESIZE on the NPU: output (y, x) samples the IFM at (y * d + offset) / n per axis,
 * n = RESIZE_*_SCALE_N_M1 + 1, d from the one-step registers (int * n + mod). BILINEAR
 * weights the four neighbours by their distance in 1/n units (TOSA's integer
 * accumulator, n_y * n_x times the value); NEAREST takes the nearer one. The IFM extent
 * is KERNEL_HEIGHT/WIDTH, indices clamp to it. The NPU accumulator carries 16 more
 * fraction bits than TOSA's, which the OFM shift (16 + the TOSA rescale's) removes.
 */
static int op_resize(struct run85 *run, uint32_t mode)
{
    struct regs *r = &run->x.regs;
    struct ofm85 ofm;
    struct vnpu_out o;
    struct fm ifm;
    int storage = STORAGE_TILE2X2;
    if (mode == 1) {
        return vnpu_fail(&run->x, "resize_mode REPLICATE is not modelled");
    }
    if (mode > 2) {
        return vnpu_fail(&run->x, "resize_mode %lu is not defined", (unsigned long)mode);
    }
    if (u85_check_acc(run) != 0) {
        return -1;
    }
    run->b64_fm =
        (R0(ACC_FORMAT) & 3u) == 1 ? FM_OFM : -1; /* int16 bilinear: int48 out, rescaled later */
    int ofm_rc = u85_setup_ofm(run, &ofm);
    run->b64_fm = -1;
    if (ofm_rc != 0 || u85_setup_out(run, &o, &ofm.fm) != 0 ||
        u85_setup_fm(run, &ifm, FM_IFM, &storage, "IFM") != 0) {
        return -1;
    }
    if (R0(IFM_UPSCALE) & 3u) {
        return vnpu_fail(&run->x, "RESIZE with IFM upscaling is not modelled");
    }
    ifm.h = R0(KERNEL_HEIGHT_M1) + 1;
    ifm.w = R0(KERNEL_WIDTH_M1) + 1;
    ifm.c = ofm.c;
    if (vnpu_check_fm(&run->x, &ifm, "IFM") != 0) {
        return -1;
    }
    int n[2] = {(int)(R0(RESIZE_Y_SCALE_N_M1) & 0x7ffu) + 1,
                (int)(R0(RESIZE_X_SCALE_N_M1) & 0x7ffu) + 1};
    int d[2];
    int off[2];
    unsigned step_reg[2] = {RESIZE_Y, RESIZE_X};
    unsigned off_reg[2] = {RESIZE_Y_OFFSET, RESIZE_X_OFFSET};
    for (int a = 0; a < 2; a++) {
        d[a] = (int)(P1(step_reg[a]) & 0xfu) * n[a] + (int)(W1(step_reg[a]) & 0x7ffu);
        uint32_t raw = r->p0[off_reg[a] & 0xffu] & 0xfffu;
        off[a] = (raw & 0x800u) ? (int)raw - 4096 : (int)raw;
    }
    struct ofm_scale os;
    if (u85_ofm_scale(run, &os) != 0) {
        return -1;
    }
    struct resize_steps st;
    for (int i = 0; i < 2; i++) {
        st.n[i] = n[i];
        st.d[i] = d[i];
        st.off[i] = off[i];
    }
    resize_run(ifm, ofm, o, os, st, mode);
    u85_chain_release(run, &ifm, NULL);
    u85_ofm_done(run, &ofm);
    return 0;
}

int u85_op_resize(struct vnpu_exec *x, uint32_t param) { return op_resize(u85_run(x), param & 3u); }

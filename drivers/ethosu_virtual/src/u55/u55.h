/*
 * ethosu-porting-kit virtual NPU: the Ethos-U55/U65 executor (single core), bit-exact with the
 * arithmetic in the kit's command-stream reference (sections 5-10). What its operations
 * share: the feature-map, output-stage and kernel set-up from the registers.
 */
#ifndef VNPU_U55_H
#define VNPU_U55_H

#include "common/fm.h"
#include "common/kernel.h"
#include "common/rescale.h"
#include "interp.h"
#include "regs.h"

#include <stdint.h>

/* this architecture's own registers (the shared ones are in regs.h) */
enum {
    PARALLEL_MODE = 0x123,
    IFM2_SCALAR = 0x181,
    /* cmd1 */
    OPA_SCALE = 0x025,
    OPB_SCALE = 0x026,
};

/*
 * What every kernel operation (POOL, CONV, DEPTHWISE) sets up the same way: OFM, IFM, the
 * kernel geometry, the output stage and the OFM rounding, each checked against its region.
 */
struct kernel_op {
    struct fm ifm;
    struct fm ofm;
    struct kernel k;
    struct vnpu_out o;
    int round;    /* OFM round_mode */
    int ukh, ukw; /* undilated kernel taps */
};

/* Feature map `which` (FM_IFM, FM_IFM2, FM_OFM) from the registers. */
int u55_setup_fm(struct vnpu_exec *run, struct fm *f, int which, const char *what);
/* The output stage (activation, LUT, clamps) for this OFM. */
int u55_setup_out(struct vnpu_exec *run, struct vnpu_out *o, const struct fm *ofm);
/* The OFM with its extent, checked. */
int u55_setup_ofm(struct vnpu_exec *run, struct fm *ofm);
/* ifm_depth_reg: the IFM depth is IFM_DEPTH_M1 + 1 (else the OFM's depth). */
int u55_setup_kernel_op(struct vnpu_exec *run, struct kernel_op *op, int ifm_depth_reg);

/* The operations of the product's table (u55_pool.c, u55_elementwise.c, u55_conv.c, u55_dma.c). */
vnpu_op u55_op_pool, u55_op_elementwise, u55_op_conv, u55_op_depthwise, u55_op_dma;

#endif /* VNPU_U55_H */

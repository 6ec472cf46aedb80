/* ethosu-porting-kit virtual NPU: Ethos-U85 scale records, SWD and FWD weight streams and the
 * U85 weight order. */
#include "u85/u85.h"

#include "common/mlw.h"
#include "common/mutation.h"
#include "common/num.h"
#include "common/wcache.h"
#include "ethosu_virtual.h"

#include <string.h>

int u85_setup_scales(struct run85 *run, struct scale_stream *ss, int channels)
{
    struct regs *r = &run->x.regs;
    uint8_t *smem = NULL;
    size_t ssize = 0;
    if ((R0(ACC_FORMAT) & 3u) > 1) {
        return vnpu_fail(&run->x, "acc_format %lu is not defined",
                         (unsigned long)(R0(ACC_FORMAT) & 3u));
    }
    ss->acc48 = (R0(ACC_FORMAT) & 3u) == 1;
    if (vnpu_region_of(&run->x, R0(SCALE_REGION) & 7u, &smem, &ssize, "scale stream") != 0) {
        return -1;
    }
    int64_t sbase = addr40(r, SCALE_BASE);
    uint64_t slen = W1(SCALE_LENGTH) & 0xfffffu;
    if (sbase < 0 || slen < (uint64_t)channels * 10u || (uint64_t)sbase + slen > ssize) {
        return vnpu_fail(
            &run->x,
            "scale stream [%s, +%s) does not hold %d records inside its region of %lu bytes",
            VNPU_I64(sbase), VNPU_U64(slen), channels, (unsigned long)ssize);
    }
    ss->rec = smem + sbase;
    return 0;
}

void u85_scale_record(const struct scale_stream *ss, int channel, int64_t *bias, uint32_t *scale,
                      unsigned *shift)
{
    const uint8_t *rec = ss->rec + (size_t)channel * 10u;
    if (ss->acc48) {
        uint64_t braw = 0;
        for (int b = 5; b >= 0; b--) {
            braw = (braw << 8) | rec[b];
        }
        *bias = (braw & ((uint64_t)1 << 47)) ? (int64_t)(braw | ~(((uint64_t)1 << 48) - 1u))
                                             : (int64_t)braw;
        *scale = (uint32_t)rec[6] | ((uint32_t)(rec[7] & 0x7fu) << 8);
    } else {
        *bias = (int32_t)((uint32_t)rec[0] | ((uint32_t)rec[1] << 8) | ((uint32_t)rec[2] << 16) |
                          ((uint32_t)rec[3] << 24));
        *scale = (uint32_t)rec[4] | ((uint32_t)rec[5] << 8) | ((uint32_t)rec[6] << 16) |
                 ((uint32_t)(rec[7] & 0x7fu) << 24);
    }
    *shift = rec[8] & 0x3fu;
}

/* ---- weights: SWD and FWD streams, the U85 brick order -------------------------------------- */

/*
 * A fast-weight-decoder (FWD) stream: a 256-bit header (raw flag, small-palette flag,
 * 102 zero bits, an 8-bit zero adjust, 16 palette entries of 9 bits folded as
 * |v|<<1 | sign), then fixed-width codes: 2-bit palette indices (small palette),
 * 4-bit ones, or raw bytes offset by the zero adjust; LSB first. Fixed width makes
 * it random access: value i is at bit 256 + i * width.
 */
struct fwd {
    const uint8_t *buf;
    size_t size;
    int width; /* 2, 4 or 8 */
    int zero_adjust;
    int16_t palette[16];
};

static uint32_t bits_at(const uint8_t *buf, size_t bitpos, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++) {
        size_t b = bitpos + (size_t)i;
        v |= (uint32_t)((buf[b >> 3] >> (b & 7u)) & 1u) << i;
    }
    return v;
}

static int fwd_init(struct fwd *f, const uint8_t *buf, size_t size)
{
    if (size < 32) {
        return -1;
    }
    f->buf = buf;
    f->size = size;
    int raw = (int)bits_at(buf, 0, 1);
    int small = (int)bits_at(buf, 1, 1);
    f->width = raw ? 8 : (small ? 2 : 4);
    f->zero_adjust = (int8_t)(uint8_t)bits_at(buf, 104, 8);
    for (int i = 0; i < 16; i++) {
        uint32_t folded = bits_at(buf, 112 + 9u * (size_t)i, 9);
        int mag = (int)(folded >> 1);
        f->palette[i] = (int16_t)((folded & 1u) ? -mag : mag);
    }
    return 0;
}

/* 1 and *value, or -1 past the end of the stream. */
static int fwd_get(const struct fwd *f, size_t i, int16_t *value)
{
    size_t pos = 256u + i * (size_t)f->width;
    if ((pos + (size_t)f->width + 7u) / 8u > f->size) {
        return -1;
    }
    /* 2-, 4- and 8-bit codes after a 32-byte header never straddle a byte */
    uint32_t code = ((uint32_t)f->buf[pos >> 3] >> (pos & 7u)) & ((1u << f->width) - 1u);
    if (f->width == 8) {
        *value = (int16_t)((int8_t)(uint8_t)code - f->zero_adjust);
    } else {
        *value = f->palette[code];
    }
    return 1;
}

/* The values one weight decoder delivers: its SWD stream, or its share of the one FWD stream. */
struct wdec {
    int fwd_format;
    struct vnpu_mlw mlw;
    struct fwd fwd;
    size_t k;    /* values delivered so far */
    int stream;  /* which decoder's share of an FWD stream */
    int streams; /* FWD streams are interleaved in blocks of `block` values */
    size_t block;
    size_t k_per_stream; /* for the mutation only */
};

long ethosu_virtual_fwd_decode(const uint8_t *in, size_t len, int16_t *out, size_t max_out)
{
    struct fwd f;
    if (in == NULL || fwd_init(&f, in, len) != 0) {
        return -1;
    }
    size_t n = (len * 8u - 256u) / (size_t)f.width;
    if (n > max_out) {
        return -2;
    }
    for (size_t i = 0; i < n; i++) {
        (void)fwd_get(&f, i, &out[i]);
    }
    return (long)n;
}

/* The FWD code index of value k of decoder d's share. */
static size_t fwd_index(const struct wdec *d, size_t k)
{
    if (VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_FWD_NO_INTERLEAVE)) {
        return k + (size_t)d->stream * d->k_per_stream;
    }
    return ((k / d->block) * (size_t)d->streams + (size_t)d->stream) * d->block + k % d->block;
}

/*
 * The next n values (n <= 64) into dst: 0, -1 if the stream ended before them, -2 if it is
 * malformed (what the first value short of n would have said). Runs of values, not one call
 * each: an FWD share's values are consecutive codes within a block of the interleave.
 */
static int wdec_read(struct wdec *d, int16_t *dst, int n)
{
    if (!d->fwd_format) {
        int status;
        if (vnpu_mlw_read(&d->mlw, dst, (size_t)n, &status) == (size_t)n) {
            return 0;
        }
        return status < 0 ? -2 : -1;
    }
    const struct fwd *f = &d->fwd;
    const uint32_t mask = (1u << f->width) - 1u;
    int got = 0;
    while (got < n) {
        size_t i = fwd_index(d, d->k);
        size_t run = (size_t)(n - got);
        if (!VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_FWD_NO_INTERLEAVE)) {
            size_t in_block = d->block - d->k % d->block;
            run = run < in_block ? run : in_block;
        }
        size_t pos = 256u + i * (size_t)f->width;
        if ((pos + run * (size_t)f->width + 7u) / 8u > f->size) {
            /* past the end within the run: value by value up to there */
            for (; got < n; got++) {
                if (fwd_get(f, fwd_index(d, d->k), &dst[got]) != 1) {
                    return -2;
                }
                d->k++;
            }
            return 0;
        }
        /* 2-, 4- and 8-bit codes after a 32-byte header never straddle a byte */
        for (size_t j = 0; j < run; j++, pos += (size_t)f->width) {
            uint32_t code = ((uint32_t)f->buf[pos >> 3] >> (pos & 7u)) & mask;
            dst[got + (int)j] = f->width == 8 ? (int16_t)((int8_t)(uint8_t)code - f->zero_adjust)
                                              : f->palette[code];
        }
        got += (int)run;
        d->k += run;
    }
    return 0;
}

/* Read and drop n values the decoder padded with: 0, or -1 (ended) / -2 (malformed). */
static int skip_values(struct wdec *dec, int n)
{
    int16_t drop[64];
    for (int p = 0; p < n; p += 64) {
        int rc = wdec_read(dec, drop, n - p < 64 ? n - p : 64);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* One micro-block of the walk: its sub-kernel and first input and output channels. */
struct walk_at {
    int stream;
    int ifm_depth, ifm_step;
    int skx, sky, sub_w, sub_h; /* the sub-kernel of the decomposition */
    int ic0, oc0;
};

/* The values of kernel element (wx, wy) of the micro-block `at`, stored as weight_walk says:
 * per output channel group, 4 channels' ifm_step input channels each, read as one run. */
static inline int walk_element(const struct wgeom *g, const struct walk_at *at, struct wdec *dec,
                               int16_t *weights, int wx, int wy)
{
    const int step = at->ifm_step; /* 16 at most */
    for (int iu_i = 0; iu_i < g->ifm_ublock; iu_i += step) {
        int ic0 = at->ic0 + iu_i;
        int ic_n = at->ifm_depth - ic0 < step ? at->ifm_depth - ic0 : step;
        for (int ou = at->stream * 4; ou < g->ofm_ublock; ou += 4 * g->streams) {
            int16_t vals[4 * 16];
            int rc = wdec_read(dec, vals, 4 * step);
            if (rc != 0) {
                return rc;
            }
            for (int ou_i = 0; ou_i < 4 && ic_n > 0; ou_i++) {
                int oc = at->oc0 + ou + ou_i;
                if (oc >= g->ofm_depth) {
                    break;
                }
                int16_t *dst =
                    weights +
                    (((size_t)oc * (size_t)g->kh + (size_t)wy) * (size_t)g->kw + (size_t)wx) *
                        (size_t)at->ifm_depth +
                    (size_t)ic0;
                memcpy(dst, vals + ou_i * step, (size_t)ic_n * sizeof(int16_t));
            }
        }
    }
    return 0;
}

/* The micro-block `at`: its sub-kernel split by the strides, row by row in serpentine order,
 * and the padding values of a depthwise round and of the round-up. */
static int walk_ublock(const struct wgeom *g, const struct walk_at *at, struct wdec *dec,
                       int16_t *weights)
{
    int elements = (at->sub_w * at->sub_h + g->round - 1) / g->round * g->round;
    for (int py = 0; py < g->sy; py++) {
        int skh = (at->sub_h + g->sy - 1 - py) / g->sy;
        for (int px = 0; px < g->sx; px++) {
            int skw = (at->sub_w + g->sx - 1 - px) / g->sx;
            for (int ky = 0; ky < skh; ky++) {
                for (int kx0 = 0; kx0 < skw; kx0++) {
                    int kx = ky % 2 == 0 || VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_NO_SERPENTINE)
                                 ? kx0
                                 : skw - 1 - kx0;
                    elements--;
                    int rc = walk_element(g, at, dec, weights, at->skx + px + kx * g->sx,
                                          at->sky + py + ky * g->sy);
                    if (rc == 0 && g->depthwise && elements % g->round == 0) {
                        rc = skip_values(dec, g->dw_padding * g->ofm_ublock / g->streams);
                    }
                    if (rc != 0) {
                        return rc;
                    }
                }
            }
        }
    }
    if (elements > 0) {
        return skip_values(dec, (elements + (g->depthwise ? g->dw_padding : 0)) * g->ifm_ublock *
                                    g->ofm_ublock / g->streams);
    }
    return 0;
}

/*
 * Walk one weight stream in the order the U85 weight decoder delivers it and store each
 * value at weights[((o*kh + y)*kw + x)*ifm_depth + i]. A value the decoder had to pad
 * (beyond the depth, or a round-up) must be read but is dropped. 0, -1 if the stream
 * ended early, -2 if it is malformed.
 */
static int weight_walk(const struct wgeom *g, int stream, struct wdec *dec, int16_t *weights)
{
    struct walk_at at;
    at.stream = stream;
    at.ifm_depth = g->depthwise ? 1 : g->ifm_depth;
    at.ifm_step = g->depthwise ? 1 : (g->sparse ? 16 : 8);
    int inc = -g->ifm_block;
    int ifm_start = 0;
    for (int oz0 = 0; oz0 < g->ofm_depth; oz0 += g->ofm_block) {
        inc = -inc;
        int ofm_blk = g->ofm_depth - oz0 < g->ofm_block ? g->ofm_depth - oz0 : g->ofm_block;
        for (int iz0 = ifm_start; iz0 < at.ifm_depth && iz0 >= 0; iz0 += inc) {
            ifm_start = iz0;
            int ifm_blk = at.ifm_depth - iz0 < g->ifm_block ? at.ifm_depth - iz0 : g->ifm_block;
            for (at.skx = 0; at.skx < g->kw; at.skx += g->decomp_x) {
                at.sub_w = g->kw - at.skx < g->decomp_x ? g->kw - at.skx : g->decomp_x;
                for (at.sky = 0; at.sky < g->kh; at.sky += g->decomp_y) {
                    at.sub_h = g->kh - at.sky < g->decomp_y ? g->kh - at.sky : g->decomp_y;
                    int outer_end = g->depthwise ? 1 : ifm_blk;
                    for (int iu_o = 0; iu_o < outer_end; iu_o += g->ifm_ublock) {
                        for (int ou_o = 0; ou_o < ofm_blk; ou_o += g->ofm_ublock) {
                            at.ic0 = iz0 + iu_o;
                            at.oc0 = oz0 + ou_o;
                            int rc = walk_ublock(g, &at, dec, weights);
                            if (rc != 0) {
                                return rc;
                            }
                        }
                    }
                }
            }
        }
    }
    return 0;
}

/* OFM microblock depth: the MACs per cycle spread over the microblock's H x W. */
static int ublock_depth(struct run85 *run)
{
    struct regs *r = &run->x.regs;
    static const int area[8] = {1, 2, 4, 4, 8, 16, 0, 0};
    int a = area[(R0(ACC_FORMAT) >> 8) & 7u];
    if (a == 0) {
        return 0;
    }
    return run->macs / 8 / a;
}

int u85_weight_order(struct run85 *run, const struct kernel *k, int depthwise, const struct fm *ifm,
                     int ofm_depth, struct wgeom *g)
{
    struct regs *r = &run->x.regs;
    uint32_t wfmt = R0(WEIGHT_FORMAT);
    memset(g, 0, sizeof(*g));
    g->depthwise = depthwise;
    g->part_kernel = !depthwise && ((R0(KERNEL_STRIDE) >> 2) & 1u);
    g->sparse = (int)((wfmt >> 4) & 1u) && !VNPU_MUTANT(ETHOSU_VIRTUAL_MUT_U85_SPARSE_AS_DENSE);
    g->ifm16 = ifm->elem == 2;
    g->ofm_depth = ofm_depth;
    g->ifm_depth = depthwise ? 1 : ifm->c;
    g->kh = (k->kh - 1) / k->dy + 1;
    g->kw = (k->kw - 1) / k->dx + 1;
    g->decomp_x = 8 / k->dx;
    g->decomp_y = 8 / k->dy;
    g->ofm_block = R0(OFM_BLK_DEPTH_M1) + 1;
    g->ofm_ublock = ublock_depth(run);
    g->streams = run->cores;
    if (g->ofm_ublock <= 0) {
        return vnpu_fail(&run->x, "microblock %lu is not defined",
                         (unsigned long)((R0(ACC_FORMAT) >> 8) & 7u));
    }
    if (g->sparse && depthwise) {
        return vnpu_fail(&run->x,
                         "weight_sparsity SPARSE_2_4 with a depthwise convolution is not modelled");
    }
    if (depthwise) {
        g->sx = k->sx;
        g->sy = k->sy;
        g->round = 10;
        g->ifm_ublock = 1;
        g->ifm_block = 1;
        g->dw_padding = (!g->ifm16 && run->macs <= 256) ? 0 : (run->macs <= 512 ? 2 : 6);
    } else if (g->part_kernel) {
        g->sx = k->sx;
        g->sy = k->sy;
        g->round = (g->ifm16 || g->sparse) ? 10 : 5;
        g->ifm_block = 16;
        g->ifm_ublock = g->ifm16 && !g->sparse ? 8 : g->ifm_block;
    } else {
        g->sx = 1;
        g->sy = 1;
        g->round = 1;
        g->ifm_block = 64;
        if ((run->macs == 128 || run->macs == 256) && g->ofm_ublock == 16 && !g->sparse) {
            g->ifm_block = 32;
        } else if (g->sparse) {
            g->ifm_block = 128;
        }
        g->ifm_ublock = g->ifm_block;
    }
    return 0;
}

/* The base register of weight stream s (WEIGHT_BASE, then WEIGHT1_BASE, ...). */
static unsigned stream_base_reg(int s)
{
    return s == 0 ? WEIGHT_BASE : WEIGHT1_BASE + 2u * (unsigned)(s - 1);
}

/* The weight streams, each proved inside the weight region (segs[s]: its bytes). */
static int weight_streams(struct run85 *run, int nstreams, struct vnpu_wseg segs[4])
{
    struct regs *r = &run->x.regs;
    uint8_t *wmem = NULL;
    size_t wsize = 0;
    if (vnpu_region_of(&run->x, R0(WEIGHT_REGION) & 7u, &wmem, &wsize, "weight stream") != 0) {
        return -1;
    }
    memset(segs, 0, 4 * sizeof(segs[0]));
    for (int s = 0; s < nstreams; s++) {
        unsigned base_reg = stream_base_reg(s);
        int64_t wbase = addr40(r, base_reg);
        uint64_t wlen = W1(base_reg + 1u);
        if (wbase < 0 || (uint64_t)wbase + wlen > wsize) {
            return vnpu_fail(&run->x, "weight stream %d [%s, +%s) outside its region of %lu bytes",
                             s, VNPU_I64(wbase), VNPU_U64(wlen), (unsigned long)wsize);
        }
        if (s < 4) {
            segs[s].p = wmem + wbase;
            segs[s].len = (size_t)wlen;
        }
    }
    return 0;
}

/* Walk every part of stream s into `decoded`: 0, or -1 failed; *need the slice memory. */
static int decode_stream(struct run85 *run, const struct wgeom *g, int fwd_format, int s,
                         const struct vnpu_wseg *seg, size_t fixed, size_t kept, int16_t *decoded,
                         size_t *need)
{
    struct vnpu_env *env = run->x.env;
    struct fwd fwd;
    if (fwd_format && fwd_init(&fwd, seg->p, seg->len) != 0) {
        return vnpu_fail(&run->x, "FWD weight stream of %s bytes has no header",
                         VNPU_U64(seg->len));
    }
    for (int part = 0; part < (fwd_format ? g->streams : 1); part++) {
        struct wdec dec;
        memset(&dec, 0, sizeof(dec));
        dec.fwd_format = fwd_format;
        if (fwd_format) {
            dec.fwd = fwd;
            dec.stream = part;
            dec.streams = g->streams;
            dec.block = (size_t)g->ofm_ublock * (size_t)g->ifm_ublock * (size_t)g->round /
                        (size_t)g->streams;
            dec.k_per_stream = (fwd.size * 8u - 256u) / (size_t)fwd.width / (size_t)g->streams;
        } else {
            vnpu_mlw_init(&dec.mlw, seg->p, seg->len, env->workspace + fixed,
                          env->workspace_size - fixed);
        }
        int rc = weight_walk(g, fwd_format ? part : s, &dec, decoded);
        *need = dec.mlw.need > *need ? dec.mlw.need : *need;
        if (rc == 0) {
            continue;
        }
        if (rc == -2 && !fwd_format &&
            vnpu_workspace_claim(&run->x, fixed + dec.mlw.need, kept, "weight slice",
                                 dec.mlw.need) != 0) {
            return -1;
        }
        return vnpu_fail(&run->x, "%s weight stream %d %s (weight decoder fault)",
                         fwd_format ? "FWD" : "SWD", s, rc == -1 ? "ended early" : "is malformed");
    }
    return 0;
}

int u85_decode_weights(struct run85 *run, const struct wgeom *g, size_t used, size_t fixed,
                       size_t nweights, const int16_t **weights)
{
    struct regs *r = &run->x.regs;
    struct vnpu_env *env = run->x.env;
    int fwd_format = (int)(R0(WEIGHT_FORMAT) & 1u);
    int nstreams = fwd_format ? 1 : g->streams; /* FWD: one stream the decoders share */
    struct vnpu_wseg segs[4];
    if (weight_streams(run, nstreams, segs) != 0) {
        return -1;
    }
    /* the decode order and the mutations the walk obeys: the cache key with the streams' bytes */
    struct {
        struct wgeom g;
        int fwd_format;
        unsigned mutations;
    } wkey;
    memset(&wkey, 0, sizeof(wkey));
    wkey.g = *g;
    wkey.fwd_format = fwd_format;
    wkey.mutations = (unsigned)VNPU_MUTATIONS();
    size_t hit = 0;
    *weights =
        vnpu_wcache_find(&wkey, sizeof(wkey), segs, nstreams, used, env->workspace_size, &hit);
    if (*weights != NULL) {
        vnpu_workspace_used(env, hit);
        return 0;
    }
    int16_t *decoded = (int16_t *)(void *)(env->workspace + used);
    memset(decoded, 0, nweights * sizeof(int16_t));
    size_t need = 0;
    for (int s = 0; s < nstreams; s++) {
        if (decode_stream(run, g, fwd_format, s, &segs[s], fixed, fixed - used, decoded, &need) !=
            0) {
            return -1;
        }
    }
    if (vnpu_workspace_claim(&run->x, fixed + need, fixed - used, "weight slice", need) != 0) {
        return -1;
    }
    const int16_t *kept = vnpu_wcache_add(&wkey, sizeof(wkey), segs, nstreams, decoded, nweights,
                                          fixed - used + need);
    *weights = kept != NULL ? kept : decoded; /* the cache's copy: its vector layout too */
    return 0;
}

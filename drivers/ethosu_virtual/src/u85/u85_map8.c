/* ethosu-porting-kit virtual NPU: Ethos-U85 8-bit maps, each output byte a function of one
 * input byte (the transposing copies, unary and scalar elementwise operations). */
#include "u85/u85.h"

#include <string.h>

/* The operation axes of f (memory axis i takes operation axis axis[i]; `reverse` as
 * activation_reverse), if f is one tile of 8-bit elements over its extent; else 0. */
int u85_axes_of(const struct fm *f, const int axis[3], int reverse, struct axis_map m[3])
{
    if (f->elem != 1 || f->h > f->h0 || f->w > f->w0) {
        return 0;
    }
    const int ext[3] = {f->h, f->w, f->c};
    for (int i = 0; i < 3; i++) {
        struct axis_map *a = &m[axis[i]];
        a->stride = i == 0 ? f->sy : (i == 1 ? f->sx : 1);
        a->brick = i == 2 && f->brick;
        a->sc = f->sc;
        a->rev = reverse == i + 1;
        a->ext = ext[i];
    }
    return 1;
}

uint8_t *u85_map8_table(enum vnpu_memo_kind kind, const int64_t *values, int n,
                        const struct vnpu_out *o, uint8_t own[256], int *fresh)
{
    /* the key's bytes, no padding: the values, the output stage's fields (vnpu_memo_out: 11),
     * its LUT's bytes */
    int64_t v[U85_MAP8_KEY_VALUES + 11];
    uint8_t key[sizeof(v) + 256];
    if (n < 0 || n > U85_MAP8_KEY_VALUES) {
        *fresh = 1; /* a key this long has no room: build the table in `own`, unshared */
        return own;
    }
    size_t used = (size_t)(n + 11) * sizeof(v[0]);
    memcpy(v, values, (size_t)n * sizeof(v[0]));
    vnpu_memo_out(&v[n], o);
    memcpy(key, v, used);
    int lut = vnpu_memo_lut8(key + used, o);
    *fresh = 1;
    uint8_t *table =
        lut < 0 ? NULL : (uint8_t *)vnpu_memo_get(kind, key, used + (size_t)lut, 256u, fresh);
    return table != NULL ? table : own;
}

/* Operations with an 8-bit map this large take the table (256 evaluations) instead. */
#define MAP8_MIN_VALUES 256

/* 1 if the operation can run as map8 (and ia, oa set): an untransposed 8-bit IFM of the
 * operation's extent, an 8-bit OFM, both one tile. */
int u85_map8_ok(const struct fm *in, const struct ofm85 *o, struct axis_map ia[3],
                struct axis_map oa[3])
{
    static const int identity[3] = {0, 1, 2};
    return (size_t)o->h * (size_t)o->w * (size_t)o->c >= MAP8_MIN_VALUES && in->h == o->h &&
           in->w == o->w && in->c == o->c && u85_axes_of(in, identity, 0, ia) &&
           u85_axes_of(&o->fm, o->axis, o->reverse, oa);
}

/* Every byte by axis_off, channels innermost (maps without a linear axis). */
static void map8_any(const uint8_t *ib, const struct axis_map ia[3], uint8_t *ob,
                     const struct axis_map oa[3], const int ext[3], const uint8_t table[256])
{
    for (int y = 0; y < ext[0]; y++) {
        for (int x = 0; x < ext[1]; x++) {
            const uint8_t *ip = ib + axis_off(&ia[0], y) + axis_off(&ia[1], x);
            uint8_t *op = ob + axis_off(&oa[0], y) + axis_off(&oa[1], x);
            for (int c = 0; c < ext[2]; c++) {
                op[axis_off(&oa[2], c)] = table[ip[axis_off(&ia[2], c)]];
            }
        }
    }
}

/* 1 if entry t of the table is t (the byte copy). */
static int map8_is_copy(const uint8_t table[256])
{
    int same = 1;
    for (int t = 0; t < 256; t++) {
        same &= table[t] == t;
    }
    return same;
}

/* Bytes an axis's run of steps lies apart, for an axis without reverse: its stride, or 1 in a
 * brick's channel axis, whose runs are the up to 16 channels of one brick. */
static ptrdiff_t map8_step(const struct axis_map *a) { return a->brick ? 1 : (ptrdiff_t)a->stride; }

/* The steps of axis i one run takes (a brick's channel axis: 16, its channels adjacent). */
static int map8_run(const struct axis_map *ia, const struct axis_map *oa, int ext)
{
    return (ia->brick || oa->brick) && ext > 16 ? 16 : ext;
}

/* out[p * osp + q + r * osr] = in[p + q * isq + r * isr] over np x nq x nr bytes (a transpose
 * copy whose input runs along p and output along q): each r plane by vnpu_transpose_bytes. */
static void map8_transpose(const uint8_t *in, ptrdiff_t isq, ptrdiff_t isr, uint8_t *out,
                           ptrdiff_t osp, ptrdiff_t osr, int np, int nq, int nr)
{
    for (int r = 0; r < nr; r++) {
        vnpu_transpose_bytes(in + r * isr, isq, out + r * osr, osp, np, nq);
    }
}

/* The bytes between steps of each axis of a copy without reverse, strides positive (a brick's
 * channel axis of at most 16 steps is a stride of 1), in ist and ost, if input and output lie
 * apart; else 0. */
static int map8_plain(const uint8_t *ib, const struct axis_map ia[3], const uint8_t *ob,
                      const struct axis_map oa[3], const int ext[3], ptrdiff_t ist[3],
                      ptrdiff_t ost[3])
{
    size_t ispan = 1;
    size_t ospan = 1;
    for (int i = 0; i < 3; i++) {
        if (ia[i].rev || oa[i].rev || ext[i] <= 0 || (ia[i].brick && ext[i] > 16) ||
            (oa[i].brick && ext[i] > 16) || ia[i].stride < 1 || oa[i].stride < 1) {
            return 0;
        }
        ist[i] = ia[i].brick ? 1 : (ptrdiff_t)ia[i].stride;
        ost[i] = oa[i].brick ? 1 : (ptrdiff_t)oa[i].stride;
        ispan += (size_t)(ext[i] - 1) * (size_t)ist[i];
        ospan += (size_t)(ext[i] - 1) * (size_t)ost[i];
    }
    return ib + ispan <= ob || ob + ospan <= ib;
}

/* A copy whose channels are contiguous on both sides: runs of the channels, merged with the
 * outer axes where both sides continue them (a brick of 8 channels to a linear map is 8-byte
 * runs, a linear map to a linear one a single run); fixed-size runs without a memcpy call. */
static void map8_copy_runs(const uint8_t *in, const ptrdiff_t ist[3], uint8_t *out,
                           const ptrdiff_t ost[3], const int ext[3])
{
    ptrdiff_t n = ext[2];
    int n1 = ext[1];
    int n0 = ext[0];
    if (ist[1] == n && ost[1] == n) {
        n *= n1;
        n1 = 1;
        if (ist[0] == n && ost[0] == n) {
            n *= n0;
            n0 = 1;
        }
    }
    for (int y = 0; y < n0; y++) {
        for (int x = 0; x < n1; x++) {
            const uint8_t *ip = in + y * ist[0] + x * ist[1];
            uint8_t *op = out + y * ost[0] + x * ost[1];
            if (n == 8) {
                memcpy(op, ip, 8);
            } else if (n == 16) {
                memcpy(op, ip, 16);
            } else {
                memcpy(op, ip, (size_t)n);
            }
        }
    }
}

/* 1 if map8_transpose or map8_copy_runs did the operation: a copy (the identity table) of a
 * plain map whose channels are contiguous in the input. */
static int map8_copy_fast(const uint8_t *ib, const struct axis_map ia[3], uint8_t *ob,
                          const struct axis_map oa[3], const int ext[3])
{
    ptrdiff_t ist[3];
    ptrdiff_t ost[3];
    if (!map8_plain(ib, ia, ob, oa, ext, ist, ost) || ist[2] != 1) {
        return 0;
    }
    if (ost[2] == 1) {
        map8_copy_runs(ib, ist, ob, ost, ext);
        return 1;
    }
    for (int q = 0; q < 2; q++) {
        if (ost[q] == 1) {
            const int r = 1 - q; /* the axis neither 2 nor q */
            map8_transpose(ib, ist[q], ist[r], ob, ost[2], ost[r], ext[2], ext[q], ext[r]);
            return 1;
        }
    }
    return 0;
}

/* OFM(y, x, c) = table[IFM(y, x, c)] over the operation's extent, transpose and reverse
 * included. The innermost loop walks the axis without reverse in both maps whose runs are
 * longest (a transpose's one-channel planes are long rows, not single bytes; a brick's channel
 * axis runs 16 bytes), with plain strides: each run costs its two axis_off sums.
 * Aligned to a cache line: the copy loops' speed on the host moved by 15 % (u85_permute 4.0 ->
 * 4.7 us) with where other operations' code placed them. */
__attribute__((aligned(64))) void u85_map8(const struct fm *in, const struct axis_map ia[3],
                                           const struct ofm85 *o, const struct axis_map oa[3],
                                           const uint8_t table[256])
{
    const uint8_t *ib = in->mem + in->base[0];
    uint8_t *ob = o->fm.mem + o->fm.base[0];
    const int ext[3] = {o->h, o->w, o->c};
    int inner = -1;
    int best = 0;
    for (int i = 0; i < 3; i++) {
        int run = map8_run(&ia[i], &oa[i], ext[i]);
        if (!ia[i].rev && !oa[i].rev && run > best) {
            inner = i;
            best = run;
        }
    }
    if (inner < 0) {
        map8_any(ib, ia, ob, oa, ext, table);
        return;
    }
    /* the identity table (a transpose or a reverse by POOL, every benchmark model's map8):
     * a copy, one load a byte fewer */
    const int copy = map8_is_copy(table);
    if (copy && map8_copy_fast(ib, ia, ob, oa, ext)) {
        return;
    }
    const int a0 = inner == 0 ? 1 : 0;
    const int a1 = inner == 2 ? 1 : 2;
    const ptrdiff_t is = map8_step(&ia[inner]);
    const ptrdiff_t os = map8_step(&oa[inner]);
    for (int u = 0; u < ext[a0]; u++) {
        for (int v = 0; v < ext[a1]; v++) {
            const uint8_t *iuv = ib + axis_off(&ia[a0], u) + axis_off(&ia[a1], v);
            uint8_t *ouv = ob + axis_off(&oa[a0], u) + axis_off(&oa[a1], v);
            for (int j0 = 0; j0 < ext[inner]; j0 += best) {
                /* the first run starts at the pixel (no reverse): no axis_off sums for it */
                const uint8_t *ip = j0 == 0 ? iuv : iuv + axis_off(&ia[inner], j0);
                uint8_t *op = j0 == 0 ? ouv : ouv + axis_off(&oa[inner], j0);
                const int n = ext[inner] - j0 < best ? ext[inner] - j0 : best;
                if (copy && is == 1 && os == 1) {
                    memcpy(op, ip, (size_t)n);
                } else if (copy) {
                    for (int j = 0; j < n; j++) {
                        op[(ptrdiff_t)j * os] = ip[(ptrdiff_t)j * is];
                    }
                } else if (is == 1 && os == 1) {
                    for (int j = 0; j < n; j++) {
                        op[j] = table[ip[j]];
                    }
                } else {
                    for (int j = 0; j < n; j++) {
                        op[(ptrdiff_t)j * os] = table[ip[(ptrdiff_t)j * is]];
                    }
                }
            }
        }
    }
}

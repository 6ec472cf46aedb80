/* ethosu-porting-kit virtual NPU: the feature-map and region checks every product makes. */
#include "common/fm.h"

#include "common/num.h"

#include <stdio.h>

int vnpu_fm_check(const struct fm *f, const char *what, char *why, size_t len)
{
    if (f->h <= 0 || f->w <= 0 || f->c <= 0) {
        return 0;
    }
    /* per tile: rows and columns it covers */
    int rows[4][2] = {{0, f->h0}, {0, f->h1}, {f->h0, f->h}, {f->h1, f->h}};
    int cols[4][2] = {{0, f->w0}, {f->w0, f->w}, {0, f->w0}, {f->w0, f->w}};
    for (int t = 0; t < 4; t++) {
        int y0 = rows[t][0];
        int y1 = rows[t][1] < f->h ? rows[t][1] : f->h;
        int x0 = cols[t][0];
        int x1 = cols[t][1] < f->w ? cols[t][1] : f->w;
        if (y1 <= y0 || x1 <= x0) {
            continue;
        }
        /* within tile t (fm_offset's t: rows from y0, columns from x0) an offset is base[t] +
         * y * sy + x * sx + a channel term, so its extremes are the sums of each term's: 2 + 2
         * + 4 values instead of 16 offsets */
        int64_t ys[2] = {0, (int64_t)(y1 - 1 - y0) * f->sy};
        int64_t xs[2] = {0, (int64_t)(x1 - 1 - x0) * f->sx};
        int cs[4] = {0, f->c - 1, f->c > 16 ? 15 : f->c - 1, f->c > 16 ? 16 : 0};
        int64_t lo = f->base[t] + (ys[0] < ys[1] ? ys[0] : ys[1]) + (xs[0] < xs[1] ? xs[0] : xs[1]);
        int64_t hi = f->base[t] + (ys[0] > ys[1] ? ys[0] : ys[1]) + (xs[0] > xs[1] ? xs[0] : xs[1]);
        int64_t clo = INT64_MAX;
        int64_t chi = INT64_MIN;
        for (int i = 0; i < 4; i++) {
            int64_t o = f->brick ? (int64_t)(cs[i] >> 4) * f->sc + (int64_t)(cs[i] & 15) * f->elem
                                 : (int64_t)cs[i] * f->elem;
            clo = o < clo ? o : clo;
            chi = o > chi ? o : chi;
        }
        lo += clo;
        hi += chi;
        if (lo < 0 || hi + f->elem > (int64_t)f->size) {
            snprintf(why, len, "%s tile %d spans bytes [%s, %s) outside its region of %lu bytes",
                     what, t, VNPU_I64(lo), VNPU_I64(hi + f->elem), (unsigned long)f->size);
            return -1;
        }
    }
    return 0;
}

int vnpu_fm_precision(struct fm *f, uint32_t prec, int bits, const char *what, char *why,
                      size_t len)
{
    uint32_t format = (prec >> 6) & 3u;
    f->elem = 1 << bits;
    f->is_signed = (int)(prec & 1u);
    f->brick = (int)format;
    if (bits == 3) {
        snprintf(why, len, "%s precision B64 is not supported", what);
        return -1;
    }
    if (format > 1) {
        snprintf(why, len, "%s activation_format %lu is not defined", what, (unsigned long)format);
        return -1;
    }
    if (!f->is_signed && f->elem == 4) {
        snprintf(why, len, "%s unsigned 32-bit precision is not supported", what);
        return -1;
    }
    return 0;
}

int vnpu_region(const struct vnpu_env *env, unsigned region, uint8_t **mem, size_t *size,
                const char *what, char *why, size_t len)
{
    if (region >= (unsigned)env->num_regions || env->region[region] == NULL) {
        snprintf(why, len, "%s uses region %u but only %d base addresses were given", what, region,
                 env->num_regions);
        return -1;
    }
    *mem = env->region[region];
    *size = env->region_size[region];
    return 0;
}

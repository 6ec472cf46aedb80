/* ethosu-porting-kit virtual NPU: the MLW weight-stream decoder (U55/U65 streams, U85 SWD streams). */
#ifndef VNPU_MLW_H
#define VNPU_MLW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Pull decoder of an MLW weight stream: one 9-bit value at a time. */
struct vnpu_mlw {
    const uint8_t *buf;
    size_t size;
    size_t bitpos;
    uint16_t *wval; /* slice buffers, in caller memory */
    uint32_t *zrun;
    size_t capacity; /* values the slice buffers can hold */
    int16_t palette[32];
    int palsize;
    int palbits;
    int direct_offset;
    int first;
    int prev_zero_run;
    /* emission state of the current slice */
    int nvalues;
    int new_palette;
    int use_zero_run;
    int index;      /* next weight of the slice */
    uint32_t zeros; /* zeros still to emit before it */
    int in_slice;
    int ended;
    size_t need; /* bytes of memory the largest slice seen so far needs (vnpu_mlw_bytes) */
};

/* Memory the decoder needs for a slice of `values` weights (+1 for a new palette's zero run). */
#define VNPU_MLW_BYTES(values) (4u + 6u * (size_t)(values))

void vnpu_mlw_init(struct vnpu_mlw *d, const uint8_t *buf, size_t size, void *mem, size_t mem_size);
/* Decode the next slice: 1, 0 at the end of the stream, -1 if malformed (or it does not fit). */
int vnpu_mlw_refill(struct vnpu_mlw *d);

/* 1 and *value set, 0 at the end of the stream, -1 if malformed (or the slice does not fit).
 * Inline: it runs once per weight, the slice decode behind it once per slice. */
static inline int vnpu_mlw_next(struct vnpu_mlw *d, int16_t *value)
{
    for (;;) {
        if (d->zeros > 0) {
            d->zeros--;
            *value = 0;
            return 1;
        }
        if (d->in_slice && d->index < d->nvalues) {
            int w = d->wval[d->index];
            int v = w < d->palsize ? d->palette[w] : w - d->palsize + d->direct_offset;
            int mag = v >> 1;
            *value = (int16_t)((v & 1) ? -mag : mag);
            if (d->use_zero_run) {
                d->zeros = d->zrun[d->index + d->new_palette];
            }
            d->index++;
            return 1;
        }
        int r = vnpu_mlw_refill(d);
        if (r <= 0) {
            return r;
        }
    }
}

/*
 * The next n values as n calls of vnpu_mlw_next would give them, into dst. Returns n, or
 * how many came before the call that would have returned 0 or -1 (*status gets that
 * value; 1 when all n came). The decoder's state is kept in locals over a run of values:
 * what the convolutions' weight decode costs per weight.
 */
static inline size_t vnpu_mlw_read(struct vnpu_mlw *d, int16_t *dst, size_t n, int *status)
{
    size_t got = 0;
    *status = 1;
    while (got < n) {
        if (d->zeros > 0) {
            size_t z = d->zeros < n - got ? d->zeros : n - got;
            memset(dst + got, 0, z * sizeof(int16_t));
            got += z;
            d->zeros -= (uint32_t)z;
            continue;
        }
        if (d->in_slice && d->index < d->nvalues) {
            const int palsize = d->palsize;
            const int offset = d->direct_offset - palsize;
            const uint16_t *wval = d->wval;
            int index = d->index;
            int end = d->nvalues;
            if (d->use_zero_run) {
                /* one value, then its zero run */
                end = index + 1;
            } else if ((size_t)(end - index) > n - got) {
                end = index + (int)(n - got);
            }
            for (; index < end; index++) {
                int w = wval[index];
                int v = w < palsize ? d->palette[w] : w + offset;
                int mag = v >> 1;
                dst[got++] = (int16_t)((v & 1) ? -mag : mag);
            }
            if (d->use_zero_run) {
                d->zeros = d->zrun[index - 1 + d->new_palette]; /* the run after that value */
            }
            d->index = index;
            continue;
        }
        int r = vnpu_mlw_refill(d);
        if (r <= 0) {
            *status = r;
            break;
        }
    }
    return got;
}

#endif /* VNPU_MLW_H */

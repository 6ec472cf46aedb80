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
    int16_t *wval; /* slice buffers, in caller memory: the values, signed */
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
    /*
     * A slice of fixed-width codes without zero runs (uncompressed: what Vela writes for
     * dense int8 weights, nearly every stream of MobileNetV2) is not decoded into the slice
     * buffers: its values are read from the stream when asked for, `vbits` bits each from
     * bit `vpos` on (value `index`), through `map` when it has a palette.
     */
    int direct;
    unsigned vbits;
    size_t vpos;
    int16_t map[32];
};

/* Memory the decoder needs for a slice of `values` weights (+1 for a new palette's zero run). */
#define VNPU_MLW_BYTES(values) (4u + 6u * (size_t)(values))

void vnpu_mlw_init(struct vnpu_mlw *d, const uint8_t *buf, size_t size, void *mem, size_t mem_size);
/* Decode the next slice: 1, 0 at the end of the stream, -1 if malformed (or it does not fit). */
int vnpu_mlw_refill(struct vnpu_mlw *d);

/* Values of a direct slice (vnpu_mlw.direct) into dst: min(n, those left in the slice), n > 0. */
size_t vnpu_mlw_direct(struct vnpu_mlw *d, int16_t *dst, size_t n);

/*
 * The next n values into dst. Returns n, or how many came before the end of the stream or
 * a malformed slice; *status is then 0 or -1 (1 when all n came). The decoder's state is
 * kept in locals over a run of values: what the convolutions' weight decode costs per weight.
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
            int index = d->index;
            if (d->direct) {
                got += vnpu_mlw_direct(d, dst + got, n - got);
            } else if (d->use_zero_run) {
                /* one value, then its zero run */
                dst[got++] = d->wval[index];
                d->zeros = d->zrun[index + d->new_palette];
                d->index = index + 1;
            } else {
                size_t k = (size_t)(d->nvalues - index);
                k = k < n - got ? k : n - got;
                memcpy(dst + got, d->wval + index, k * sizeof(int16_t));
                got += k;
                d->index = index + (int)k;
            }
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

/* 1 and *value set, 0 at the end of the stream, -1 if malformed (or the slice does not fit). */
static inline int vnpu_mlw_next(struct vnpu_mlw *d, int16_t *value)
{
    int status;
    return vnpu_mlw_read(d, value, 1, &status) == 1 ? 1 : status;
}

#endif /* VNPU_MLW_H */

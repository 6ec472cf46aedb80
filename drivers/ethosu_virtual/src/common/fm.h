/*
 * ethosu-porting-kit virtual NPU: a feature map as one operation addresses it, its element
 * access and the checks every product makes of it.
 */
#ifndef VNPU_FM_H
#define VNPU_FM_H

#include "common/env.h"

#include <stddef.h>
#include <stdint.h>

/* A feature map as one operation addresses it: tiles, strides, precision, extent. */
struct fm {
    uint8_t *mem;
    size_t size;
    int64_t base[4];
    int32_t h0, h1, w0; /* tile split: HEIGHT0, HEIGHT1, WIDTH0 */
    int64_t sx, sy, sc;
    int elem;      /* bytes: 1, 2, 4 (8: U85 B64) */
    int is_signed; /* 0 unsigned, 1 signed */
    int brick;     /* NHCWB16 */
    int h, w, c;   /* extent used by the operation */
    int zp;
};

static inline int64_t fm_offset(const struct fm *f, int y, int x, int c)
{
    int t = 0;
    if (x >= f->w0) {
        x -= f->w0;
        if (y >= f->h1) {
            y -= f->h1;
            t = 3;
        } else {
            t = 1;
        }
    } else if (y >= f->h0) {
        y -= f->h0;
        t = 2;
    }
    int64_t off = f->base[t] + (int64_t)y * f->sy + (int64_t)x * f->sx;
    if (f->brick) {
        off += (int64_t)(c >> 4) * f->sc + (int64_t)(c & 15) * f->elem;
    } else {
        off += (int64_t)c * f->elem;
    }
    return off;
}

/* One element at p: kind = bytes * 2 + signed (struct fm's elem and is_signed). */
static inline int64_t load_elem(const uint8_t *p, int kind)
{
    switch (kind) {
    case 2:
        return p[0];
    case 3:
        return (int8_t)p[0];
    case 4:
        return (uint16_t)(p[0] | (p[1] << 8));
    case 5:
        return (int16_t)(uint16_t)(p[0] | (p[1] << 8));
    case 8:
        return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
               ((uint32_t)p[3] << 24);
    case 16:
    case 17: /* U85 B64: a 48-bit accumulator stored sign-extended */
    {
        uint64_t u = 0;
        for (int b = 7; b >= 0; b--) {
            u = (u << 8) | p[b];
        }
        return (int64_t)u;
    }
    default:
        return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                         ((uint32_t)p[3] << 24));
    }
}

/* The low `elem` bytes of v at p, little-endian. */
static inline void store_elem(uint8_t *p, int elem, int64_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (uint8_t)u;
    if (elem > 1) {
        p[1] = (uint8_t)(u >> 8);
    }
    if (elem > 2) {
        p[2] = (uint8_t)(u >> 16);
        p[3] = (uint8_t)(u >> 24);
    }
    if (elem > 4) {
        uint32_t hi = (uint32_t)((uint64_t)v >> 32);
        p[4] = (uint8_t)hi;
        p[5] = (uint8_t)(hi >> 8);
        p[6] = (uint8_t)(hi >> 16);
        p[7] = (uint8_t)(hi >> 24);
    }
}

static inline int64_t fm_read(const struct fm *f, int y, int x, int c)
{
    return load_elem(f->mem + fm_offset(f, y, x, c), f->elem * 2 + f->is_signed);
}

static inline void fm_write(const struct fm *f, int y, int x, int c, int64_t v)
{
    store_elem(f->mem + fm_offset(f, y, x, c), f->elem, v);
}

/* Bytes from a pixel's first channel to channel c (fm_offset is pixel + this); in pointer-sized
 * arithmetic: fm_check proved the box inside its region, and it runs once per output value. */
static inline ptrdiff_t fm_chan(const struct fm *f, int c)
{
    return f->brick ? (ptrdiff_t)(c >> 4) * (ptrdiff_t)f->sc + (ptrdiff_t)((c & 15) * f->elem)
                    : (ptrdiff_t)(c * f->elem);
}

/* 1 if the box [0,h)x[0,w)x[0,c) of `f` is one run of adjacent elements in tile 0 (NHWC, pixels
 * and rows back to back): element (y, x, c) is then element (y * w + x) * c + c from base[0],
 * and an operation that visits the box in that order may visit it as one 1x1 pixel. */
static inline int fm_flat(const struct fm *f)
{
    int64_t pixel = (int64_t)f->c * f->elem;
    return !f->brick && f->h <= f->h0 && f->w <= f->w0 && (f->w == 1 || f->sx == pixel) &&
           (f->h == 1 || f->sy == pixel * f->w);
}

/*
 * The checks below return 0, or non-zero with the reason in why[len]; the caller stops the
 * stream with it (naming the command).
 */
/* Every address the box [0,h)x[0,w)x[0,c) of `f` touches lies in its memory. */
int vnpu_fm_check(const struct fm *f, const char *what, char *why, size_t len);
/* Element size, signedness and layout from a *_PRECISION register (`bits`: its precision field). */
int vnpu_fm_precision(struct fm *f, uint32_t prec, int bits, const char *what, char *why,
                      size_t len);
/* Base address and size of region `region` (the driver's base_addr[region]). */
int vnpu_region(const struct vnpu_env *env, unsigned region, uint8_t **mem, size_t *size,
                const char *what, char *why, size_t len);

/* dst[y * dr + x] = src[x * sr + y] for y < h, x < w: the byte transpose of the NCHW <-> NHWC
 * permutes (U55 POOL copies, U85 map8 copies). */
void vnpu_transpose_bytes(const uint8_t *src, ptrdiff_t sr, uint8_t *dst, ptrdiff_t dr, int h,
                          int w);
/*
 * The h x w elements of `bytes` bytes at src (steps isy, isx) to dst (steps osy, osx), boxes
 * that share no byte (the order of the copies cannot matter): a POOL's identity copies and
 * the NCHW <-> NHWC transposes.
 */
void vnpu_copy_box(const uint8_t *src, ptrdiff_t isy, ptrdiff_t isx, uint8_t *dst, ptrdiff_t osy,
                   ptrdiff_t osx, int h, int w, size_t bytes);

#endif /* VNPU_FM_H */

/*
 * ethosu-porting-kit virtual NPU: decoder of the MLW weight stream (U55/U65).
 *
 * The stream is a sequence of slices. Each slice has a header (zero-run divisor,
 * length, weight divisor, truncation flag, optional palette) and then chunks that
 * interleave Golomb-Rice codes of weight indices and of zero-run lengths: the
 * unary (quotient) parts of chunk n are followed by the remainders of chunk n-1.
 * Bits are read least significant first. Written for the kit; it decodes a slice
 * into caller memory and hands values out one by one, so nothing is allocated.
 */
#include "common/mlw.h"

#include <string.h>

#define ZDIV_DISABLE 6
#define ZDIV_EOS 7
#define WDIV_UNCOMPRESSED 7

/*
 * The stream's bits from bit `pos` on, least significant first, as one 32-bit window
 * (at least 25 valid bits; zeros past the end). A word load where four bytes remain:
 * the reader runs a few times per weight, and a firmware build runs it under QEMU.
 */
static inline uint32_t peek32(const uint8_t *buf, size_t size, size_t pos)
{
    size_t byte = pos >> 3;
    uint32_t window = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (byte + 4u <= size) {
        memcpy(&window, buf + byte, sizeof(window));
        return window >> (pos & 7u);
    }
#endif
    for (size_t i = 0; i < 4u && byte + i < size; i++) {
        window |= (uint32_t)buf[byte + i] << (8u * i);
    }
    return window >> (pos & 7u);
}

/*
 * The next n bits (n <= 25; the format reads at most 15 at once) into dst, from the
 * reader's state in locals (buf, size, pos, limit = size * 8) of decode_slice; a read
 * past the end fails the slice.
 */
#define GET(n, dst)                                                                                \
    do {                                                                                           \
        uint32_t get_n_ = (uint32_t)(n);                                                           \
        if (pos + get_n_ > limit)                                                                  \
            return -1;                                                                             \
        (dst) = peek32(buf, size, pos) & ((1u << get_n_) - 1u);                                    \
        pos += get_n_;                                                                             \
    } while (0)

/* A 32-bit little-endian word at p (four bytes there). */
static inline uint32_t load32(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
#else
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
#endif
}

/* A weight as the stream folds it (|w| << 1 | sign), unfolded; s is 0 or -1, no branch. */
static inline int16_t unfold(int v)
{
    int s = -(v & 1);
    return (int16_t)(((v >> 1) ^ s) - s);
}

/* The weight of code w: a palette entry, or past the palette w - palsize + direct_offset. */
static inline int16_t code_value(const struct vnpu_mlw *d, uint32_t w)
{
    int v = (int)w < d->palsize ? d->palette[w] : (int)w - d->palsize + d->direct_offset;
    return unfold(v);
}

void vnpu_mlw_init(struct vnpu_mlw *d, const uint8_t *buf, size_t size, void *mem, size_t mem_size)
{
    memset(d, 0, sizeof(*d));
    d->buf = buf;
    d->size = size;
    /* split the memory: n uint16 weights + (n + 1) uint32 zero runs (VNPU_MLW_BYTES) */
    size_t n = mem_size >= 8u ? (mem_size - 4u) / 6u : 0u;
    d->zrun = (uint32_t *)mem;
    d->wval = (int16_t *)(void *)((uint8_t *)mem + (n + 1u) * 4u);
    d->capacity = n;
    d->first = 1;
}

/* Zero runs: the unary bits of one chunk (a 1 adds to the quotient, a 0 ends the symbol)
 * into quotients; returns the number of symbols. One step per symbol, not per bit. */
static int split_zero_runs(uint32_t bits, int nbits, uint32_t *carry, uint32_t *q)
{
    int n = 0;
    uint32_t cnt = *carry;
    uint32_t zeros = ~bits & ((1u << nbits) - 1u); /* nbits <= 12 */
    int pos = 0;
    while (zeros != 0u) {
        int at = __builtin_ctz(zeros);
        q[n++] = cnt + (uint32_t)(at - pos); /* the 1s before this 0 */
        cnt = 0;
        pos = at + 1;
        zeros &= zeros - 1u;
    }
    *carry = cnt + (uint32_t)(nbits - pos);
    return n;
}

/* Weights: a 1 in the first pass means at least 1, the second pass (`extra`, one bit per
 * 1 of the first) adds 1 more and continues the symbol; returns the number of symbols. */
static int split_weights(uint32_t bits, int nbits, uint32_t *carry, int truncate, uint32_t extra,
                         uint32_t *q)
{
    int n = 0;
    uint32_t cnt = *carry;
    for (int i = 0; i < nbits; i++) {
        uint32_t code = 0;
        if (bits & (1u << i)) {
            code = 1u + (extra & 1u);
            extra >>= 1;
        }
        cnt += code;
        if (code < 2u || truncate) {
            q[n++] = cnt;
            cnt = 0;
        }
    }
    *carry = cnt;
    return n;
}

/* What a slice header says. */
struct slice_hdr {
    uint32_t zdiv, wdiv, wtrunc, newpal;
    int use_zero_run, uncompressed;
    int nvalues, z_nvalues; /* weights, zero runs */
};

/* The header of the slice at d->bitpos (end-of-stream markers skipped), the palette into d:
 * 1 with *at past it, 0 at the end of the stream, -1 if malformed. */
static int slice_header(struct vnpu_mlw *d, struct slice_hdr *h, size_t *at)
{
    const uint8_t *const buf = d->buf;
    const size_t size = d->size;
    const size_t limit = size * 8u;
    size_t pos = d->bitpos;
    uint32_t zdiv;
    GET(3, zdiv);
    while (zdiv == ZDIV_EOS) {
        pos = (pos + 7u) & ~(size_t)7u;
        d->first = 1;
        if (pos / 8u >= size) {
            d->bitpos = pos;
            return 0;
        }
        GET(3, zdiv);
    }
    if (pos / 8u >= size) {
        d->bitpos = pos;
        return 0;
    }
    if (zdiv >= 4 && zdiv != ZDIV_DISABLE) {
        return -1;
    }
    uint32_t slice_len;
    GET(15, slice_len);
    GET(3, h->wdiv);
    GET(1, h->wtrunc);
    GET(1, h->newpal);
    h->zdiv = zdiv;
    h->use_zero_run = zdiv != ZDIV_DISABLE;
    if (d->first && !h->newpal) {
        return -1;
    }
    if (!d->first && !h->newpal && h->use_zero_run != d->prev_zero_run) {
        return -1;
    }
    d->first = 0;
    d->prev_zero_run = h->use_zero_run;
    if (h->newpal) {
        uint32_t v;
        GET(5, v);
        d->direct_offset = (int)v;
        GET(5, v);
        d->palsize = v > 0 ? (int)v + 1 : 0;
        GET(3, v);
        d->palbits = (int)v + 2;
        for (int i = 0; i < d->palsize; i++) {
            GET(d->palbits, v);
            d->palette[i] = (int16_t)v;
        }
    }
    h->uncompressed = 0;
    if (h->wdiv == WDIV_UNCOMPRESSED) {
        h->uncompressed = 1;
        uint32_t bits = 0;
        if (d->palsize > 0) {
            while ((1 << bits) < d->palsize) {
                bits++;
            }
        } else {
            bits = (uint32_t)d->palbits;
        }
        h->wdiv = bits; /* only remainders are sent */
    } else if (h->wdiv >= 6) {
        return -1;
    }
    h->nvalues = (int)slice_len + 1;
    h->z_nvalues = h->nvalues + (h->newpal ? 1 : 0);
    *at = pos;
    return 1;
}

/* One Golomb-Rice stream of a slice (weights or zero runs): this chunk's quotients and the
 * previous chunk's (whose remainders follow), swapped, not copied. */
struct rice {
    uint32_t qbuf[2][12];
    uint32_t *q, *prev_q;
    int n, prev_n, prev_enable;
    uint32_t carry;
    int pos, done; /* symbols whose quotients / values are read */
};

static void rice_init(struct rice *s)
{
    memset(s, 0, sizeof(*s));
    s->q = s->qbuf[0];
    s->prev_q = s->qbuf[1];
}

/* The end of a chunk: its quotients become the previous chunk's. */
static void rice_next(struct rice *s, int enable)
{
    s->prev_enable = enable;
    s->prev_n = enable ? s->n : 0;
    uint32_t *t = s->prev_q;
    s->prev_q = s->q;
    s->q = t;
}

/* The slice's chunks after its header (at `pos`): the weight indices into d->wval and the
 * zero runs into d->zrun. 1, or -1 if malformed. */
static int slice_body(struct vnpu_mlw *d, const struct slice_hdr *h, size_t pos)
{
    const uint8_t *const buf = d->buf;
    const size_t size = d->size;
    const size_t limit = size * 8u;
    const uint32_t wdiv = h->wdiv;
    const uint32_t zdiv = h->zdiv;
    const int nvalues = h->nvalues;
    const int z_nvalues = h->z_nvalues;
    const int use_zero_run = h->use_zero_run;
    struct rice w;
    struct rice z;
    rice_init(&w);
    rice_init(&z);
    int z_unary_len = zdiv < 3 ? 12 : 8;
    do {
        int balance = use_zero_run ? w.pos - z.pos : 0;
        int w_enable = (balance < 8 || !use_zero_run) && w.pos < nvalues;
        int z_enable = balance >= 0 && use_zero_run && z.pos < z_nvalues;
        uint32_t w_unary0 = 0;
        if (w_enable && !h->uncompressed) {
            GET(12, w_unary0);
        }
        if (z_enable) {
            uint32_t z_unary;
            GET(z_unary_len, z_unary);
            z.n = split_zero_runs(z_unary, z_unary_len, &z.carry, z.q);
            z.pos += z.n;
        }
        if (w_enable) {
            int max_symbols = (h->uncompressed && wdiv > 5) ? 8 : 12;
            int ones = __builtin_popcount(w_unary0 & ((1u << max_symbols) - 1u));
            uint32_t w_unary1;
            GET(ones, w_unary1);
            w.n = split_weights(w_unary0, max_symbols, &w.carry, (int)h->wtrunc, w_unary1, w.q);
            w.pos += w.n;
        }
        for (int i = 0; w.prev_enable && i < w.prev_n && w.done < nvalues; i++, w.done++) {
            uint32_t rem;
            GET((int)wdiv, rem);
            uint32_t v = (w.prev_q[i] << wdiv) + rem;
            if (v >= 512u) {
                return -1;
            }
            d->wval[w.done] = code_value(d, v);
        }
        for (int i = 0; z.prev_enable && i < z.prev_n && z.done < z_nvalues; i++, z.done++) {
            uint32_t rem;
            GET((int)zdiv, rem);
            d->zrun[z.done] = (z.prev_q[i] << zdiv) + rem;
        }
        rice_next(&w, w_enable);
        rice_next(&z, z_enable);
    } while (w.prev_enable || z.prev_enable);
    d->bitpos = pos;
    return w.done == nvalues ? 1 : -1;
}

static int decode_slice(struct vnpu_mlw *d)
{
    struct slice_hdr h;
    size_t pos = 0;
    int r = slice_header(d, &h, &pos);
    if (r <= 0) {
        return r;
    }
    if (VNPU_MLW_BYTES(h.z_nvalues) > d->need) {
        d->need = VNPU_MLW_BYTES(h.z_nvalues);
    }
    if ((size_t)h.z_nvalues > d->capacity) {
        return -1;
    }
    d->direct = h.uncompressed && !h.use_zero_run;
    if (d->direct) {
        /* what the chunk walk would read: nvalues codes of wdiv bits, nothing else */
        size_t bits = (size_t)h.nvalues * h.wdiv;
        if (bits > d->size * 8u - pos) {
            return -1;
        }
        d->vbits = h.wdiv;
        d->vpos = pos;
        d->bitpos = pos + bits;
        /* a palette means at most 32 codes (wdiv <= 5) */
        for (uint32_t w = 0; d->palsize > 0 && w < (1u << h.wdiv); w++) {
            d->map[w] = code_value(d, w);
        }
    } else {
        memset(d->zrun, 0, (size_t)h.z_nvalues * sizeof(uint32_t));
        if (slice_body(d, &h, pos) < 0) {
            return -1;
        }
    }
    d->nvalues = h.nvalues;
    d->new_palette = (int)h.newpal;
    d->use_zero_run = h.use_zero_run;
    d->index = 0;
    d->zeros = (h.newpal && h.use_zero_run) ? d->zrun[0] : 0u;
    d->in_slice = 1;
    return 1;
}

int vnpu_mlw_refill(struct vnpu_mlw *d)
{
    if (d->ended) {
        return 0;
    }
    d->in_slice = 0;
    int r = decode_slice(d);
    if (r <= 0) {
        d->ended = r == 0;
    }
    return r;
}

size_t vnpu_mlw_direct(struct vnpu_mlw *d, int16_t *dst, size_t n)
{
    size_t left = (size_t)(d->nvalues - d->index);
    n = n < left ? n : left;
    const uint8_t *const buf = d->buf;
    const size_t size = d->size;
    const unsigned vbits = d->vbits;
    const uint32_t mask = (1u << vbits) - 1u;
    size_t p = d->vpos;
    /* the values whose 32-bit window lies inside the stream take a word load each; the
     * last few bytes' values a bounded one */
    size_t fast = n;
    if (p + n * vbits + 32u > size * 8u) {
        size_t last = size >= 4u ? (size - 4u) * 8u + 7u : 0u; /* the last window's first bit */
        fast = size >= 4u && p <= last ? (last - p) / vbits + 1u : 0u;
        fast = fast < n ? fast : n;
    }
    size_t i = 0;
    if (d->palsize > 0) {
        for (; i < fast; i++, p += vbits) {
            dst[i] = d->map[(load32(buf + (p >> 3)) >> (p & 7u)) & mask];
        }
    } else if (vbits == 8u) {
        /* bytes at a fixed bit offset: two values a word */
        const uint8_t *src = buf + (p >> 3);
        const unsigned sh = (unsigned)(p & 7u);
        const int off = d->direct_offset;
        for (; i + 2u <= fast; i += 2u) {
            uint32_t w = load32(src + i) >> sh;
            dst[i] = unfold((int)(w & 0xffu) + off);
            dst[i + 1u] = unfold((int)((w >> 8) & 0xffu) + off);
        }
        for (; i < fast; i++) {
            dst[i] = unfold((int)((load32(src + i) >> sh) & 0xffu) + off);
        }
        p += i * 8u;
    } else {
        const int off = d->direct_offset;
        for (; i < fast; i++, p += vbits) {
            dst[i] = unfold((int)((load32(buf + (p >> 3)) >> (p & 7u)) & mask) + off);
        }
    }
    for (; i < n; i++, p += vbits) {
        dst[i] = code_value(d, peek32(buf, size, p) & mask);
    }
    d->vpos = p;
    d->index += (int)n;
    return n;
}

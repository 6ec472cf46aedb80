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

/*
 * The second pass of a weight chunk's unary codes deposited onto its first: entry
 * (nibble | extra << 4) holds, for 4 first-pass bits and the next 4 second-pass bits, which of
 * the nibble's 1s take a second-pass 1 (low 4 bits) and how many second-pass bits the nibble
 * takes (its 1s, high 4 bits). Three lookups split a 12-bit chunk without a loop over bits.
 */
static const uint8_t deposit4[256] = {
    0x00, 0x10, 0x10, 0x20, 0x10, 0x20, 0x20, 0x30, 0x10, 0x20, 0x20, 0x30, 0x20, 0x30, 0x30, 0x40,
    0x00, 0x11, 0x12, 0x21, 0x14, 0x21, 0x22, 0x31, 0x18, 0x21, 0x22, 0x31, 0x24, 0x31, 0x32, 0x41,
    0x00, 0x10, 0x10, 0x22, 0x10, 0x24, 0x24, 0x32, 0x10, 0x28, 0x28, 0x32, 0x28, 0x34, 0x34, 0x42,
    0x00, 0x11, 0x12, 0x23, 0x14, 0x25, 0x26, 0x33, 0x18, 0x29, 0x2a, 0x33, 0x2c, 0x35, 0x36, 0x43,
    0x00, 0x10, 0x10, 0x20, 0x10, 0x20, 0x20, 0x34, 0x10, 0x20, 0x20, 0x38, 0x20, 0x38, 0x38, 0x44,
    0x00, 0x11, 0x12, 0x21, 0x14, 0x21, 0x22, 0x35, 0x18, 0x21, 0x22, 0x39, 0x24, 0x39, 0x3a, 0x45,
    0x00, 0x10, 0x10, 0x22, 0x10, 0x24, 0x24, 0x36, 0x10, 0x28, 0x28, 0x3a, 0x28, 0x3c, 0x3c, 0x46,
    0x00, 0x11, 0x12, 0x23, 0x14, 0x25, 0x26, 0x37, 0x18, 0x29, 0x2a, 0x3b, 0x2c, 0x3d, 0x3e, 0x47,
    0x00, 0x10, 0x10, 0x20, 0x10, 0x20, 0x20, 0x30, 0x10, 0x20, 0x20, 0x30, 0x20, 0x30, 0x30, 0x48,
    0x00, 0x11, 0x12, 0x21, 0x14, 0x21, 0x22, 0x31, 0x18, 0x21, 0x22, 0x31, 0x24, 0x31, 0x32, 0x49,
    0x00, 0x10, 0x10, 0x22, 0x10, 0x24, 0x24, 0x32, 0x10, 0x28, 0x28, 0x32, 0x28, 0x34, 0x34, 0x4a,
    0x00, 0x11, 0x12, 0x23, 0x14, 0x25, 0x26, 0x33, 0x18, 0x29, 0x2a, 0x33, 0x2c, 0x35, 0x36, 0x4b,
    0x00, 0x10, 0x10, 0x20, 0x10, 0x20, 0x20, 0x34, 0x10, 0x20, 0x20, 0x38, 0x20, 0x38, 0x38, 0x4c,
    0x00, 0x11, 0x12, 0x21, 0x14, 0x21, 0x22, 0x35, 0x18, 0x21, 0x22, 0x39, 0x24, 0x39, 0x3a, 0x4d,
    0x00, 0x10, 0x10, 0x22, 0x10, 0x24, 0x24, 0x36, 0x10, 0x28, 0x28, 0x3a, 0x28, 0x3c, 0x3c, 0x4e,
    0x00, 0x11, 0x12, 0x23, 0x14, 0x25, 0x26, 0x37, 0x18, 0x29, 0x2a, 0x3b, 0x2c, 0x3d, 0x3e, 0x4f};

/* The quotients of one chunk's symbols: a symbol ends at each 1 of `ends` (ascending); each
 * bit before its end adds `step`, its end bit adds that bit of `first` and of `second`, and the
 * first symbol adds *carry (the previous chunk's open symbol). Returns the count; *carry gets
 * the open symbol after the last end. */
static inline int split(uint32_t ends, uint32_t first, uint32_t second, int nbits, uint32_t step,
                        uint32_t *carry, uint32_t *q)
{
    int n = 0;
    uint32_t cnt = *carry;
    int at0 = 0;
    while (ends != 0u) {
        int at = __builtin_ctz(ends);
        q[n++] = cnt + step * (uint32_t)(at - at0) + ((first >> at) & 1u) + ((second >> at) & 1u);
        cnt = 0;
        at0 = at + 1;
        ends &= ends - 1u;
    }
    *carry = cnt + step * (uint32_t)(nbits - at0);
    return n;
}

/* Bytes a chunk reads at most: 12 + 12 + 12 unary bits, 8 x 9 or 12 x 5 weight remainders,
 * 12 x 3 zero-run remainders (144 bits), and a 32-bit window past them. */
#define CHUNK_BYTES 22u

/*
 * The slice's chunks after its header (at `pos`): the weights into d->wval and the zero runs
 * into d->zrun. 1, or -1 if malformed.
 *
 * A chunk interleaves two Golomb-Rice streams: the unary (quotient) parts of chunk n's weights
 * and zero runs, then the remainders of chunk n-1's. Reads are word loads without bound checks
 * while a whole chunk lies inside the stream; from 32 bytes before its end, the chunks read a
 * zero-padded copy of its last bytes, and a read past the end shows as `pos` past it after the
 * chunk (fail then: the bits read past it decided nothing that is kept).
 */
static int slice_body(struct vnpu_mlw *d, const struct slice_hdr *h, size_t pos)
{
    const uint8_t *src = d->buf; /* bytes at bit `pos` - `bias` on */
    size_t bias = 0;             /* the stream bit of src's first */
    size_t limit = d->size * 8u; /* the stream's end, from src */
    /* chunks start from src up to this bit (a header took 23 bits or more: pos > 0 here) */
    size_t safe = d->size >= 32u ? (d->size - 32u) * 8u : 0u;
    uint8_t tail[32u + 2u * CHUNK_BYTES];
    const uint32_t wdiv = h->wdiv;
    const uint32_t zdiv = h->zdiv;
    const uint32_t wmask = (1u << wdiv) - 1u;
    const uint32_t zmask = (1u << (zdiv & 3u)) - 1u; /* zdiv 6 (no zero runs) reads none */
    const int nvalues = h->nvalues;
    const int z_nvalues = h->z_nvalues;
    const int use_zero_run = h->use_zero_run;
    const int uncompressed = h->uncompressed;
    const int z_unary_len = zdiv < 3 ? 12 : 8;
    const int w_symbols = (uncompressed && wdiv > 5) ? 8 : 12; /* an uncompressed chunk's */
    const int palsize = d->palsize;
    const int delta = d->direct_offset - palsize;
    int16_t *const wval = d->wval;
    uint32_t *const zrun = d->zrun;
    uint32_t wq[2][12], zq[2][12]; /* this chunk's quotients and the previous chunk's */
    int wcur = 0, zcur = 0;
    int w_pos = 0, w_done = 0, w_prev_n = 0, w_prev_enable = 0;
    int z_pos = 0, z_done = 0, z_prev_n = 0, z_prev_enable = 0;
    uint32_t w_carry = 0, z_carry = 0;
#define WINDOW() (load32(src + (pos >> 3)) >> (pos & 7u))
    do {
        if (pos > safe) {
            if (pos > limit) {
                return -1; /* the last chunk read past the end */
            }
            if (src == d->buf) {
                size_t byte = pos >> 3;
                memset(tail, 0, sizeof(tail));
                memcpy(tail, src + byte, d->size - byte); /* 32 or fewer */
                src = tail;
                bias = byte * 8u;
                pos -= bias;
                limit -= bias;
                safe = limit;
            }
        }
        int balance = use_zero_run ? w_pos - z_pos : 0;
        int w_enable = (balance < 8 || !use_zero_run) && w_pos < nvalues;
        int z_enable = balance >= 0 && use_zero_run && z_pos < z_nvalues;
        uint32_t w_first = 0;
        if (w_enable && !uncompressed) {
            w_first = WINDOW() & 0xfffu;
            pos += 12;
        }
        int z_n = 0;
        if (z_enable) {
            uint32_t unary = WINDOW() & ((1u << z_unary_len) - 1u);
            pos += (size_t)z_unary_len;
            /* a 1 adds to the quotient, a 0 ends the symbol */
            z_n = split(~unary & ((1u << z_unary_len) - 1u), 0u, 0u, z_unary_len, 1u, &z_carry,
                        zq[zcur]);
            z_pos += z_n;
        }
        int w_n = 0;
        if (w_enable && uncompressed) {
            /* remainders only: every symbol's quotient is 0 */
            for (int i = 0; i < w_symbols; i++) {
                wq[wcur][i] = 0;
            }
            w_n = w_symbols;
        } else if (w_enable) {
            /* a first-pass 1 means at least 1 and takes a second-pass bit: with a 1 there the
             * code is 2 and the symbol goes on (unless truncated), with a 0 it is 1 and ends */
            uint32_t extra = WINDOW();
            uint32_t t0 = deposit4[(w_first & 15u) | ((extra & 15u) << 4)];
            extra >>= t0 >> 4;
            uint32_t t1 = deposit4[((w_first >> 4) & 15u) | ((extra & 15u) << 4)];
            extra >>= t1 >> 4;
            uint32_t t2 = deposit4[(w_first >> 8) | ((extra & 15u) << 4)];
            uint32_t second = (t0 & 15u) | ((t1 & 15u) << 4) | ((t2 & 15u) << 8);
            pos += (t0 >> 4) + (t1 >> 4) + (t2 >> 4);
            uint32_t ends = h->wtrunc ? 0xfffu : ~second & 0xfffu;
            w_n = split(ends, w_first, second, 12, 2u, &w_carry, wq[wcur]);
        }
        w_pos += w_n;
        if (w_prev_enable) {
            const uint32_t *q = wq[wcur ^ 1];
            int n = nvalues - w_done < w_prev_n ? nvalues - w_done : w_prev_n;
            for (int i = 0; i < n; i++) {
                uint32_t v = (q[i] << wdiv) + (WINDOW() & wmask);
                pos += wdiv;
                if (v >= 512u) {
                    return -1;
                }
                int x = (int)v < palsize ? d->palette[v] : (int)v + delta;
                wval[w_done + i] = unfold(x);
            }
            w_done += n;
        }
        if (z_prev_enable) {
            const uint32_t *q = zq[zcur ^ 1];
            int n = z_nvalues - z_done < z_prev_n ? z_nvalues - z_done : z_prev_n;
            for (int i = 0; i < n; i++) {
                zrun[z_done + i] = (q[i] << zdiv) + (WINDOW() & zmask);
                pos += zdiv;
            }
            z_done += n;
        }
        /* this chunk's quotients become the previous chunk's */
        w_prev_enable = w_enable;
        w_prev_n = w_enable ? w_n : 0;
        wcur ^= 1;
        z_prev_enable = z_enable;
        z_prev_n = z_enable ? z_n : 0;
        zcur ^= 1;
    } while (w_prev_enable || z_prev_enable);
#undef WINDOW
    if (pos > limit) {
        return -1;
    }
    d->bitpos = pos + bias;
    return w_done == nvalues ? 1 : -1;
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

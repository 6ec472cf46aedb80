/*
 * ethosu-porting-kit virtual NPU: what the U55/U65 and U85 models share: the rescale,
 * kernel geometry, feature-map and region checks, error text.
 */
#include "vnpu.h"

#include <stdio.h>

int vnpu_kernel_setup(struct kernel *k, const uint16_t *p0, int oh, int ow, char *why, size_t len)
{
    uint32_t ks = p0[0x22]; /* KERNEL_STRIDE */
    k->kh = p0[0x21] + 1;   /* KERNEL_HEIGHT_M1 */
    k->kw = p0[0x20] + 1;   /* KERNEL_WIDTH_M1 */
    k->sx = (int)((ks & 1u) | (((ks >> 6) & 1u) << 1)) + 1;
    k->sy = (int)(((ks >> 1) & 1u) | (((ks >> 9) & 1u) << 1)) + 1;
    k->dx = ((ks >> 3) & 1u) ? 2 : 1;
    k->dy = ((ks >> 4) & 1u) ? 2 : 1;
    k->pad_top = p0[0x00] & 0x7f;
    k->pad_left = p0[0x01] & 0x7f;
    k->pad_right = p0[0x02] & 0xff;
    k->pad_bottom = p0[0x03] & 0xff;
    k->upscale = (int)(p0[0x07] & 3u); /* IFM_UPSCALE */
    if (k->upscale == 3) {
        snprintf(why, len, "IFM upscale mode 3 is not defined");
        return -1;
    }
    k->ih = (oh - 1) * k->sy + k->kh - k->pad_top - k->pad_bottom;
    k->iw = (ow - 1) * k->sx + k->kw - k->pad_left - k->pad_right;
    if (k->ih <= 0 || k->iw <= 0) {
        snprintf(why, len, "the kernel, stride and padding leave an empty IFM (%d x %d)", k->ih,
                 k->iw);
        return -1;
    }
    return 0;
}

int64_t vnpu_pool_acc(const struct fm *ifm, const struct kernel *k, int mode, int oy, int ox, int c,
                      int *count)
{
    int64_t acc = 0;
    int valid;
    *count = 0;
    if (mode == 2) {
        for (int ic = 0; ic < ifm->c; ic++) {
            acc += ifm_tap(ifm, k, oy * k->sy - k->pad_top, ox * k->sx - k->pad_left, ic, &valid);
        }
        return acc;
    }
    /* (dilation 1 skips the divisions: this runs once per output value) */
    int ukh = k->dy == 1 ? k->kh : (k->kh - 1) / k->dy + 1;
    int ukw = k->dx == 1 ? k->kw : (k->kw - 1) / k->dx + 1;
    for (int ky = 0; ky < ukh; ky++) {
        for (int kx = 0; kx < ukw; kx++) {
            int64_t v = ifm_tap(ifm, k, oy * k->sy - k->pad_top + ky * k->dy,
                                ox * k->sx - k->pad_left + kx * k->dx, c, &valid);
            if (!valid) {
                continue;
            }
            if (mode == 0) {
                acc = (*count == 0 || v > acc) ? v : acc;
            } else if (mode == 5) {
                acc = (*count == 0 || v < acc) ? v : acc;
            } else {
                acc += v;
            }
            (*count)++;
        }
    }
    return acc;
}

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
        int cs[4] = {0, f->c - 1, f->c > 16 ? 15 : f->c - 1, f->c > 16 ? 16 : 0};
        int64_t lo = INT64_MAX;
        int64_t hi = INT64_MIN;
        for (int i = 0; i < 16; i++) {
            int64_t o = fm_offset(f, (i & 1) ? y1 - 1 : y0, (i & 2) ? x1 - 1 : x0, cs[i >> 2]);
            lo = o < lo ? o : lo;
            hi = o > hi ? o : hi;
        }
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

void vnpu_error(struct vnpu_env *env, const struct vnpu_isa *isa, uint32_t code, size_t word,
                const char *prefix, const char *fmt, va_list ap)
{
    char msg[128];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    const struct vnpu_cmd_desc *cmd = vnpu_isa_find(isa, code);
    int n =
        snprintf(env->error, ETHOSU_VIRTUAL_ERROR_LEN, "%.10s%.40s at command word %lu: ", prefix,
                 cmd != NULL ? cmd->name : "command", (unsigned long)word);
    size_t used =
        n < 0 ? 0
              : ((size_t)n < ETHOSU_VIRTUAL_ERROR_LEN ? (size_t)n : ETHOSU_VIRTUAL_ERROR_LEN - 1);
    for (size_t i = 0; msg[i] != '\0' && used + 1 < ETHOSU_VIRTUAL_ERROR_LEN; i++) {
        env->error[used++] = msg[i];
    }
    env->error[used] = '\0';
}

/*
 * rescale(v, m, s, mode): the product v*m exactly (up to 96 bits), plus the mode's
 * rounding constant, arithmetically shifted right by s.
 */
/* The mode after the mutations (a mutant NPU's NATURAL rounding floors). */
static int effective_mode(int mode)
{
    if ((vnpu_mutation_mask & ETHOSU_VIRTUAL_MUT_NATURAL_FLOOR) && mode == ROUND_NATURAL) {
        return ROUND_FLOOR;
    }
    return mode;
}

/* The rounding constant c of (p + c) >> s for a product of that sign, when p and c fit 63 bits. */
static int64_t round_const(unsigned s, int mode, int p_negative)
{
    if (s == 0) {
        return 0;
    }
    if (mode == ROUND_NATURAL) {
        return (int64_t)1 << (s - 1);
    }
    if (mode == ROUND_DBL) {
        int64_t c = (int64_t)1 << (s - 1);
        if (s > 31) {
            c += p_negative ? -((int64_t)1 << 30) : ((int64_t)1 << 30);
        }
        return c;
    }
    if (mode == ROUND_TRUNCATE && p_negative) {
        return ((int64_t)1 << s) - 1;
    }
    return 0;
}

void vnpu_rescaler_init(struct vnpu_rescaler *r, uint32_t m, unsigned s, int mode)
{
    r->m = m;
    r->s = s;
    r->mode = mode;
    r->fast = s <= 61;
    r->c_pos = r->fast ? round_const(s, effective_mode(mode), 0) : 0;
    r->c_neg = r->fast ? round_const(s, effective_mode(mode), 1) : 0;
}

int64_t vnpu_rescale(int64_t v, uint32_t m, unsigned s, int mode)
{
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int negative = v < 0 && m != 0;
    mode = effective_mode(mode);
    /* |v| < 2^30 and m < 2^32: the product and the rounding constant fit in 63 bits */
    if ((mag >> 30) == 0 && s <= 61) {
        int64_t p = (int64_t)mag * (int64_t)m;
        if (negative) {
            p = -p;
        }
        return (p + round_const(s, mode, p < 0)) >> s;
    }
    /* 128-bit two's complement: hi:lo */
    uint64_t a_lo = mag & 0xffffffffu;
    uint64_t a_hi = mag >> 32;
    uint64_t p0 = a_lo * m;
    uint64_t p1 = a_hi * m;
    uint64_t lo = p0 + (p1 << 32);
    uint64_t hi = (p1 >> 32) + (lo < p0 ? 1u : 0u);
    if (negative) {
        lo = ~lo + 1u;
        hi = ~hi + (lo == 0 ? 1u : 0u);
    }
    int p_negative = (int64_t)hi < 0;
    if (s == 0) {
        return (int64_t)lo;
    }
    /* rounding constant as a signed 128-bit value */
    uint64_t c_lo = 0;
    uint64_t c_hi = 0;
    if (mode == ROUND_NATURAL || mode == ROUND_DBL) {
        if (s - 1 < 64) {
            c_lo = (uint64_t)1 << (s - 1);
        }
        if (mode == ROUND_DBL && s > 31) {
            if (!p_negative) {
                c_lo += (uint64_t)1 << 30;
            } else {
                /* c - 2^30; c >= 2^31 here, so no borrow into hi */
                c_lo -= (uint64_t)1 << 30;
            }
        }
    } else if (mode == ROUND_TRUNCATE && p_negative) {
        c_lo = s >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << s) - 1u);
        c_hi = s >= 64 ? (((uint64_t)1 << (s - 64)) - 1u) : 0u;
    }
    uint64_t r_lo = lo + c_lo;
    uint64_t r_hi = hi + c_hi + (r_lo < lo ? 1u : 0u);
    if (s >= 64) {
        return (int64_t)r_hi >> (s - 64);
    }
    return (int64_t)((r_lo >> s) | (r_hi << (64 - s)));
}

void vnpu_tap16(const struct fm *ifm, const struct kernel *k, int y, int x, int16_t *dst)
{
    if (y < 0 || x < 0 || y >= k->ih || x >= k->iw) {
        memset(dst, 0, (size_t)ifm->c * sizeof(int16_t)); /* padding */
        return;
    }
    if (k->upscale != 0) {
        for (int c = 0; c < ifm->c; c++) {
            int valid;
            dst[c] = (int16_t)ifm_tap(ifm, k, y, x, c, &valid);
        }
        return;
    }
    /* no upscaling: the tap's channels are bytes at one address (NHWC), or runs of 16 (NHCWB16) */
    const uint8_t *pixel = ifm->mem + fm_offset(ifm, y, x, 0);
    int run = ifm->brick ? 16 : ifm->c; /* channels at consecutive bytes */
    for (int c0 = 0; c0 < ifm->c; c0 += run) {
        const uint8_t *src = pixel + (ifm->brick ? (int64_t)(c0 >> 4) * ifm->sc : 0);
        int len = ifm->c - c0 < run ? ifm->c - c0 : run;
        int16_t *out = dst + c0;
        if (ifm->is_signed) {
            for (int j = 0; j < len; j++) {
                out[j] = (int16_t)((int8_t)src[j] - ifm->zp);
            }
        } else {
            for (int j = 0; j < len; j++) {
                out[j] = (int16_t)(src[j] - ifm->zp);
            }
        }
    }
}

const char *vnpu_u64(char *buf, uint64_t v)
{
    char *p = buf + VNPU_NUM_LEN - 1;
    *p = '\0';
    do {
        *--p = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0);
    return p;
}

const char *vnpu_i64(char *buf, int64_t v)
{
    if (v >= 0) {
        return vnpu_u64(buf, (uint64_t)v);
    }
    /* the magnitude in unsigned arithmetic: -INT64_MIN does not fit an int64_t */
    char *p = (char *)vnpu_u64(buf, 0u - (uint64_t)v);
    *--p = '-';
    return p;
}

#ifdef ETHOSU_VIRTUAL_WEIGHT_CACHE
#include <stdlib.h>

#define WCACHE_MAX_SEGS 4
#define WCACHE_MAX_KEY 128

struct wcache_entry {
    struct wcache_entry *next;
    uint64_t hash;
    size_t key_len;
    size_t len[WCACHE_MAX_SEGS]; /* each stream's bytes, stored after the weights */
    int nsegs;
    size_t nweights; /* int16 values */
    size_t need;     /* working memory the decode took above its base */
    unsigned char key[WCACHE_MAX_KEY];
    int16_t weights[];
};

static struct wcache_entry *wcache_head;
static size_t wcache_bytes;

/* Picks the candidates only (a match is the full memcmp): the lengths and the bytes at both ends. */
static uint64_t wcache_hash(const struct vnpu_wseg *segs, int nsegs)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)nsegs;
    for (int s = 0; s < nsegs; s++) {
        const uint8_t *p = segs[s].p;
        size_t len = segs[s].len;
        h = (h ^ (uint64_t)len) * 1099511628211ull;
        size_t ends = len < 128u ? len : 64u;
        for (size_t i = 0; i < ends; i++) {
            h = (h ^ p[i]) * 1099511628211ull;
            h = (h ^ p[len - 1u - i]) * 1099511628211ull;
        }
    }
    return h;
}

static size_t wcache_stream_bytes(const struct vnpu_wseg *segs, int nsegs)
{
    size_t total = 0;
    for (int s = 0; s < nsegs; s++) {
        total += segs[s].len;
    }
    return total;
}

static int wcache_same(const struct wcache_entry *e, const void *key, size_t key_len,
                       const struct vnpu_wseg *segs, int nsegs)
{
    if (e->nsegs != nsegs || e->key_len != key_len || memcmp(e->key, key, key_len) != 0) {
        return 0;
    }
    const uint8_t *stored = (const uint8_t *)(e->weights + e->nweights);
    for (int s = 0; s < nsegs; s++) {
        if (e->len[s] != segs[s].len || memcmp(stored, segs[s].p, segs[s].len) != 0) {
            return 0;
        }
        stored += segs[s].len;
    }
    return 1;
}

const int16_t *vnpu_wcache_find(const void *key, size_t key_len, const struct vnpu_wseg *segs,
                                int nsegs, size_t base, size_t ws_size)
{
    if (nsegs > WCACHE_MAX_SEGS || key_len > WCACHE_MAX_KEY) {
        return NULL;
    }
    uint64_t h = wcache_hash(segs, nsegs);
    for (struct wcache_entry *e = wcache_head; e != NULL; e = e->next) {
        /* a workspace too small for the decode stays too small with the cache */
        if (e->hash == h && base + e->need <= ws_size &&
            wcache_same(e, key, key_len, segs, nsegs)) {
            vnpu_workspace_used(base + e->need);
            return e->weights;
        }
    }
    return NULL;
}

void vnpu_wcache_add(const void *key, size_t key_len, const struct vnpu_wseg *segs, int nsegs,
                     const int16_t *weights, size_t nweights, size_t need)
{
    if (nsegs > WCACHE_MAX_SEGS || key_len > WCACHE_MAX_KEY) {
        return;
    }
    size_t slen = wcache_stream_bytes(segs, nsegs);
    size_t bytes = sizeof(struct wcache_entry) + nweights * sizeof(int16_t) + slen;
    if (bytes > (size_t)(ETHOSU_VIRTUAL_WEIGHT_CACHE)) {
        return;
    }
    while (wcache_bytes + bytes > (size_t)(ETHOSU_VIRTUAL_WEIGHT_CACHE) && wcache_head != NULL) {
        struct wcache_entry *old =
            wcache_head; /* the newest go first: a model's ops stay together */
        wcache_head = old->next;
        wcache_bytes -= sizeof(struct wcache_entry) + old->nweights * sizeof(int16_t);
        for (int s = 0; s < old->nsegs; s++) {
            wcache_bytes -= old->len[s];
        }
        free(old);
    }
    struct wcache_entry *e = (struct wcache_entry *)malloc(bytes);
    if (e == NULL) {
        return;
    }
    memset(e, 0, sizeof(*e));
    e->hash = wcache_hash(segs, nsegs);
    e->key_len = key_len;
    memcpy(e->key, key, key_len);
    e->nsegs = nsegs;
    e->nweights = nweights;
    e->need = need;
    memcpy(e->weights, weights, nweights * sizeof(int16_t));
    uint8_t *stored = (uint8_t *)(e->weights + nweights);
    for (int s = 0; s < nsegs; s++) {
        e->len[s] = segs[s].len;
        memcpy(stored, segs[s].p, segs[s].len);
        stored += segs[s].len;
    }
    e->next = wcache_head;
    wcache_head = e;
    wcache_bytes += bytes;
}
#endif

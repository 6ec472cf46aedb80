/*
 * The flat tensor (.ptd) reader: the flatbuffer of extension/flat_tensor/flat_tensor.fbs
 * (FlatTensor {version, segments: [DataSegment {offset: u64, size: u64}],
 * named_data: [NamedData {key: string, segment_index: u32, ...}]}) and the extended
 * header at byte 8 ("FH01", u32 length, u64 flatbuffer offset, u64 flatbuffer size,
 * u64 segment base offset, u64 segment data size). Bounds-checked, no allocation.
 */
#include "kit/ptd.h"

#include <string.h>

#define HEADER_AT 8u
#define HEADER_MIN 40u /* magic, length, four u64 */
#define DATA_ALIGN 16u

/* A little-endian read at `at`, if [at, at + n) lies inside the file. */
static int rd(const uint8_t *p, size_t size, uint64_t at, unsigned n, uint64_t *out)
{
    if (at > size || n > size - at) {
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) {
        v |= (uint64_t)p[at + i] << (8u * i);
    }
    *out = v;
    return 1;
}

/* The position of field `id` of the table at `table` (0: absent or out of bounds). */
static uint64_t field(const uint8_t *p, size_t size, uint64_t table, unsigned id)
{
    uint64_t soff;
    uint64_t vt_len;
    uint64_t off;
    if (!rd(p, size, table, 4, &soff)) {
        return 0;
    }
    const int64_t vtable = (int64_t)table - (int64_t)(int32_t)(uint32_t)soff;
    if (vtable < 0 || !rd(p, size, (uint64_t)vtable, 2, &vt_len)) {
        return 0;
    }
    const uint64_t slot = 4u + 2u * id;
    if (slot + 2u > vt_len || !rd(p, size, (uint64_t)vtable + slot, 2, &off) || off == 0) {
        return 0;
    }
    return table + off;
}

/* Follow the uoffset at `at` (0: out of bounds). */
static uint64_t follow(const uint8_t *p, size_t size, uint64_t at)
{
    uint64_t rel;
    if (at == 0 || !rd(p, size, at, 4, &rel) || at + rel >= size) {
        return 0;
    }
    return at + rel;
}

/* A vector field: its first element and count (0 when absent or out of bounds). */
static uint64_t vector(const uint8_t *p, size_t size, uint64_t table, unsigned id, uint64_t width,
                       uint64_t *count)
{
    const uint64_t vec = follow(p, size, field(p, size, table, id));
    *count = 0;
    if (vec == 0 || !rd(p, size, vec, 4, count) || *count > (size - vec - 4u) / width) {
        *count = 0;
        return 0;
    }
    return vec + 4u;
}

kit_ptd_status_t kit_ptd_find(const uint8_t *ptd, size_t ptd_size, const char *key, size_t key_len,
                              const uint8_t **data, size_t *size)
{
    uint64_t root;
    uint64_t len;
    uint64_t seg_base;
    uint64_t seg_size;
    if (ptd == NULL || ptd_size < HEADER_AT + HEADER_MIN || memcmp(ptd + 4, "FT01", 4) != 0 ||
        memcmp(ptd + HEADER_AT, "FH01", 4) != 0 || !rd(ptd, ptd_size, HEADER_AT + 4u, 4, &len) ||
        len < HEADER_MIN || !rd(ptd, ptd_size, HEADER_AT + 24u, 8, &seg_base) ||
        !rd(ptd, ptd_size, HEADER_AT + 32u, 8, &seg_size) || seg_base > ptd_size ||
        seg_size > ptd_size - seg_base || !rd(ptd, ptd_size, 0, 4, &root)) {
        return KIT_PTD_NOT_FLAT_TENSOR;
    }
    uint64_t n_segments;
    uint64_t n_named;
    const uint64_t segments = vector(ptd, ptd_size, root, 1, 4, &n_segments);
    const uint64_t named = vector(ptd, ptd_size, root, 2, 4, &n_named);
    for (uint64_t i = 0; i < n_named; ++i) {
        const uint64_t entry = follow(ptd, ptd_size, named + 4u * i);
        const uint64_t str = follow(ptd, ptd_size, field(ptd, ptd_size, entry, 0));
        uint64_t n;
        if (entry == 0 || str == 0 || !rd(ptd, ptd_size, str, 4, &n) || n > ptd_size - str - 4u) {
            return KIT_PTD_NOT_FLAT_TENSOR;
        }
        if (n != key_len || memcmp(ptd + str + 4u, key, key_len) != 0) {
            continue;
        }
        uint64_t index = 0;
        const uint64_t at = field(ptd, ptd_size, entry, 1);
        if (at != 0 && !rd(ptd, ptd_size, at, 4, &index)) {
            return KIT_PTD_NOT_FLAT_TENSOR;
        }
        uint64_t offset = 0;
        uint64_t bytes = 0;
        const uint64_t seg = index < n_segments ? follow(ptd, ptd_size, segments + 4u * index) : 0;
        const uint64_t off_at = field(ptd, ptd_size, seg, 0);
        const uint64_t size_at = field(ptd, ptd_size, seg, 1);
        if (seg == 0 || (off_at != 0 && !rd(ptd, ptd_size, off_at, 8, &offset)) ||
            (size_at != 0 && !rd(ptd, ptd_size, size_at, 8, &bytes)) || offset > seg_size ||
            bytes > seg_size - offset) {
            return KIT_PTD_NOT_FLAT_TENSOR;
        }
        const uint8_t *found = ptd + seg_base + offset;
        if ((uintptr_t)found % DATA_ALIGN != 0) {
            return KIT_PTD_MISALIGNED;
        }
        *data = found;
        *size = (size_t)bytes;
        return KIT_PTD_OK;
    }
    return KIT_PTD_NO_KEY;
}

kit_ptd_status_t kit_ptd_lookup(const kit_ptd_file_t *files, size_t count, const char *tag,
                                const char *key, size_t key_len, const uint8_t **data, size_t *size)
{
    for (size_t i = 0; i < count; ++i) {
        if (strcmp(files[i].tag, tag) == 0) {
            return kit_ptd_find(files[i].data, files[i].size, key, key_len, data, size);
        }
    }
    return KIT_PTD_NO_KEY;
}

/* SHA-256 (FIPS 180-4), small and allocation-free: the start-up check hashes each block. */
typedef struct {
    uint32_t h[8];
    uint8_t block[64];
    size_t used;
    uint64_t bytes;
} sha256_t;

static const uint32_t K[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u,
    0xab1c5ed5u, 0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu,
    0x9bdc06a7u, 0xc19bf174u, 0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu,
    0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau, 0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u,
    0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u, 0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu,
    0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u, 0xa2bfe8a1u, 0xa81a664bu,
    0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u, 0x19a4c116u,
    0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u,
    0xc67178f2u};

static uint32_t ror(uint32_t x, unsigned n) { return (x >> n) | (x << (32u - n)); }

static void sha256_block(sha256_t *s, const uint8_t *p)
{
    uint32_t w[64];
    for (unsigned i = 0; i < 16; ++i) {
        w[i] = ((uint32_t)p[4 * i] << 24) | ((uint32_t)p[4 * i + 1] << 16) |
               ((uint32_t)p[4 * i + 2] << 8) | (uint32_t)p[4 * i + 3];
    }
    for (unsigned i = 16; i < 64; ++i) {
        const uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (unsigned i = 0; i < 64; ++i) {
        const uint32_t t1 =
            h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        const uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

static void sha256_init(sha256_t *s)
{
    static const uint32_t h0[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                   0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
    memcpy(s->h, h0, sizeof h0);
    s->used = 0;
    s->bytes = 0;
}

static void sha256_add(sha256_t *s, const uint8_t *p, size_t n)
{
    s->bytes += n;
    while (n != 0) {
        size_t take = 64u - s->used;
        take = take < n ? take : n;
        memcpy(s->block + s->used, p, take);
        s->used += take;
        p += take;
        n -= take;
        if (s->used == 64u) {
            sha256_block(s, s->block);
            s->used = 0;
        }
    }
}

static void sha256_hex(sha256_t *s, char out[64])
{
    static const char hex[] = "0123456789abcdef";
    const uint64_t bits = s->bytes * 8u;
    const uint8_t one = 0x80u;
    const uint8_t zero = 0;
    sha256_add(s, &one, 1);
    while (s->used != 56u) {
        sha256_add(s, &zero, 1);
    }
    uint8_t length[8];
    for (unsigned i = 0; i < 8; ++i) {
        length[i] = (uint8_t)(bits >> (56u - 8u * i));
    }
    sha256_add(s, length, sizeof length);
    for (unsigned i = 0; i < 32; ++i) {
        const uint8_t byte = (uint8_t)(s->h[i / 4] >> (24u - 8u * (i % 4)));
        out[2 * i] = hex[byte >> 4];
        out[2 * i + 1] = hex[byte & 15u];
    }
}

int kit_ptd_key_matches(const char *tag, const uint8_t *data, size_t size, const char *key,
                        size_t key_len)
{
    char digest[64];
    sha256_t s;
    const uint8_t nul = 0;
    sha256_init(&s);
    sha256_add(&s, (const uint8_t *)tag, strlen(tag));
    sha256_add(&s, &nul, 1);
    sha256_add(&s, data, size);
    sha256_hex(&s, digest);
    return key_len == sizeof digest && memcmp(digest, key, sizeof digest) == 0;
}

const char *kit_ptd_status_text(kit_ptd_status_t status)
{
    switch (status) {
    case KIT_PTD_OK:
        return "found";
    case KIT_PTD_NOT_FLAT_TENSOR:
        return "not a .ptd (flat tensor) file";
    case KIT_PTD_NO_KEY:
        return "key not in the .ptd";
    case KIT_PTD_MISALIGNED:
        return "data not 16-byte aligned";
    case KIT_PTD_BAD_HASH:
        return "data is not what its key names (SHA-256 differs)";
    default:
        return "unknown";
    }
}

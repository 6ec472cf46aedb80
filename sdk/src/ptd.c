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
    default:
        return "unknown";
    }
}

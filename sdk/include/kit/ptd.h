/*
 * Named external data (.ptd, ExecuTorch's flat tensor format) read in place.
 *
 * A program lowered with VelaExternalBlockPlacements keeps its Vela command streams and
 * weights in .ptd files; the plan places each one, and the apps find a block's bytes by
 * its key (the SHA-256 hex digest the pte names it by) in the placed file, without a
 * copy. Every offset of the file is checked against its size: a slot reflashed with
 * other data (or with nothing) is reported, never read past.
 */
#ifndef KIT_PTD_H
#define KIT_PTD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    KIT_PTD_OK = 0,
    KIT_PTD_NOT_FLAT_TENSOR = -1, /* no "FT01"/"FH01" header, or offsets outside the file */
    KIT_PTD_NO_KEY = -2,          /* a well-formed file without the key */
    KIT_PTD_MISALIGNED = -3,      /* the data is not 16-byte aligned (the NPU needs it) */
    KIT_PTD_BAD_HASH = -4,        /* the bytes under the key are not what the key names */
} kit_ptd_status_t;

/* One placed .ptd: its placement tag, where it is, how many bytes it may hold (the file,
 * or its reserved slot). */
typedef struct {
    const char *tag;
    const uint8_t *data;
    size_t size;
} kit_ptd_file_t;

/* The bytes stored under `key` (key_len bytes, no NUL needed) in the .ptd at ptd. */
kit_ptd_status_t kit_ptd_find(const uint8_t *ptd, size_t ptd_size, const char *key, size_t key_len,
                              const uint8_t **data, size_t *size);

/* The same, in the placed file with tag `tag` among `files`. */
kit_ptd_status_t kit_ptd_lookup(const kit_ptd_file_t *files, size_t count, const char *tag,
                                const char *key, size_t key_len, const uint8_t **data,
                                size_t *size);

/* 1 when `key` (64 hex digits) is the SHA-256 of `tag`, a NUL and the data: what
 * ExecuTorch's arm_vela.py names an external Vela block by. */
int kit_ptd_key_matches(const char *tag, const uint8_t *data, size_t size, const char *key,
                        size_t key_len);

/* One line's worth: what a status means. */
const char *kit_ptd_status_text(kit_ptd_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* KIT_PTD_H */

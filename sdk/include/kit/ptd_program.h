/*
 * The program's named external data, from the generated kit_ptd.h: the placed files, the
 * keys the program reads, and the start-up check that each key is in its file and
 * names its bytes (SHA-256 of the tag, a NUL and the bytes, as arm_vela.py keys them). Include
 * once per app, after kit_ptd.h (static definitions).
 */
#ifndef KIT_PTD_PROGRAM_H
#define KIT_PTD_PROGRAM_H

#include <stddef.h>
#include <string.h>

#include "kit/log.h"
#include "kit/ptd.h"
#include "kit_ptd.h"

/* Hash every block at start-up (the key is its SHA-256): data altered under the right
 * key names is caught too. A few ms per 100 KiB on a Cortex-M55; 0 checks names only. */
#ifndef KIT_PTD_VERIFY_HASH
#define KIT_PTD_VERIFY_HASH 1
#endif

typedef struct {
    const char *tag;
    const char *key;
    const char *what;     /* "forward delegate 0 weight_data" */
    const char *hash_tag; /* the tag the key was hashed with; "": presence only */
} kit_ptd_key_t;

#define KIT_PTD_FILE_ROW(tag, symbol, size, slot) {tag, symbol, size},
static const kit_ptd_file_t kit_ptd_files[] = {KIT_PTD_FILES(KIT_PTD_FILE_ROW)};
#define KIT_PTD_KEY_ROW(tag, key, what, hash_tag) {tag, key, what, hash_tag},
static const kit_ptd_key_t kit_ptd_keys[] = {KIT_PTD_KEYS(KIT_PTD_KEY_ROW)};
#define KIT_PTD_NUM_KEYS (sizeof kit_ptd_keys / sizeof kit_ptd_keys[0])

/* The tag of the file the program reads `key` from, or NULL for a key it does not read. */
static inline const char *kit_ptd_tag_of(const char *key, size_t key_len)
{
    for (size_t i = 0; i < KIT_PTD_NUM_KEYS; ++i) {
        if (strlen(kit_ptd_keys[i].key) == key_len &&
            memcmp(kit_ptd_keys[i].key, key, key_len) == 0) {
            return kit_ptd_keys[i].tag;
        }
    }
    return NULL;
}

/* 0 when every key the program reads is in its placed file (and, with
 * KIT_PTD_VERIFY_HASH, names the bytes there); else one line per bad key and the count. The data is then not this program's (a slot flashed with another
 * model's .ptd): the app must not run it. */
static inline int kit_ptd_check_program(void)
{
    int bad = 0;
    for (size_t i = 0; i < KIT_PTD_NUM_KEYS; ++i) {
        const kit_ptd_key_t *k = &kit_ptd_keys[i];
        const uint8_t *data = NULL;
        size_t size = 0;
        kit_ptd_status_t rc = kit_ptd_lookup(kit_ptd_files, KIT_PTD_COUNT, k->tag, k->key,
                                             strlen(k->key), &data, &size);
#if KIT_PTD_VERIFY_HASH
        if (rc == KIT_PTD_OK && k->hash_tag[0] != '\0' &&
            !kit_ptd_key_matches(k->hash_tag, data, size, k->key, strlen(k->key))) {
            rc = KIT_PTD_BAD_HASH;
        }
#endif
        if (rc != KIT_PTD_OK) {
            kit_printf("kit: external data: %s needs key %.16s... in %s.ptd: %s\n", k->what, k->key,
                       k->tag, kit_ptd_status_text(rc));
            ++bad;
        }
    }
    if (bad != 0) {
        kit_printf(
            "kit: external data: %d of %u key(s) missing or not matching: the .ptd data in this image is "
            "not this program's (flashed for another model?); not executing\n",
            bad, (unsigned)KIT_PTD_NUM_KEYS);
    } else {
        kit_printf("kit: external data: %u key(s) found%s in %u .ptd file(s)\n",
                   (unsigned)KIT_PTD_NUM_KEYS, KIT_PTD_VERIFY_HASH ? " and verified" : "",
                   (unsigned)KIT_PTD_COUNT);
    }
    return bad;
}

#endif /* KIT_PTD_PROGRAM_H */

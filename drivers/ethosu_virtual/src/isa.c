/*
 * ethosu-porting-kit virtual NPU: the instruction-set lookup and the disassembler the decoder
 * tests compare with Vela's own register listing. Field spec: "name=Shi.lo[.enum]" separated
 * by ';', S = p (param), w (payload) or a (a 40-bit address).
 */
#include "isa.h"

#include "common/env.h"
#include "common/num.h"
#include "ethosu_virtual.h"

#include <stdio.h>
#include <string.h>

const struct vnpu_cmd_desc *vnpu_isa_find(const struct vnpu_isa *isa, uint32_t code)
{
    size_t lo = 0;
    size_t hi = isa->ncommands;
    const struct vnpu_cmd_desc *commands_ = isa->commands;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (commands_[mid].code == code) {
            return &commands_[mid];
        }
        if (commands_[mid].code < code) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

void vnpu_isa_build_index(const struct vnpu_isa *isa)
{
    struct vnpu_isa_index *index = isa->index;
    if (index->built) {
        return;
    }
    for (size_t i = 0; i < isa->ncommands; i++) {
        uint32_t code = isa->commands[i].code;
        uint32_t bit = (code & 0x3ffu) | ((code >> 4) & 0x400u);
        index->bits[bit >> 5] |= 1u << (bit & 31u);
    }
    index->built = 1;
}

uint32_t vnpu_code_of(uint32_t word0)
{
    uint32_t control = (word0 >> 14) & 3u;
    /* The header's valid() also takes control 2 as a cmd1; normalise it to 0x4000. */
    return (word0 & 0x3ffu) | (control != 0 ? 0x4000u : 0u);
}

static void append(char *buf, size_t len, size_t *used, const char *text)
{
    size_t n = strlen(text);
    if (*used + n + 1 > len) {
        n = *used + 1 < len ? len - *used - 1 : 0;
    }
    memcpy(buf + *used, text, n);
    *used += n;
    buf[*used] = '\0';
}

/* "0=I32,1=I40" -> the name of `value` uppercased with the enum prefix, or NULL. */
static int enum_name(const struct vnpu_isa *isa, const char *enum_id, size_t enum_len,
                     uint32_t value, char *out, size_t out_len)
{
    const struct vnpu_enum_desc *enums_ = isa->enums;
    for (size_t e = 0; e < isa->nenums; e++) {
        if (strlen(enums_[e].name) != enum_len || strncmp(enums_[e].name, enum_id, enum_len) != 0) {
            continue;
        }
        const char *p = enums_[e].values;
        while (*p) {
            unsigned long v = 0;
            while (*p >= '0' && *p <= '9') {
                v = v * 10u + (unsigned long)(*p++ - '0');
            }
            p++; /* '=' */
            const char *start = p;
            while (*p && *p != ',') {
                p++;
            }
            if (v == value) {
                size_t used = 0;
                for (size_t i = 0; i < enum_len && used + 1 < out_len; i++) {
                    char c = enum_id[i];
                    out[used++] = (char)((c >= 'a' && c <= 'z') ? c - 'a' + 'A' : c);
                }
                if (used + 1 < out_len) {
                    out[used++] = '_';
                }
                for (const char *q = start; q < p && used + 1 < out_len; q++) {
                    out[used++] = *q;
                }
                out[used] = '\0';
                return 0;
            }
            if (*p == ',') {
                p++;
            }
        }
    }
    return -1;
}

int ethosu_virtual_disasm(const uint32_t *words, size_t nwords, size_t *index, char *buf,
                          size_t len)
{
    return vnpu_isa_disasm(&vnpu_isa_u55, words, nwords, index, buf, len);
}

int ethosu_virtual_disasm_product(uint32_t product, const uint32_t *words, size_t nwords,
                                  size_t *index, char *buf, size_t len)
{
    return vnpu_isa_disasm(product == VNPU_PRODUCT_U85 ? &vnpu_isa_u85 : &vnpu_isa_u55, words,
                           nwords, index, buf, len);
}

int vnpu_isa_disasm(const struct vnpu_isa *isa, const uint32_t *words, size_t nwords, size_t *index,
                    char *buf, size_t len)
{
    char tmp[96];
    size_t used = 0;
    if (len == 0) {
        return -1;
    }
    buf[0] = '\0';
    if (*index >= nwords) {
        append(buf, len, &used, "end of stream");
        return -1;
    }
    uint32_t w0 = words[*index];
    uint32_t code = vnpu_code_of(w0);
    uint32_t param = w0 >> 16;
    uint32_t payload = 0;
    const struct vnpu_cmd_desc *cmd = vnpu_isa_find(isa, code);
    if ((code & 0x4000u) != 0) {
        if (*index + 1 >= nwords) {
            snprintf(buf, len, "0x%06lx %04lx truncated cmd1", (unsigned long)(*index * 4u),
                     (unsigned long)code);
            return -1;
        }
        payload = words[*index + 1];
    }
    snprintf(tmp, sizeof(tmp), "0x%06lx %04lx ", (unsigned long)(*index * 4u), (unsigned long)code);
    append(buf, len, &used, tmp);
    if (cmd == NULL) {
        snprintf(tmp, sizeof(tmp), "UNKNOWN param=%lu", (unsigned long)param);
        append(buf, len, &used, tmp);
        return -1;
    }
    append(buf, len, &used, cmd->name);
    *index += (code & 0x4000u) ? 2u : 1u;
    const char *f = cmd->fields;
    while (*f) {
        const char *name = f;
        while (*f != '=') {
            f++;
        }
        size_t name_len = (size_t)(f - name);
        f++;
        char src = *f++;
        unsigned hi = 0;
        unsigned lo = 0;
        while (*f >= '0' && *f <= '9') {
            hi = hi * 10u + (unsigned)(*f++ - '0');
        }
        f++; /* '.' */
        while (*f >= '0' && *f <= '9') {
            lo = lo * 10u + (unsigned)(*f++ - '0');
        }
        const char *enum_id = NULL;
        size_t enum_len = 0;
        if (*f == '.') {
            enum_id = ++f;
            while (*f && *f != ';') {
                f++;
            }
            enum_len = (size_t)(f - enum_id);
        }
        if (*f == ';') {
            f++;
        }
        uint32_t raw = src == 'p' ? param : payload;
        uint32_t width = hi - lo + 1u;
        uint32_t value = width >= 32u ? raw : (raw >> lo) & ((1u << width) - 1u);
        if (src == 'a') {
            /* a 40-bit address: addr_hi in param bits 7:0, addr_lo in the payload */
            unsigned long long addr = ((unsigned long long)(param & 0xffu) << 32) | payload;
            snprintf(tmp, sizeof(tmp), " %.*s=%s", (int)name_len, name, VNPU_U64(addr));
            append(buf, len, &used, tmp);
            continue;
        }
        append(buf, len, &used, " ");
        snprintf(tmp, sizeof(tmp), "%.*s=", (int)name_len, name);
        append(buf, len, &used, tmp);
        char ename[64];
        if (enum_id != NULL && enum_len == 6 && strncmp(enum_id, "signed", 6) == 0) {
            long sv = (width < 32u && (value >> (width - 1u)) != 0) ? (long)value - (1L << width)
                                                                    : (long)value;
            snprintf(tmp, sizeof(tmp), "%ld", sv);
            append(buf, len, &used, tmp);
        } else if (enum_id != NULL &&
                   enum_name(isa, enum_id, enum_len, value, ename, sizeof(ename)) == 0) {
            append(buf, len, &used, ename);
        } else {
            snprintf(tmp, sizeof(tmp), "%lu", (unsigned long)value);
            append(buf, len, &used, tmp);
        }
    }
    return 0;
}

/* ethosu-porting-kit virtual NPU: an instruction set as data (commands, fields, enums), its
 * lookup and disassembler. One table per product (u55/u55_isa.c, u85/u85_isa.c). */
#ifndef VNPU_ISA_H
#define VNPU_ISA_H

#include <stddef.h>
#include <stdint.h>

struct vnpu_cmd_desc {
    uint16_t code;
    const char *name;
    const char *fields;
};

struct vnpu_enum_desc {
    const char *name;
    const char *values;
};

/* Which codes an instruction set has, one bit each: cmd0 0x000..0x3ff, then cmd1 0x4000..0x43ff. */
#define VNPU_ISA_CODES 2048u
struct vnpu_isa_index {
    int built;
    uint32_t bits[VNPU_ISA_CODES / 32u];
};

/* One instruction set: its commands (sorted by code) and field enumerations. */
struct vnpu_isa {
    const struct vnpu_cmd_desc *commands;
    size_t ncommands;
    const struct vnpu_enum_desc *enums;
    size_t nenums;
    /* the commands as bits, built on first use (vnpu_isa_build_index): the interpreter asks
     * once per command whether the code exists, and a binary search there was a tenth of
     * a small model's run */
    struct vnpu_isa_index *index;
};

extern const struct vnpu_isa vnpu_isa_u55; /* u55/u55_isa.c (U55 and U65) */
extern const struct vnpu_isa vnpu_isa_u85; /* u85/u85_isa.c */

const struct vnpu_cmd_desc *vnpu_isa_find(const struct vnpu_isa *isa, uint32_t code);
/* Fill isa->index if it is not yet (the same bits every time: a repeated build is harmless). */
void vnpu_isa_build_index(const struct vnpu_isa *isa);

/* vnpu_isa_find(isa, code) != NULL, for a code of vnpu_code_of, after vnpu_isa_build_index. */
static inline int vnpu_isa_known(const struct vnpu_isa *isa, uint32_t code)
{
    uint32_t i = (code & 0x3ffu) | ((code >> 4) & 0x400u);
    return (int)((isa->index->bits[i >> 5] >> (i & 31u)) & 1u);
}
int vnpu_isa_disasm(const struct vnpu_isa *isa, const uint32_t *words, size_t nwords, size_t *index,
                    char *buf, size_t len);
uint32_t vnpu_code_of(uint32_t word0);

#endif /* VNPU_ISA_H */

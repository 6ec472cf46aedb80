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

/* One instruction set: its commands (sorted by code) and field enumerations. */
struct vnpu_isa {
    const struct vnpu_cmd_desc *commands;
    size_t ncommands;
    const struct vnpu_enum_desc *enums;
    size_t nenums;
};

extern const struct vnpu_isa vnpu_isa_u55; /* u55/u55_isa.c (U55 and U65) */
extern const struct vnpu_isa vnpu_isa_u85; /* u85/u85_isa.c */

const struct vnpu_cmd_desc *vnpu_isa_find(const struct vnpu_isa *isa, uint32_t code);
int vnpu_isa_disasm(const struct vnpu_isa *isa, const uint32_t *words, size_t nwords, size_t *index,
                    char *buf, size_t len);
uint32_t vnpu_code_of(uint32_t word0);

#endif /* VNPU_ISA_H */

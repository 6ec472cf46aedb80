/*
 * ethosu-porting-kit virtual NPU: the U55/U65 command table and the disassembler.
 *
 * Written from the kit's command-stream reference (section 4). The table is data
 * for validation (an unknown code stops the stream) and for the disassembler the
 * decoder tests compare with Vela's own register listing; execution reads the
 * register file directly.
 */
#include "isa.h"

/* Field spec: "name=Shi.lo[.enum]" separated by ';', S = p (param) or w (payload). */
static const struct vnpu_cmd_desc commands[] = {
#include "u55_commands.def"
};

/* Enumerations: "value=NAME,..." ; printed as <ENUM>_<NAME>. */
static const struct vnpu_enum_desc enums[] = {
#include "u55_enums.def"
};

static struct vnpu_isa_index index_;
const struct vnpu_isa vnpu_isa_u55 = {commands, sizeof(commands) / sizeof(commands[0]), enums,
                                      sizeof(enums) / sizeof(enums[0]), &index_};

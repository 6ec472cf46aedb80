/*
 * ethosu-porting-kit virtual NPU: the Ethos-U85 command table.
 *
 * Written from the kit's command-stream reference (section 12 and appendix A).
 * Field spec: "name=Shi.lo[.enum]" separated by ';', S = p (param), w (payload)
 * or a (a 40-bit address: addr_hi in param bits 7:0, addr_lo in the payload); the
 * pseudo-enum "signed" prints a two's complement field. Names are regor's (it calls
 * cmd1 0x096/0x097 NPU_SET_RESIZE_X/Y_STEP where the driver header says RESIZE_X/Y).
 * The same disassembler as the U55's (isa.c) prints it; the decoder tests
 * compare it field by field with Vela's --verbose-register-command-stream.
 */
#include "isa.h"

#define ADDR "addr=a31.0"

static const struct vnpu_cmd_desc commands[] = {
#include "u85_commands.def"
};

static const struct vnpu_enum_desc enums[] = {
#include "u85_enums.def"
};

static struct vnpu_isa_index index_;
const struct vnpu_isa vnpu_isa_u85 = {commands, sizeof(commands) / sizeof(commands[0]), enums,
                                      sizeof(enums) / sizeof(enums[0]), &index_};

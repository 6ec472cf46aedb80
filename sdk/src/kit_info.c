/*
 * What the image was built for, in a non-allocated ELF section (`.kit.info`) so tools
 * can tell without the project folder: `ethosu-kit run` refuses a board QEMU has no
 * model of. Lines of key=value.
 */
#include "kit_board_config.h"
#include "kit_memory_config.h"
#include "kit_sections.h"

#ifndef KIT_QEMU_MACHINE
#define KIT_QEMU_MACHINE ""
#endif

__attribute__((used, section(KIT_SECTION_INFO))) const char kit_info[] =
    "board=" KIT_BOARD_NAME "\n"
    "mode=" KIT_MEMORY_MODE "\n"
    "npu=" KIT_NPU_KIND "\n"
    "qemu=" KIT_QEMU_MACHINE "\n";

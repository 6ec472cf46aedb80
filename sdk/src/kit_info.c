/*
 * What the image was built for, in a non-allocated ELF section (`.kit.info`) so tools
 * can tell without the project folder: `ethosu-kit run` picks the board's QEMU machine
 * and CPU from it, and refuses a board QEMU has no model of. Lines of key=value.
 */
#include "kit_board_config.h"
#include "kit_memory_config.h"

__attribute__((used, section(".kit.info"))) const char kit_info[] =
    "board=" KIT_BOARD_NAME "\n"
    "mode=" KIT_MEMORY_MODE "\n"
    "npu=" KIT_NPU_KIND "\n"
    "qemu=" KIT_QEMU_MACHINE "\n"
    "qemu_cpu=" KIT_QEMU_CPU "\n";

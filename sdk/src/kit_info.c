/*
 * What the image was built for, in a non-allocated ELF section (`.kit.info`) so tools
 * can tell without the project folder: `ethosu-kit run` finds the board (its QEMU
 * machine and CPU, and the MACs an FVP is configured with) here. Lines of key=value.
 * `model_sha256` (the .pte's) pairs the image with its own memory_plan.json: `run` and
 * `check-elf` take no plan made for another model, however near the ELF it lies.
 */
#include "kit_board_config.h"
#include "kit_memory_config.h"
#include "kit_model.h"
#include "kit_sections.h"

#ifndef KIT_NPU_MACS
#define KIT_NPU_MACS 0
#endif

/* The app's name (CMake's APP, its last part): `run --inputs/-o` refuses one that takes no
 * inputs from the host. Empty when built some other way: nothing is refused. */
#ifndef KIT_APP_NAME
#define KIT_APP_NAME ""
#endif

#define KIT_INFO_STR_(x) #x
#define KIT_INFO_STR(x) KIT_INFO_STR_(x)

__attribute__((used, section(KIT_SECTION_INFO))) const char kit_info[] =
    "board=" KIT_BOARD_NAME "\n"
    "mode=" KIT_MEMORY_MODE "\n"
    "model_sha256=" KIT_MODEL_SHA256 "\n"
    "npu=" KIT_NPU_KIND "\n"
    "macs=" KIT_INFO_STR(KIT_NPU_MACS) "\n"
                                       "qemu=" KIT_QEMU_MACHINE "\n"
                                       "qemu_cpu=" KIT_QEMU_CPU "\n"
                                       "app=" KIT_APP_NAME "\n";

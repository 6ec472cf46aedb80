# GNU Arm Embedded GCC (Debian's gcc-arm-none-eabi 12.2 or Arm's release).
# The CPU flags are the board's (ETHOSU_KIT_CPU_FLAGS_GCC in the generated kit_board.cmake,
# passed as ETHOSU_KIT_BOARD_CMAKE by the presets), derived from its [cpu] core, fpu, mve
# and dsp by ethosu_kit/board/cores.py. GCC 12.2 has no -mcpu=cortex-m85: for an M85 the kit
# gives -march=armv8.1-m.main+<mve/dsp>+<fp> with -mtune=cortex-m55, the same ISA.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(ETHOSU_KIT_TOOLCHAIN gcc CACHE STRING "kit toolchain id: gcc, clang or armclang")

set(_ethosu_kit_prefix "arm-none-eabi-")
if(DEFINED ENV{ARM_GCC_PREFIX})
  set(_ethosu_kit_prefix "$ENV{ARM_GCC_PREFIX}")
endif()
set(CMAKE_C_COMPILER "${_ethosu_kit_prefix}gcc")
set(CMAKE_CXX_COMPILER "${_ethosu_kit_prefix}g++")
set(CMAKE_ASM_COMPILER "${_ethosu_kit_prefix}gcc")
set(CMAKE_OBJCOPY "${_ethosu_kit_prefix}objcopy" CACHE FILEPATH "")
set(CMAKE_SIZE "${_ethosu_kit_prefix}size" CACHE FILEPATH "")
# No board-independent startup exists to link a test executable against.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

include("${CMAKE_CURRENT_LIST_DIR}/ethosu_kit_cpu_flags.cmake")
ethosu_kit_toolchain_cpu_flags(GCC)

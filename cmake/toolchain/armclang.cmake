# Arm Compiler 6 (armclang + armlink). ethosu_add_firmware links with the generated
# scatter file (--scatter). Not installable on the kit's CI machine: kept conventional.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(ETHOSU_KIT_TOOLCHAIN armclang CACHE STRING "kit toolchain id: gcc, clang or armclang")

set(CMAKE_C_COMPILER armclang)
set(CMAKE_CXX_COMPILER armclang)
set(CMAKE_ASM_COMPILER armclang)
set(CMAKE_LINKER armlink)
set(CMAKE_C_COMPILER_TARGET arm-arm-none-eabi)
set(CMAKE_CXX_COMPILER_TARGET arm-arm-none-eabi)
set(CMAKE_ASM_COMPILER_TARGET arm-arm-none-eabi)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

include("${CMAKE_CURRENT_LIST_DIR}/ethosu_kit_cpu_flags.cmake")
ethosu_kit_toolchain_cpu_flags(ARMCLANG)
if(ETHOSU_KIT_CPU)
  # Only a project still on CMP0123 OLD (cmake_minimum_required < 3.21) uses it: CMake's
  # ARMClang support then adds -mcpu and armlink's --cpu from CMAKE_SYSTEM_PROCESSOR and
  # stops on the generic "arm". Under NEW (the kit's own 3.25 projects) the board's flags
  # above are all there is, and armlink takes the CPU from the objects.
  set(CMAKE_SYSTEM_PROCESSOR "${ETHOSU_KIT_CPU}")
endif()

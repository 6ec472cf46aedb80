# LLVM clang + lld (Debian's clang-19), linking the arm-none-eabi newlib and libgcc of the
# GNU toolchain: ethosu_add_firmware finds their multilib folder with
# `arm-none-eabi-gcc <board gcc flags> -print-file-name=libc_nano.a` / -print-libgcc-file-name.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(ETHOSU_KIT_TOOLCHAIN clang CACHE STRING "kit toolchain id: gcc, clang or armclang")

find_program(_ethosu_kit_clang NAMES clang-19 clang REQUIRED)
find_program(_ethosu_kit_clangxx NAMES clang++-19 clang++ REQUIRED)
set(CMAKE_C_COMPILER "${_ethosu_kit_clang}")
set(CMAKE_CXX_COMPILER "${_ethosu_kit_clangxx}")
set(CMAKE_ASM_COMPILER "${_ethosu_kit_clang}")
set(CMAKE_C_COMPILER_TARGET arm-none-eabi)
set(CMAKE_CXX_COMPILER_TARGET arm-none-eabi)
set(CMAKE_ASM_COMPILER_TARGET arm-none-eabi)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# newlib's headers: the GNU toolchain's sysroot (Debian: /usr/lib/arm-none-eabi).
execute_process(COMMAND arm-none-eabi-gcc -print-file-name=libc.a
                OUTPUT_VARIABLE _ethosu_kit_libc OUTPUT_STRIP_TRAILING_WHITESPACE)
get_filename_component(_ethosu_kit_sysroot "${_ethosu_kit_libc}/../.." ABSOLUTE)
if(EXISTS "${_ethosu_kit_sysroot}/include/stdio.h")
  set(CMAKE_SYSROOT "${_ethosu_kit_sysroot}")
endif()

include("${CMAKE_CURRENT_LIST_DIR}/ethosu_kit_cpu_flags.cmake")
ethosu_kit_toolchain_cpu_flags(CLANG)

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

# C++ (the executor_runner, ExecuTorch): clang's bare-metal driver brings no C++ library
# and looks for libc++ only, so <cstring> is not found. The GNU toolchain's libstdc++
# headers (Debian: libstdc++-arm-none-eabi-dev) are the ones its newlib and libstdc++_nano
# were built with: ask arm-none-eabi-g++, with the board's GCC flags, for its C++ include
# folders in its order. The flags matter: the multilib folder's bits/c++config.h differs
# between CPUs (_GLIBCXX_ATOMIC_BUILTINS is off for v6-m), so without a board
# (ETHOSU_KIT_BOARD_CMAKE) none is guessed. As -isystem the folders come before the
# sysroot's C headers, as libstdc++'s <cstdlib> (#include_next <stdlib.h>) needs.
# ETHOSU_KIT_CLANG_CXX_INCLUDES says what was found: the executor_runner's configure stops
# naming the missing package when it is empty, instead of a compile error deep in ExecuTorch.
set(ETHOSU_KIT_CLANG_CXX_INCLUDES "")
if(ETHOSU_KIT_CPU_FLAGS_GCC)
  execute_process(COMMAND arm-none-eabi-g++ ${ETHOSU_KIT_CPU_FLAGS_GCC} -x c++ -E -v -
                  INPUT_FILE /dev/null OUTPUT_QUIET ERROR_VARIABLE _ethosu_kit_gxx_v
                  RESULT_VARIABLE _ethosu_kit_gxx_rc)
  set(_ethosu_kit_cxx_includes "")
  if(_ethosu_kit_gxx_rc EQUAL 0
     AND _ethosu_kit_gxx_v MATCHES "#include <\\.\\.\\.> search starts here:\n(.*)\nEnd of search list")
    string(REPLACE "\n" ";" _ethosu_kit_search "${CMAKE_MATCH_1}")
    foreach(_dir IN LISTS _ethosu_kit_search)
      string(STRIP "${_dir}" _dir)
      if(_dir MATCHES "/c\\+\\+/" AND IS_DIRECTORY "${_dir}")
        get_filename_component(_dir "${_dir}" ABSOLUTE)
        list(APPEND _ethosu_kit_cxx_includes "${_dir}")
      endif()
    endforeach()
  endif()
  if(_ethosu_kit_cxx_includes)
    set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES ${_ethosu_kit_cxx_includes})
    set(ETHOSU_KIT_CLANG_CXX_INCLUDES ${_ethosu_kit_cxx_includes})
  endif()
endif()

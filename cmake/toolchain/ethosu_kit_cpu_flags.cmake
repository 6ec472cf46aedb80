# Shared by the toolchain files: apply the board's CPU flags to every language, so any
# library built in the same tree (ExecuTorch, the NPU driver) gets them too.
# The board comes from ETHOSU_KIT_BOARD_CMAKE (the generated kit_board.cmake; the
# presets set it). Without it (a firmware team's own tree, where the board is only
# known when ethosu_add_firmware generates), the function adds the flags per target.
macro(ethosu_kit_toolchain_cpu_flags _tc)
  list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ETHOSU_KIT_BOARD_CMAKE)
  if(ETHOSU_KIT_BOARD_CMAKE AND EXISTS "${ETHOSU_KIT_BOARD_CMAKE}")
    include("${ETHOSU_KIT_BOARD_CMAKE}")
    string(JOIN " " _ethosu_kit_flags ${ETHOSU_KIT_CPU_FLAGS_${_tc}})
    set(CMAKE_C_FLAGS_INIT "${_ethosu_kit_flags}")
    set(CMAKE_CXX_FLAGS_INIT "${_ethosu_kit_flags}")
    set(CMAKE_ASM_FLAGS_INIT "${_ethosu_kit_flags}")
    if(NOT "${_tc}" STREQUAL "ARMCLANG")  # armlink takes --cpu, not compiler flags
      set(CMAKE_EXE_LINKER_FLAGS_INIT "${_ethosu_kit_flags}")
    endif()
    set(ETHOSU_KIT_TOOLCHAIN_CPU_FLAGS "${_ethosu_kit_flags}")
  endif()
endmacro()

# The kit's CMake functions (docs/ARCHITECTURE.md, "CMake"):
#
#   ethosu_kit_generate(OUTPUT_DIR <dir> PTE <file> BOARD <board> [MODE <m>]
#                       [FAST_SCRATCH <n>] [APP <app>])
#       runs `python -m ethosu_kit gen` at configure time (Python from find_package(Python3),
#       or ETHOSU_KIT_PYTHON).
#
#   ethosu_add_firmware(TARGET <t> APP <bringup|executor_runner|folder>
#                       [GENERATED_DIR <dir>] | [PTE <file> BOARD <b> [MODE <m>] [FAST_SCRATCH <n>]]
#                       [NPU driver|virtual|none])
#       adds executable <t> (<t>.elf): the app, the SDK, the board's HAL (the kit's default
#       for each hook of sdk/include/kit/hal.h, or the board's own [port].sources for the
#       hooks its [port].hooks names), the generated buffers and network, linked with the
#       generated linker script (scatter file for armclang). The board's [port].cmake, if
#       any, is include()d last with ETHOSU_KIT_TARGET = <t>.
#
#   BOARD: a built-in name/alias, or a board folder / board.toml; a relative path is
#       relative to CMAKE_CURRENT_SOURCE_DIR (the caller's), as CMake paths are.
include_guard(GLOBAL)
get_filename_component(ETHOSU_KIT_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}" ABSOLUTE)
get_filename_component(ETHOSU_KIT_ROOT "${ETHOSU_KIT_CMAKE_DIR}/.." ABSOLUTE)

# The Python that runs ethosu_kit at configure time: ETHOSU_KIT_PYTHON, else find_package's.
function(_ethosu_kit_python out)
  if(ETHOSU_KIT_PYTHON)
    set(${out} "${ETHOSU_KIT_PYTHON}" PARENT_SCOPE)
  else()
    find_package(Python3 3.11 REQUIRED COMPONENTS Interpreter)
    set(${out} "${Python3_EXECUTABLE}" PARENT_SCOPE)
  endif()
endfunction()

# BOARD is a built-in name/alias, a board folder or a board.toml. A path (anything with
# a '/', ending in .toml, or an existing folder) is the caller's: relative to
# CMAKE_CURRENT_SOURCE_DIR, as CMake paths are, never to the kit's folder gen runs in.
function(_ethosu_kit_board_arg out board)
  if(board MATCHES "[/\\]" OR board MATCHES "\\.toml$" OR IS_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/${board}")
    get_filename_component(board "${board}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(toml "${board}")
    if(IS_DIRECTORY "${board}")
      set(toml "${board}/board.toml")
    endif()
    if(EXISTS "${toml}")
      # Regenerate when the board changes.
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${toml}")
    endif()
  endif()
  set(${out} "${board}" PARENT_SCOPE)
endfunction()

function(ethosu_kit_generate)
  cmake_parse_arguments(ARG "" "OUTPUT_DIR;PTE;BOARD;MODE;FAST_SCRATCH;APP" "" ${ARGN})
  foreach(required OUTPUT_DIR PTE BOARD)
    if(NOT ARG_${required})
      message(FATAL_ERROR "ethosu_kit_generate: ${required} is required")
    endif()
  endforeach()
  get_filename_component(pte "${ARG_PTE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${pte}")
    message(FATAL_ERROR "ethosu_kit_generate: PTE ${pte} does not exist")
  endif()
  _ethosu_kit_board_arg(board "${ARG_BOARD}")
  _ethosu_kit_python(python)
  set(cmd "${python}" -m ethosu_kit gen --pte "${pte}" --board "${board}" -o "${ARG_OUTPUT_DIR}" -q)
  if(ARG_MODE)
    list(APPEND cmd --mode "${ARG_MODE}")
  endif()
  if(ARG_FAST_SCRATCH)
    list(APPEND cmd --fast-scratch "${ARG_FAST_SCRATCH}")
  endif()
  if(ARG_APP)
    list(APPEND cmd --app "${ARG_APP}")
  endif()
  execute_process(
    COMMAND ${cmd}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err
    # the package may be importable only from the kit's own source tree
    WORKING_DIRECTORY "${ETHOSU_KIT_ROOT}/codegen")
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    message(FATAL_ERROR "ethosu_kit_generate: gen-firmware failed (exit ${rc}) for ${pte}:\n${err}")
  endif()
  # Regenerate when the model or the board changes.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${pte}")
endfunction()

# The C runtime the firmware links: newlib-nano, no crt0 (sdk/src/startup.c is the entry).
function(_ethosu_kit_link_runtime target toolchain)
  if(toolchain STREQUAL "gcc")
    target_link_options(${target} PRIVATE --specs=nano.specs -nostartfiles)
  elseif(toolchain STREQUAL "clang")
    # lld + the GNU toolchain's newlib/libgcc for this CPU's multilib.
    execute_process(COMMAND arm-none-eabi-gcc ${ETHOSU_KIT_CPU_FLAGS_GCC} -print-file-name=libc_nano.a
                    OUTPUT_VARIABLE libc OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND arm-none-eabi-gcc ${ETHOSU_KIT_CPU_FLAGS_GCC} -print-libgcc-file-name
                    OUTPUT_VARIABLE libgcc OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT EXISTS "${libc}" OR NOT EXISTS "${libgcc}")
      message(FATAL_ERROR "ethosu_add_firmware: clang links the arm-none-eabi newlib, but "
                          "arm-none-eabi-gcc did not find libc_nano.a/libgcc.a for "
                          "'${ETHOSU_KIT_CPU_FLAGS_GCC}' (apt install gcc-arm-none-eabi libnewlib-arm-none-eabi)")
    endif()
    get_filename_component(libdir "${libc}" DIRECTORY)
    target_link_options(${target} PRIVATE -fuse-ld=lld -nostdlib "-L${libdir}")
    target_link_libraries(${target} PRIVATE -Wl,--start-group c_nano m "${libgcc}" -Wl,--end-group)
  elseif(toolchain STREQUAL "armclang")
    # armlink: the scatter file places everything; the Arm C library has its own startup hooks.
  else()
    message(FATAL_ERROR "ethosu_add_firmware: unknown toolchain '${toolchain}' (gcc, clang, armclang)")
  endif()
endfunction()

# The HAL (sdk/include/kit/hal.h): for each hook, the kit's default for this board's
# data (from kit_board.cmake) unless the board's [port].hooks names it; a hook the data
# leaves without a default (console "custom", timer "custom") must be the board's.
function(_ethosu_kit_hal out_sources out_includes)
  set(sources)
  set(includes)
  foreach(hook IN LISTS ETHOSU_KIT_PORT_HOOKS)
    if(NOT hook IN_LIST ETHOSU_KIT_HAL_HOOKS)
      message(FATAL_ERROR "ethosu_add_firmware: board ${ETHOSU_KIT_BOARD} (${ETHOSU_KIT_BOARD_FILE}): "
                          "[port].hooks names '${hook}', which is not a HAL hook "
                          "(hooks: ${ETHOSU_KIT_HAL_HOOKS})")
    endif()
  endforeach()
  foreach(hook IN LISTS ETHOSU_KIT_HAL_HOOKS)
    if(hook IN_LIST ETHOSU_KIT_PORT_HOOKS)
      continue()  # the board's sources implement it
    endif()
    if(ETHOSU_KIT_HAL_${hook}_REQUIRED)
      string(JOIN ", " functions ${ETHOSU_KIT_HAL_${hook}_FUNCTIONS})
      message(FATAL_ERROR "ethosu_add_firmware: board ${ETHOSU_KIT_BOARD} (${ETHOSU_KIT_BOARD_FILE}) "
                          "needs the HAL hook '${hook}' (${ETHOSU_KIT_HAL_${hook}_REQUIRED} has no "
                          "default) and its [port].hooks does not name it: implement ${functions} "
                          "(sdk/include/kit/hal.h) in a [port].sources file and add \"${hook}\" "
                          "to [port].hooks")
    endif()
    foreach(src IN LISTS ETHOSU_KIT_HAL_${hook}_SOURCES)
      list(APPEND sources "${ETHOSU_KIT_ROOT}/${src}")
    endforeach()
    foreach(dir IN LISTS ETHOSU_KIT_HAL_${hook}_INCLUDE_DIRS)
      list(APPEND includes "${ETHOSU_KIT_ROOT}/${dir}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES sources)
  list(REMOVE_DUPLICATES includes)
  set(${out_sources} ${sources} PARENT_SCOPE)
  set(${out_includes} ${includes} PARENT_SCOPE)
endfunction()

function(ethosu_add_firmware)
  cmake_parse_arguments(ARG "" "TARGET;APP;GENERATED_DIR;PTE;BOARD;MODE;FAST_SCRATCH;NPU" "" ${ARGN})
  if(NOT ARG_TARGET)
    message(FATAL_ERROR "ethosu_add_firmware: TARGET is required")
  endif()
  if(NOT ARG_APP)
    set(ARG_APP bringup)
  endif()
  if(NOT ARG_NPU)
    set(ARG_NPU driver)
  endif()
  if(NOT ARG_NPU MATCHES "^(driver|virtual|none)$")
    message(FATAL_ERROR "ethosu_add_firmware: NPU '${ARG_NPU}' is not driver, virtual or none")
  endif()

  if(ARG_GENERATED_DIR)
    get_filename_component(gen "${ARG_GENERATED_DIR}" ABSOLUTE)
  elseif(ARG_PTE AND ARG_BOARD)
    set(gen "${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}_kit")
    set(app_arg)
    if(ARG_APP MATCHES "^(bringup|executor_runner)$")
      set(app_arg APP ${ARG_APP})
    endif()
    ethosu_kit_generate(OUTPUT_DIR "${gen}" PTE "${ARG_PTE}" BOARD "${ARG_BOARD}"
                        MODE "${ARG_MODE}" FAST_SCRATCH "${ARG_FAST_SCRATCH}" ${app_arg})
  else()
    message(FATAL_ERROR "ethosu_add_firmware(${ARG_TARGET}): give GENERATED_DIR, or PTE and BOARD")
  endif()
  set(gdir "${gen}/generated")
  if(NOT EXISTS "${gdir}/kit_board.cmake")
    message(FATAL_ERROR "ethosu_add_firmware: ${gdir}/kit_board.cmake is missing: "
                        "is ${gen} a project made by gen-firmware?")
  endif()
  include("${gdir}/kit_board.cmake")

  set(toolchain "${ETHOSU_KIT_TOOLCHAIN}")
  if(NOT toolchain)
    if(CMAKE_C_COMPILER_ID STREQUAL "ARMClang")
      set(toolchain armclang)
    elseif(CMAKE_C_COMPILER_ID MATCHES "Clang")
      set(toolchain clang)
    else()
      set(toolchain gcc)
    endif()
  endif()
  string(TOUPPER "${toolchain}" tc_upper)

  set(kit "${ETHOSU_KIT_ROOT}")
  _ethosu_kit_hal(hal_sources hal_includes)

  add_executable(${ARG_TARGET}
    "${kit}/sdk/src/startup.c"
    "${kit}/sdk/src/system.c"
    "${kit}/sdk/src/platform.c"
    "${kit}/sdk/src/semihosting.c"
    "${kit}/sdk/src/syscalls.c"
    "${kit}/sdk/src/retarget_armclib.c"
    "${kit}/sdk/src/log.c"
    "${kit}/sdk/src/alloc.c"
    "${kit}/sdk/src/timing.c"
    "${kit}/sdk/src/kit_info.c"
    ${hal_sources}
    ${ETHOSU_KIT_PORT_SOURCES}
    "${gdir}/kit_buffers.c"
    "${gdir}/kit_network.S")
  set_target_properties(${ARG_TARGET} PROPERTIES SUFFIX ".elf")
  target_include_directories(${ARG_TARGET} PRIVATE
    "${kit}/sdk/include" ${hal_includes} ${ETHOSU_KIT_PORT_INCLUDE_DIRS} "${gdir}")
  # .incbin finds model.pte through the include path; rebuild when it changes.
  set_source_files_properties("${gdir}/kit_network.S" PROPERTIES OBJECT_DEPENDS "${gdir}/model.pte")

  if(NOT ETHOSU_KIT_TOOLCHAIN_CPU_FLAGS)
    # The toolchain file did not know the board: flags per target.
    target_compile_options(${ARG_TARGET} PRIVATE ${ETHOSU_KIT_CPU_FLAGS_${tc_upper}})
    if(NOT toolchain STREQUAL "armclang")
      target_link_options(${ARG_TARGET} PRIVATE ${ETHOSU_KIT_CPU_FLAGS_${tc_upper}})
    endif()
  endif()
  target_compile_options(${ARG_TARGET} PRIVATE
    -ffunction-sections -fdata-sections
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Werror>)

  if(toolchain STREQUAL "armclang")
    # CMake's ARMClang link rule already ends in --list=<target base>.map.
    target_link_options(${ARG_TARGET} PRIVATE "--scatter=${ETHOSU_KIT_SCATTER_FILE}" "--map"
                        "--entry=Reset_Handler")
    set_property(TARGET ${ARG_TARGET} APPEND PROPERTY LINK_DEPENDS "${ETHOSU_KIT_SCATTER_FILE}")
  else()
    target_link_options(${ARG_TARGET} PRIVATE "-T${ETHOSU_KIT_LINKER_SCRIPT}" -Wl,--gc-sections
                        "-Wl,-Map=$<TARGET_FILE:${ARG_TARGET}>.map")
    set_property(TARGET ${ARG_TARGET} APPEND PROPERTY LINK_DEPENDS "${ETHOSU_KIT_LINKER_SCRIPT}")
  endif()
  _ethosu_kit_link_runtime(${ARG_TARGET} "${toolchain}")

  # The NPU glue only with a driver: bring-up never touches the NPU (QEMU has none).
  set(npu "${ARG_NPU}")
  if(ARG_APP STREQUAL "bringup")
    set(npu none)
  endif()
  if(npu STREQUAL "none")
    target_sources(${ARG_TARGET} PRIVATE "${kit}/sdk/src/npu_none.c")
  else()
    target_sources(${ARG_TARGET} PRIVATE "${kit}/sdk/src/npu_ethosu.c")
  endif()

  if(ARG_APP STREQUAL "bringup")
    target_sources(${ARG_TARGET} PRIVATE "${kit}/apps/bringup/main.c")
  elseif(ARG_APP STREQUAL "executor_runner")
    include("${kit}/apps/executor_runner/executor_runner.cmake")
    ethosu_kit_add_executor_runner(${ARG_TARGET} "${gdir}" NPU ${npu})
  else()
    get_filename_component(app_dir "${ARG_APP}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    file(GLOB app_sources CONFIGURE_DEPENDS "${app_dir}/*.c" "${app_dir}/*.cpp" "${app_dir}/*.S")
    if(NOT app_sources)
      message(FATAL_ERROR "ethosu_add_firmware: APP '${ARG_APP}' is not bringup, executor_runner "
                          "or a folder with .c/.cpp sources")
    endif()
    target_sources(${ARG_TARGET} PRIVATE ${app_sources})
  endif()

  if(ETHOSU_KIT_PORT_CMAKE)
    # The board's own CMake ([port].cmake), once the target exists: ETHOSU_KIT_TARGET
    # names it (e.g. target_compile_definitions(${ETHOSU_KIT_TARGET} PRIVATE ...)).
    set(ETHOSU_KIT_TARGET ${ARG_TARGET})
    include("${ETHOSU_KIT_PORT_CMAKE}")
  endif()
endfunction()

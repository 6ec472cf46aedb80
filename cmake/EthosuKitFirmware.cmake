# The kit's CMake functions (docs/ARCHITECTURE.md, "CMake"):
#
#   ethosu_kit_generate(OUTPUT_DIR <dir> PTE <file> BOARD <board> [MODE <m>]
#                       [FAST_SCRATCH <n>] [APP <app>])
#       runs `python -m ethosu_kit gen` at configure time (Python from find_package(Python3),
#       or ETHOSU_KIT_PYTHON).
#
#   ethosu_add_firmware(TARGET <t> APP <bringup|executor_runner|selftest|folder>
#                       [GENERATED_DIR <dir>] | [PTE <file> BOARD <b> [MODE <m>] [FAST_SCRATCH <n>]]
#                       [NPU driver|virtual|none])
#       adds executable <t> (<t>.elf): the app, the SDK, the board glue, the generated
#       buffers and network, linked with the generated linker script (scatter file for
#       armclang).
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
  _ethosu_kit_python(python)
  set(cmd "${python}" -m ethosu_kit gen --pte "${pte}" --board "${ARG_BOARD}" -o "${ARG_OUTPUT_DIR}" -q)
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

# The virtual NPU's working memory (decoded weights) is a buffer of the memory plan,
# kit_vnpu_workspace (`gen --npu virtual`, or `ethosu-kit build --npu virtual`, measures
# it on the host and fit-checks it); the board glue hands it to the virtual NPU. The
# library's own static fallback shrinks to its 64-byte minimum. A size given with
# -DETHOSU_VIRTUAL_WORKSPACE_SIZE caps what the glue hands over (a too-small one stops
# the run with the bytes needed and available on the UART).
function(_ethosu_kit_virtual_workspace target gen)
  file(STRINGS "${gen}/kit_memory_config.h" _ws REGEX "^#define KIT_VNPU_WORKSPACE_SIZE ")
  if(NOT _ws)
    message(FATAL_ERROR "ethosu-porting-kit: ${target}: NPU virtual, but the memory plan "
      "in ${gen} has no buffer for the virtual NPU's working memory: build with "
      "`ethosu-kit build <project> --npu virtual`, or generate with `--npu virtual`")
  endif()
  target_compile_definitions(${target} PRIVATE KIT_NPU_VIRTUAL=1)
  if(ETHOSU_VIRTUAL_WORKSPACE_SIZE)
    target_compile_definitions(${target} PRIVATE
      KIT_VNPU_WORKSPACE_LIMIT=${ETHOSU_VIRTUAL_WORKSPACE_SIZE})
  else()
    target_compile_definitions(ethosu_virtual PRIVATE ETHOSU_VIRTUAL_WORKSPACE_SIZE=64)
  endif()
  target_compile_definitions(ethosu_virtual PRIVATE ETHOSU_VIRTUAL_REPORT_STDERR)
endfunction()

# The NPU library of <target> for NPU virtual|driver|none: sets <out_lib> to the library
# to link (empty for none) and <out_dir> to the driver's source folder; with the virtual
# NPU, <target> gets KIT_NPU_VIRTUAL=1.
#   virtual: drivers/ethosu_virtual, its working memory sized for the model's streams
#   driver:  the Ethos-U core driver from ETHOSU_DRIVER_ROOT (cmake/executorch.cmake)
function(ethosu_kit_npu_library target gen npu out_lib out_dir)
  # not ETHOSU_KIT_ROOT: a caller in another directory scope may not see it
  get_filename_component(root "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/.." ABSOLUTE)
  set(lib "")
  set(dir "")
  if(npu STREQUAL "virtual")
    # The virtual Ethos-U: same API and header name as the core driver.
    if(NOT TARGET ethosu_virtual)
      add_subdirectory("${root}/drivers/ethosu_virtual" "${CMAKE_BINARY_DIR}/ethosu_virtual")
    endif()
    _ethosu_kit_virtual_workspace(${target} "${gen}")
    set(lib ethosu_virtual)
    set(dir "${root}/drivers/ethosu_virtual")
  elseif(npu STREQUAL "driver")
    include("${root}/cmake/executorch.cmake")
    ethosu_kit_require_ethosu_driver(GENERATED_INCLUDE_DIR "${gen}")
    set(lib ethosu_kit_ethosu_driver)
    set(dir "${ETHOSU_DRIVER_ROOT}")
  endif()
  set(${out_lib} "${lib}" PARENT_SCOPE)
  set(${out_dir} "${dir}" PARENT_SCOPE)
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
    if(ARG_APP MATCHES "^(bringup|executor_runner|selftest)$")
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
  set(board_dir "${ETHOSU_KIT_BOARD_DIR}")
  if(NOT EXISTS "${board_dir}/board.c")
    message(FATAL_ERROR "ethosu_add_firmware: board glue ${board_dir}/board.c is missing "
                        "(board ${ETHOSU_KIT_BOARD}); a custom board needs board.c and board_glue.h")
  endif()

  add_executable(${ARG_TARGET}
    "${kit}/sdk/src/startup.c"
    "${kit}/sdk/src/system.c"
    "${kit}/sdk/src/platform.c"
    "${kit}/sdk/src/semihosting.c"
    "${kit}/sdk/src/syscalls.c"
    "${kit}/sdk/src/retarget_armclib.c"
    "${kit}/sdk/src/log.c"
    "${kit}/sdk/src/alloc.c"
    "${kit}/sdk/src/usage.c"
    "${kit}/sdk/src/semihosting_files.c"
    "${kit}/sdk/src/timing.c"
    "${kit}/sdk/src/kit_info.c"
    "${kit}/sdk/src/app_main.c"
    "${kit}/drivers/uart_cmsdk/uart_cmsdk.c"
    "${kit}/drivers/timer_systick/systick.c"
    "${board_dir}/board.c"
    "${gdir}/kit_buffers.c"
    "${gdir}/kit_network.S")
  set_target_properties(${ARG_TARGET} PROPERTIES SUFFIX ".elf")
  target_include_directories(${ARG_TARGET} PRIVATE
    "${kit}/sdk/include" "${kit}/drivers/uart_cmsdk" "${kit}/drivers/timer_systick"
    "${board_dir}" "${gdir}")
  target_compile_definitions(${ARG_TARGET} PRIVATE
    "KIT_QEMU_MACHINE=\"${ETHOSU_KIT_QEMU_MACHINE}\"")
  # Semihosting file I/O with the host (ethosu-kit run --inputs/-o): a BKPT that faults
  # on hardware without a debugger, so such images turn it off.
  if(NOT DEFINED ETHOSU_KIT_HOST_IO)
    set(ETHOSU_KIT_HOST_IO ON)
  endif()
  if(ETHOSU_KIT_HOST_IO)
    target_compile_definitions(${ARG_TARGET} PRIVATE KIT_HOST_IO=1)
  else()
    target_compile_definitions(${ARG_TARGET} PRIVATE KIT_HOST_IO=0)
  endif()
  # .incbin finds model.pte through the include path; rebuild when it changes.
  set_source_files_properties("${gdir}/kit_network.S" PROPERTIES OBJECT_DEPENDS "${gdir}/model.pte")
  # The NPU self-test's vectors, when the plan places them (gen --app selftest): in every
  # app's image, since the plan (and the linker script's checks) count them.
  # Method inputs compiled in (gen --inputs): placed by the plan, in every app's image.
  if(EXISTS "${gdir}/kit_input_data.S")
    target_sources(${ARG_TARGET} PRIVATE "${gdir}/kit_input_data.S")
    file(GLOB input_bins "${gdir}/kit_input_data_*.bin")
    set_source_files_properties("${gdir}/kit_input_data.S" PROPERTIES OBJECT_DEPENDS "${input_bins}")
  endif()
  if(EXISTS "${gdir}/kit_selftest_vectors.S")
    target_sources(${ARG_TARGET} PRIVATE "${gdir}/kit_selftest_vectors.S")
    set_source_files_properties("${gdir}/kit_selftest_vectors.S" PROPERTIES
      OBJECT_DEPENDS "${gdir}/kit_selftest_vectors.bin")
  endif()

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
    # --diag_error=L6314W: a scatter selector that matches no section (a kit buffer
    # missing from the link) is an error, not a warning: armlink's must-place.
    target_link_options(${ARG_TARGET} PRIVATE "--scatter=${ETHOSU_KIT_SCATTER_FILE}" "--map"
                        "--entry=Reset_Handler" "--strict" "--diag_error=L6314W")
    set_property(TARGET ${ARG_TARGET} APPEND PROPERTY LINK_DEPENDS "${ETHOSU_KIT_SCATTER_FILE}")
  else()
    # --orphan-handling=error: an input section no rule of the script places stops the
    # link, naming it (a silently placed section could land anywhere).
    target_link_options(${ARG_TARGET} PRIVATE "-T${ETHOSU_KIT_LINKER_SCRIPT}" -Wl,--gc-sections
                        -Wl,--orphan-handling=error "-Wl,-Map=$<TARGET_FILE:${ARG_TARGET}>.map")
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
  elseif(ARG_APP STREQUAL "selftest")
    if(NOT EXISTS "${gdir}/kit_selftest.h")
      message(FATAL_ERROR "ethosu_add_firmware: APP selftest needs the self-test's vectors in "
                          "${gdir}: generate with `gen-firmware --app selftest`, or build with "
                          "`ethosu-kit build DIR --app selftest`")
    endif()
    if(npu STREQUAL "none")
      message(FATAL_ERROR "ethosu_add_firmware: APP selftest runs the NPU: NPU driver or virtual, not none")
    endif()
    ethosu_kit_npu_library(${ARG_TARGET} "${gdir}" ${npu} npu_lib npu_dir)
    target_link_libraries(${ARG_TARGET} PRIVATE ${npu_lib})
    target_sources(${ARG_TARGET} PRIVATE "${kit}/apps/selftest/main.c")
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
endfunction()

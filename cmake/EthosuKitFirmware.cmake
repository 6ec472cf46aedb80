# The kit's CMake functions (docs/ARCHITECTURE.md, "CMake"):
#
#   ethosu_kit_generate(OUTPUT_DIR <dir> PTE <file> BOARD <board> [MODE <m>]
#                       [FAST_SCRATCH <n>] [APP <app>] [NPU driver|virtual|none])
#       runs `python -m ethosu_kit gen` at configure time (Python from find_package(Python3),
#       or ETHOSU_KIT_PYTHON); PTE and a BOARD path are relative to the caller's folder.
#
#   ethosu_add_firmware(TARGET <t> APP <bringup|executor_runner|selftest|folder>
#                       [GENERATED_DIR <dir>] | [PTE <file> BOARD <b> [MODE <m>] [FAST_SCRATCH <n>]]
#                       [NPU driver|virtual|none])
#       the kit's whole image: adds executable <t> (<t>.elf): the model (below), the kit's
#       start-up and main, linked with the generated linker script (scatter file for
#       armclang).
#
#   ethosu_add_model(<target> [PTE <file> BOARD <b> [MODE <m>] [FAST_SCRATCH <n>]] | [GENERATED_DIR <dir>]
#                    [APP bringup|executor_runner|selftest|<folder>] [NPU driver|virtual|none])
#       a team's own executable <target> gets the model: its buffers, network, pools, the
#       app (entry `int ethosu_kit_app_main(void)`, kit/app.h) and the SDK glue it needs,
#       as an OBJECT library <target>_ethosu_model; no start-up, no linker script, no
#       main. The team's linker script INCLUDEs kit_sections.ld (the generated folder is
#       on the link search path) and maps the board's region names (REGION_ALIAS); a
#       script without the INCLUDE fails the link naming it. memory_plan.json is copied
#       next to the executable so `ethosu-kit check-elf <target>.elf` proves it.
#
#   Both: the board's HAL is the kit's default for each hook of sdk/include/kit/hal.h, or
#       the board's own [port].sources for the hooks its [port].hooks names (docs/hal.md);
#       the board's [port].cmake, if any, is include()d last with ETHOSU_KIT_TARGET = the
#       executable. BOARD is a built-in name/alias, or a board folder / board.toml; a
#       relative path is relative to CMAKE_CURRENT_SOURCE_DIR (the caller's).
include_guard(GLOBAL)
# Cache (internal) so that the functions, which run in their caller's scope, see them
# even when the kit came in through add_subdirectory (a child scope).
get_filename_component(_dir "${CMAKE_CURRENT_LIST_DIR}" ABSOLUTE)
set(ETHOSU_KIT_CMAKE_DIR "${_dir}" CACHE INTERNAL "the ethosu-porting-kit cmake/ folder")
get_filename_component(_dir "${_dir}/.." ABSOLUTE)
set(ETHOSU_KIT_ROOT "${_dir}" CACHE INTERNAL "the ethosu-porting-kit root folder")
unset(_dir)

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
  cmake_parse_arguments(ARG "" "OUTPUT_DIR;PTE;BOARD;MODE;FAST_SCRATCH;APP;NPU" "" ${ARGN})
  foreach(required OUTPUT_DIR PTE BOARD)
    if(NOT ARG_${required})
      message(FATAL_ERROR "ethosu_kit_generate: ${required} is required")
    endif()
  endforeach()
  get_filename_component(pte "${ARG_PTE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  # A board given as a folder or board.toml path is the caller's, not the kit's: make it
  # absolute here (gen runs in the kit's codegen/ folder). Names (cs300) stay names.
  set(board "${ARG_BOARD}")
  get_filename_component(board_path "${ARG_BOARD}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(EXISTS "${board_path}" OR ARG_BOARD MATCHES "[/\\]|\\.toml$")
    set(board "${board_path}")  # a path even when it is wrong: gen's error then names it
  endif()
  if(NOT EXISTS "${pte}")
    message(FATAL_ERROR "ethosu_kit_generate: PTE ${pte} does not exist")
  endif()
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
  if(ARG_NPU)
    list(APPEND cmd --npu "${ARG_NPU}")
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
  if(IS_DIRECTORY "${board_path}")
    set(board_path "${board_path}/board.toml")
  endif()
  if(EXISTS "${board_path}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${board_path}")
  endif()
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
    # the library's own CMakeLists sizes its static array with the same variable: here the
    # glue hands the plan's buffer, so that array would be a second copy of the workspace
    # (and may not fit where .bss goes)
    foreach(prop COMPILE_DEFINITIONS INTERFACE_COMPILE_DEFINITIONS)
      get_target_property(_defs ethosu_virtual ${prop})
      if(_defs)
        list(FILTER _defs EXCLUDE REGEX "^ETHOSU_VIRTUAL_WORKSPACE_SIZE=")
        set_target_properties(ethosu_virtual PROPERTIES ${prop} "${_defs}")
      endif()
    endforeach()
  endif()
  target_compile_definitions(ethosu_virtual PRIVATE ETHOSU_VIRTUAL_WORKSPACE_SIZE=64)
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
    # a board drafted by new-board may not know where its NPU is yet: the driver at a
    # guessed address faults, with a guessed IRQ it waits forever
    set(unknown ${ETHOSU_KIT_BOARD_TODO})
    list(FILTER unknown INCLUDE REGEX "^npu\\.")
    if(unknown)
      list(JOIN unknown ", " unknown)
      message(FATAL_ERROR "ethosu-porting-kit: ${ETHOSU_KIT_BOARD_FILE}: ${unknown} still TODO, "
                          "and NPU driver needs them: write them in the board file and generate "
                          "again (or use NPU virtual)")
    endif()
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
    # C++ code (the executor_runner) needs libstdc++'s runtime (operator new/delete,
    # __cxa_* guards, __aeabi_atexit): the nano builds next to libc_nano, what
    # arm-none-eabi-g++ --specs=nano.specs links. Archives: nothing is pulled into a C app.
    set(cxx_libs "")
    foreach(lib IN ITEMS stdc++_nano supc++_nano)
      if(EXISTS "${libdir}/lib${lib}.a")
        list(APPEND cxx_libs ${lib})
      endif()
    endforeach()
    target_link_options(${target} PRIVATE -fuse-ld=lld -nostdlib "-L${libdir}")
    target_link_libraries(${target} PRIVATE
                          -Wl,--start-group ${cxx_libs} c_nano m "${libgcc}" -Wl,--end-group)
  elseif(toolchain STREQUAL "armclang")
    # armlink: the scatter file places everything; the Arm C library has its own startup hooks.
  else()
    message(FATAL_ERROR "ethosu_add_firmware: unknown toolchain '${toolchain}' (gcc, clang, armclang)")
  endif()
endfunction()

# The generated project of ethosu_add_firmware / ethosu_add_model: GENERATED_DIR, or
# generated at configure time from PTE and BOARD into <binary dir>/<default_name>.
# Sets <out> to the project folder and includes its kit_board.cmake (ETHOSU_KIT_* facts).
macro(_ethosu_kit_project fn default_name out)
  if(ARG_GENERATED_DIR)
    get_filename_component(${out} "${ARG_GENERATED_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(EXISTS "${${out}}/kit_board.cmake" AND NOT EXISTS "${${out}}/generated/kit_board.cmake")
      get_filename_component(${out} "${${out}}/.." ABSOLUTE)  # its generated/ folder was given
    endif()
  elseif(ARG_PTE AND ARG_BOARD)
    set(${out} "${CMAKE_CURRENT_BINARY_DIR}/${default_name}")
    set(_app_arg)
    if(ARG_APP MATCHES "^(bringup|executor_runner|selftest)$")
      set(_app_arg APP ${ARG_APP})
    endif()
    ethosu_kit_generate(OUTPUT_DIR "${${out}}" PTE "${ARG_PTE}" BOARD "${ARG_BOARD}"
                        MODE "${ARG_MODE}" FAST_SCRATCH "${ARG_FAST_SCRATCH}" NPU "${ARG_NPU}"
                        ${_app_arg})
  else()
    message(FATAL_ERROR "${fn}: give GENERATED_DIR, or PTE and BOARD")
  endif()
  if(NOT EXISTS "${${out}}/generated/kit_board.cmake")
    message(FATAL_ERROR "${fn}: ${${out}}/generated/kit_board.cmake is missing: "
                        "is ${${out}} a project made by gen-firmware?")
  endif()
  include("${${out}}/generated/kit_board.cmake")
endmacro()

# APP and NPU defaults and checks, shared by both functions.
macro(_ethosu_kit_app_npu fn)
  if(NOT ARG_APP)
    set(ARG_APP bringup)
  endif()
  if(NOT ARG_NPU)
    set(ARG_NPU driver)
  endif()
  if(NOT ARG_NPU MATCHES "^(driver|virtual|none)$")
    message(FATAL_ERROR "${fn}: NPU '${ARG_NPU}' is not driver, virtual or none")
  endif()
  # The NPU glue only with a driver: bring-up never touches the NPU (QEMU has none).
  if(ARG_APP STREQUAL "bringup")
    set(ARG_NPU none)
  endif()
endmacro()

function(_ethosu_kit_toolchain out)
  if(NOT CMAKE_CROSSCOMPILING)
    # Else the host compiler fails at build time on the board's -mcpu/-mthumb flags.
    message(FATAL_ERROR "ethosu-porting-kit: ${CMAKE_C_COMPILER} is the host's compiler: "
      "firmware needs a cross toolchain. Configure with -DCMAKE_TOOLCHAIN_FILE=<kit>/cmake/"
      "toolchain/arm-none-eabi-gcc.cmake (or clang.cmake, armclang.cmake), or your own "
      "toolchain file that sets CMAKE_SYSTEM_NAME (e.g. Generic)")
  endif()
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
  set(${out} "${toolchain}" PARENT_SCOPE)
endfunction()

# The HAL (sdk/include/kit/hal.h): for each hook, the kit's default for this board's
# data (from kit_board.cmake) unless the board's [port].hooks names it; a hook the data
# leaves without a default (console "custom", timer "custom") must be the board's.
function(_ethosu_kit_hal out_sources out_includes)
  set(sources)
  set(includes)
  foreach(hook IN LISTS ETHOSU_KIT_PORT_HOOKS)
    if(NOT hook IN_LIST ETHOSU_KIT_HAL_HOOKS)
      message(FATAL_ERROR "ethosu-porting-kit: board ${ETHOSU_KIT_BOARD} (${ETHOSU_KIT_BOARD_FILE}): "
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
      message(FATAL_ERROR "ethosu-porting-kit: board ${ETHOSU_KIT_BOARD} (${ETHOSU_KIT_BOARD_FILE}) "
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

# The model as an OBJECT library <lib>: the generated buffers and network, what the image
# was built for (.kit.info), the SDK glue, the board's HAL (the kit's defaults and the
# board's [port] sources) and the app (not the executor_runner, which goes on the executable:
# see ethosu_kit_add_executor_runner). No start-up, no main, no linker script.
function(_ethosu_kit_model_objects lib gen app npu toolchain)
  set(kit "${ETHOSU_KIT_ROOT}")
  set(gdir "${gen}/generated")
  _ethosu_kit_hal(hal_sources hal_includes)
  add_library(${lib} OBJECT
    "${kit}/sdk/src/system.c"
    "${kit}/sdk/src/platform.c"
    "${kit}/sdk/src/semihosting.c"
    "${kit}/sdk/src/console.c"
    "${kit}/sdk/src/log.c"
    "${kit}/sdk/src/app.c"
    "${kit}/sdk/src/alloc.c"
    "${kit}/sdk/src/usage.c"
    "${kit}/sdk/src/semihosting_files.c"
    "${kit}/sdk/src/timing.c"
    "${kit}/sdk/src/irq.c"
    "${kit}/sdk/src/kit_info.c"
    ${hal_sources}
    ${ETHOSU_KIT_PORT_SOURCES}
    "${gdir}/kit_buffers.c"
    "${gdir}/kit_network.S")
  target_include_directories(${lib} PUBLIC
    "${kit}/sdk/include" ${hal_includes} ${ETHOSU_KIT_PORT_INCLUDE_DIRS} "${gdir}")
  target_compile_definitions(${lib} PRIVATE "KIT_QEMU_MACHINE=\"${ETHOSU_KIT_QEMU_MACHINE}\"")
  # the app's name (APP's last part: bringup, selftest, executor_runner, an app folder's) in
  # .kit.info: `run --inputs/-o` refuses an app that takes no host IO before QEMU starts
  get_filename_component(app_name "${app}" NAME)
  target_compile_definitions(${lib} PRIVATE "KIT_APP_NAME=\"${app_name}\"")
  # Semihosting file I/O with the host (ethosu-kit run --inputs/-o): a BKPT that faults
  # on hardware without a debugger, so images for such boards turn it off.
  if(NOT DEFINED ETHOSU_KIT_HOST_IO OR ETHOSU_KIT_HOST_IO)
    target_compile_definitions(${lib} PRIVATE KIT_HOST_IO=1)
  else()
    target_compile_definitions(${lib} PRIVATE KIT_HOST_IO=0)
  endif()
  # .incbin finds model.pte through the include path; rebuild when it changes.
  # An image of several programs incbins each program's <name>.pte (ETHOSU_KIT_PTES).
  if(DEFINED ETHOSU_KIT_PTES)
    set(_kit_ptes ${ETHOSU_KIT_PTES})
  else()
    set(_kit_ptes "${gdir}/model.pte")
  endif()
  set_source_files_properties("${gdir}/kit_network.S" PROPERTIES OBJECT_DEPENDS "${_kit_ptes}")
  # Method inputs compiled in (gen --inputs): placed by the plan, in every app's image.
  if(EXISTS "${gdir}/kit_input_data.S")
    target_sources(${lib} PRIVATE "${gdir}/kit_input_data.S")
    file(GLOB input_bins "${gdir}/kit_input_data_*.bin")
    set_source_files_properties("${gdir}/kit_input_data.S" PROPERTIES OBJECT_DEPENDS "${input_bins}")
  endif()
  # Named external data (.ptd, docs/ptd.md): each placed file and the reader the apps
  # find its blocks with, when the plan places any.
  if(EXISTS "${gdir}/kit_ptd.S")
    target_sources(${lib} PRIVATE "${gdir}/kit_ptd.S" "${kit}/sdk/src/ptd.c")
    file(GLOB ptd_files "${gdir}/*.ptd")
    set_source_files_properties("${gdir}/kit_ptd.S" PROPERTIES OBJECT_DEPENDS "${ptd_files}")
  endif()
  # The NPU self-test's vectors, when the plan places them (gen --app selftest): in every
  # app's image, since the plan (and the linker script's checks) count them.
  if(EXISTS "${gdir}/kit_selftest_vectors.S")
    target_sources(${lib} PRIVATE "${gdir}/kit_selftest_vectors.S")
    set_source_files_properties("${gdir}/kit_selftest_vectors.S" PROPERTIES
      OBJECT_DEPENDS "${gdir}/kit_selftest_vectors.bin")
  endif()
  set(board_cpu_flags "")
  if(NOT ETHOSU_KIT_TOOLCHAIN_CPU_FLAGS AND NOT CMAKE_C_FLAGS MATCHES "-mcpu=|-march=|--cpu=")
    # Neither the kit's toolchain file nor the caller's flags name the CPU: the board's.
    string(TOUPPER "${toolchain}" tc_upper)
    set(board_cpu_flags ${ETHOSU_KIT_CPU_FLAGS_${tc_upper}})
    target_compile_options(${lib} PUBLIC ${ETHOSU_KIT_CPU_FLAGS_${tc_upper}})
    if(NOT toolchain STREQUAL "armclang")
      target_link_options(${lib} INTERFACE ${ETHOSU_KIT_CPU_FLAGS_${tc_upper}})
    endif()
  endif()
  target_compile_options(${lib} PRIVATE
    -ffunction-sections -fdata-sections
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Werror>)

  if(npu STREQUAL "none")
    target_sources(${lib} PRIVATE "${kit}/sdk/src/npu_none.c")
  else()
    target_sources(${lib} PRIVATE "${kit}/sdk/src/npu_ethosu.c")
  endif()
  if(NOT npu STREQUAL "none")
    # the Ethos-U core driver or the virtual NPU; npu_ethosu.c (here) is its glue
    ethosu_kit_npu_library(${lib} "${gdir}" ${npu} npu_lib npu_dir)
    target_link_libraries(${lib} PUBLIC ${npu_lib})
    if(board_cpu_flags AND TARGET ${npu_lib})
      # the NPU library is built in its own folder: the board's CPU flags too, or its
      # objects are for the compiler's default CPU and the link refuses them
      get_target_property(npu_lib_type ${npu_lib} TYPE)
      get_target_property(npu_lib_imported ${npu_lib} IMPORTED)
      if(NOT npu_lib_imported AND NOT npu_lib_type STREQUAL "INTERFACE_LIBRARY")
        target_compile_options(${npu_lib} PRIVATE ${board_cpu_flags})
      endif()
    endif()
  endif()
  if(app STREQUAL "selftest")
    if(NOT EXISTS "${gdir}/kit_selftest.h")
      message(FATAL_ERROR "ethosu-porting-kit: APP selftest needs the self-test's vectors in "
                          "${gdir}: generate with `gen-firmware --app selftest`, or build with "
                          "`ethosu-kit build DIR --app selftest`")
    endif()
    if(npu STREQUAL "none")
      message(FATAL_ERROR "ethosu-porting-kit: APP selftest runs the NPU: NPU driver or virtual, not none")
    endif()
  endif()

  if(app STREQUAL "executor_runner")
    # A plan holds the buffers of the app it was generated for: the self-test's has no
    # method pool or planned buffers, which would otherwise be an undefined reference.
    file(STRINGS "${gdir}/kit_memory_config.h" plan_app REGEX "^#define KIT_PLAN_APP ")
    file(STRINGS "${gdir}/kit_memory_config.h" no_pools REGEX "^#define KIT_PLAN_NO_RUNNER_POOLS")
    if(no_pools)
      string(REGEX REPLACE "^#define KIT_PLAN_APP " "" plan_app "${plan_app}")
      message(FATAL_ERROR "ethosu-porting-kit: APP executor_runner needs the runner's pools "
                          "(method_pool, planned buffers) and the memory plan in ${gdir} is "
                          "for app ${plan_app}, which has none: regenerate it with "
                          "`gen-firmware --app executor_runner` (ethosu_add_firmware/"
                          "ethosu_add_model: APP executor_runner)")
    endif()
    return()
  endif()
  if(IS_DIRECTORY "${kit}/apps/${app}")
    set(app_dir "${kit}/apps/${app}")
  else()
    get_filename_component(app_dir "${app}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  file(GLOB app_sources CONFIGURE_DEPENDS "${app_dir}/*.c" "${app_dir}/*.cpp" "${app_dir}/*.S")
  if(NOT app_sources)
    message(FATAL_ERROR "ethosu-porting-kit: APP '${app}' is not bringup, executor_runner, "
                        "an app of the kit's apps/ or a folder with .c/.cpp sources")
  endif()
  target_sources(${lib} PRIVATE ${app_sources})
  if(EXISTS "${app_dir}/app.cmake")
    # an app's own needs (libraries, the NPU library): include()d with lib, gen, npu set
    include("${app_dir}/app.cmake")
  endif()
endfunction()

# The board's [port].cmake, include()d with ETHOSU_KIT_TARGET = the executable (e.g.
# target_compile_definitions(${ETHOSU_KIT_TARGET} PRIVATE ...)).
macro(_ethosu_kit_port_cmake target)
  if(ETHOSU_KIT_PORT_CMAKE)
    set(ETHOSU_KIT_TARGET ${target})
    include("${ETHOSU_KIT_PORT_CMAKE}")
  endif()
endmacro()

# What ethosu_add_firmware and ethosu_add_model end with once the target links: the
# executor_runner's own sources (when it is the app), the plan beside the ELF, the
# board's [port].cmake. A macro, like _ethosu_kit_port_cmake: the port file sees the
# caller's variables.
macro(_ethosu_kit_finish_target target gen app npu)
  if("${app}" STREQUAL "executor_runner")
    include("${ETHOSU_KIT_ROOT}/apps/executor_runner/executor_runner.cmake")
    ethosu_kit_add_executor_runner(${target} "${gen}/generated" NPU ${npu})
  endif()
  _ethosu_kit_plan_beside(${target} "${gen}")
  _ethosu_kit_port_cmake(${target})
endmacro()

function(ethosu_add_firmware)
  cmake_parse_arguments(ARG "" "TARGET;APP;GENERATED_DIR;PTE;BOARD;MODE;FAST_SCRATCH;NPU" "" ${ARGN})
  if(NOT ARG_TARGET)
    message(FATAL_ERROR "ethosu_add_firmware: TARGET is required")
  endif()
  _ethosu_kit_app_npu(ethosu_add_firmware)
  _ethosu_kit_project("ethosu_add_firmware(${ARG_TARGET})" "${ARG_TARGET}_kit" gen)
  set(gdir "${gen}/generated")
  _ethosu_kit_toolchain(toolchain)
  set(kit "${ETHOSU_KIT_ROOT}")

  # The whole image: the kit's start-up, main and C-library glue around the model.
  add_executable(${ARG_TARGET}
    "${kit}/sdk/src/startup.c"
    "${kit}/sdk/src/app_main.c"
    "${kit}/sdk/src/syscalls.c"
    "${kit}/sdk/src/retarget_armclib.c")
  set_target_properties(${ARG_TARGET} PROPERTIES SUFFIX ".elf")
  _ethosu_kit_model_objects(${ARG_TARGET}_model "${gen}" "${ARG_APP}" "${ARG_NPU}" "${toolchain}")
  target_link_libraries(${ARG_TARGET} PRIVATE ${ARG_TARGET}_model)
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
    # link, naming it (a silently placed section could land anywhere). -n (NMAGIC): no
    # page-aligned segments, so the ELF and program headers are never mapped into a load
    # segment (they would be written into the target's memory, in RAM or flash).
    target_link_options(${ARG_TARGET} PRIVATE "-T${ETHOSU_KIT_LINKER_SCRIPT}" -Wl,--gc-sections
                        -Wl,--orphan-handling=error -Wl,-n
                        "-Wl,-Map=$<TARGET_FILE:${ARG_TARGET}>.map")
    set_property(TARGET ${ARG_TARGET} APPEND PROPERTY LINK_DEPENDS "${ETHOSU_KIT_LINKER_SCRIPT}")
  endif()
  _ethosu_kit_link_runtime(${ARG_TARGET} "${toolchain}")

  _ethosu_kit_finish_target(${ARG_TARGET} "${gen}" "${ARG_APP}" "${ARG_NPU}")
endfunction()

function(ethosu_add_model target)
  cmake_parse_arguments(ARG "" "APP;GENERATED_DIR;PTE;BOARD;MODE;FAST_SCRATCH;NPU" "" ${ARGN})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "ethosu_add_model: ${target} is not a target: add_executable(${target} ...) "
                        "first; the model is added to it")
  endif()
  _ethosu_kit_app_npu(ethosu_add_model)
  _ethosu_kit_project("ethosu_add_model(${target})" "${target}_ethosu_model" gen)
  set(gdir "${gen}/generated")
  _ethosu_kit_toolchain(toolchain)

  set(lib ${target}_ethosu_model)
  _ethosu_kit_model_objects(${lib} "${gen}" "${ARG_APP}" "${ARG_NPU}" "${toolchain}")
  target_link_libraries(${target} PRIVATE ${lib})
  if(toolchain STREQUAL "armclang")
    # The team's scatter file #includes kit_sections.sct (kit_regions.h beside it).
    target_link_options(${target} PRIVATE "--diag_error=L6314W")
  else()
    # `INCLUDE kit_sections.ld` resolves through the search path; kit_check.ld (an
    # implicit linker script: assertions only) fails the link when the team's script
    # does not include it.
    target_link_options(${target} PRIVATE "-L${gdir}" "${gdir}/kit_check.ld")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS
                 "${gdir}/kit_sections.ld" "${gdir}/kit_check.ld")
  endif()
  _ethosu_kit_finish_target(${target} "${gen}" "${ARG_APP}" "${ARG_NPU}")
endfunction()

# check-elf and run find the plan beside the ELF (the target's output folder): without it
# they cannot check the ELF, nor run an image of a board folder (not a built-in board).
function(_ethosu_kit_plan_beside target gen)
  get_target_property(out_dir ${target} RUNTIME_OUTPUT_DIRECTORY)
  if(NOT out_dir)
    set(out_dir "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  file(COPY "${gen}/memory_plan.json" DESTINATION "${out_dir}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${gen}/memory_plan.json")
  # ... and as <elf name>.memory_plan.json, which check-elf and run prefer: several
  # executables in one output folder share the plain name (the last one configured).
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${gen}/memory_plan.json"
            "$<TARGET_FILE_DIR:${target}>/$<TARGET_FILE_BASE_NAME:${target}>.memory_plan.json"
    VERBATIM)
endfunction()

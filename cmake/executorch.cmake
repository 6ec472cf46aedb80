# The sources the kit does not ship: ExecuTorch, the Ethos-U core driver, CMSIS Core.
#
# They come from the user's own checkouts (docs/executorch.md says how to get them):
#   EXECUTORCH_ROOT     an ExecuTorch source tree with its submodules, in a folder
#                       named `executorch` (or an installed `executorch` CMake
#                       package found through executorch_DIR / CMAKE_PREFIX_PATH)
#   ETHOSU_DRIVER_ROOT  the Ethos-U core driver 1.x (include/ethosu_driver.h, src/)
#   CMSIS_ROOT          CMSIS 6 (CMSIS/Core/Include/cmsis_compiler.h)
# Each may be a CMake cache variable or an environment variable. A missing one stops
# the configure step with a message naming it: nothing is downloaded at build time.
include_guard(GLOBAL)

set(ETHOSU_KIT_EXECUTORCH_VERSION "1.5.1" CACHE INTERNAL "the ExecuTorch release the kit pins")
set(_ETHOSU_KIT_EXTERNAL_DOC "docs/executorch.md in the ethosu-porting-kit")

# A path setting from the cache, else the environment; empty when neither.
function(_ethosu_kit_external_path var)
    if(NOT ${var} AND DEFINED ENV{${var}})
        set(${var} "$ENV{${var}}" CACHE PATH "${ARGN}" FORCE)
    endif()
    if(${var})
        get_filename_component(_abs "${${var}}" ABSOLUTE)
        set(${var} "${_abs}" PARENT_SCOPE)
    endif()
endfunction()

function(_ethosu_kit_missing var what)
    string(JOIN "" how ${ARGN})  # the hint may come in several strings
    message(FATAL_ERROR
        "ethosu-porting-kit: ${what} not found (${var}=\"${${var}}\").\n"
        "${how}\n"
        "Then configure again with -D${var}=<path> (or export ${var}). "
        "Steps: ${_ETHOSU_KIT_EXTERNAL_DOC}.")
endfunction()

# The checkout `var` (cache, else environment; DOC: its cache text) holding every one of
# FILES (paths in it), else the configure step stops naming WHAT, with HINT (several
# strings, joined) on how to get it.
function(_ethosu_kit_require_checkout var)
    cmake_parse_arguments(ARG "" "DOC;WHAT" "FILES;HINT" ${ARGN})
    _ethosu_kit_external_path(${var} "${ARG_DOC}")
    set(_complete TRUE)
    foreach(_file IN LISTS ARG_FILES)
        if(NOT ${var} OR NOT EXISTS "${${var}}/${_file}")
            set(_complete FALSE)
        endif()
    endforeach()
    if(NOT _complete)
        _ethosu_kit_missing(${var} "${ARG_WHAT}" ${ARG_HINT})
    endif()
    set(${var} "${${var}}" PARENT_SCOPE)
endfunction()

# CMSIS Core headers -> INTERFACE target ethosu_kit_cmsis_core.
function(ethosu_kit_require_cmsis)
    if(TARGET ethosu_kit_cmsis_core)
        return()
    endif()
    _ethosu_kit_external_path(CMSIS_ROOT "CMSIS 6 checkout (CMSIS Core headers)")
    set(_inc "")
    foreach(_cand CMSIS/Core/Include Core/Include Include .)
        if(CMSIS_ROOT AND EXISTS "${CMSIS_ROOT}/${_cand}/cmsis_compiler.h")
            set(_inc "${CMSIS_ROOT}/${_cand}")
            break()
        endif()
    endforeach()
    if(NOT _inc)
        _ethosu_kit_missing(CMSIS_ROOT "CMSIS Core (cmsis_compiler.h)"
            "Get CMSIS 6: git clone https://github.com/ARM-software/CMSIS_6 (any 6.x release).")
    endif()
    add_library(ethosu_kit_cmsis_core INTERFACE)
    target_include_directories(ethosu_kit_cmsis_core SYSTEM INTERFACE "${_inc}")
    message(STATUS "ethosu-porting-kit: CMSIS Core from ${_inc}")
endfunction()

# The Ethos-U core driver -> static library ethosu_kit_ethosu_driver, built for the
# board's NPU (ETHOSU_KIT_NPU_KIND, ETHOSU_KIT_NPU_MACS from kit_board.cmake) with the
# memory mode's QCONFIG/REGIONCFG taken from the generated kit_board_config.h.
function(ethosu_kit_require_ethosu_driver)
    cmake_parse_arguments(ARG "" "GENERATED_INCLUDE_DIR" "" ${ARGN})
    if(TARGET ethosu_kit_ethosu_driver)
        return()
    endif()
    _ethosu_kit_require_checkout(ETHOSU_DRIVER_ROOT
        DOC "Ethos-U core driver 1.x checkout"
        WHAT "the Ethos-U core driver 1.x (include/ethosu_driver.h)"
        FILES include/ethosu_driver.h src/ethosu_driver.c
        HINT "Get it: git clone https://gitlab.arm.com/artificial-intelligence/ethos-u/ethos-u-core-driver "
            "(a 1.x tag), or the same driver as Zephyr packages it: "
            "git clone https://github.com/zephyrproject-rtos/hal_ethos_u. "
            "${ETHOSU_KIT_DRIVER_HINT}")
    ethosu_kit_require_cmsis()

    if(NOT ETHOSU_KIT_NPU_KIND)
        message(FATAL_ERROR "ethosu-porting-kit: ETHOSU_KIT_NPU_KIND is not set "
            "(ethos-u55, ethos-u65 or ethos-u85; the generated kit_board.cmake sets it)")
    endif()
    string(TOLOWER "${ETHOSU_KIT_NPU_KIND}" _arch)
    string(REGEX REPLACE "^ethos-" "" _arch "${_arch}")
    if(_arch STREQUAL "u55" OR _arch STREQUAL "u65")
        set(_device src/ethosu_device_u55_u65.c)
    elseif(_arch STREQUAL "u85")
        set(_device src/ethosu_device_u85.c)
    else()
        message(FATAL_ERROR "ethosu-porting-kit: ETHOSU_KIT_NPU_KIND=${ETHOSU_KIT_NPU_KIND} "
            "is not an Ethos-U the core driver knows (ethos-u55, ethos-u65, ethos-u85)")
    endif()
    string(TOUPPER "${_arch}" _ARCH)
    set(_macs "${ETHOSU_KIT_NPU_MACS}")
    if(NOT _macs)
        set(_macs 128)
    endif()

    set(_srcs src/ethosu_driver.c src/ethosu_pmu.c ${_device})
    list(TRANSFORM _srcs PREPEND "${ETHOSU_DRIVER_ROOT}/")
    add_library(ethosu_kit_ethosu_driver STATIC ${_srcs})
    target_include_directories(ethosu_kit_ethosu_driver
        PUBLIC "${ETHOSU_DRIVER_ROOT}/include" PRIVATE "${ETHOSU_DRIVER_ROOT}/src")
    target_link_libraries(ethosu_kit_ethosu_driver PUBLIC ethosu_kit_cmsis_core)
    target_compile_definitions(ethosu_kit_ethosu_driver
        PUBLIC ETHOSU ETHOSU_ARCH=${_arch} ETHOS${_ARCH} ETHOSU_MACS=${_macs}
        PRIVATE ETHOSU_LOG_SEVERITY=1 ETHOSU_LOG_ENABLE=1)
    # The NPU's region and AXI configuration for the memory mode is one fact of the
    # plan, written once into kit_board_config.h; the driver reads NPU_* macros.
    set(_cfg "${ARG_GENERATED_INCLUDE_DIR}/kit_board_config.h")
    if(ARG_GENERATED_INCLUDE_DIR AND EXISTS "${_cfg}")
        target_compile_options(ethosu_kit_ethosu_driver PRIVATE
            "SHELL:-include \"${_cfg}\"")
        set(_defs NPU_QCONFIG=KIT_NPU_QCONFIG)
        foreach(_i RANGE 7)
            list(APPEND _defs NPU_REGIONCFG_${_i}=KIT_NPU_REGIONCFG_${_i})
        endforeach()
        target_compile_definitions(ethosu_kit_ethosu_driver PRIVATE ${_defs})
    else()
        message(WARNING "ethosu-porting-kit: no kit_board_config.h given: the Ethos-U "
            "driver keeps its default QCONFIG/REGIONCFG, which fit Shared_Sram only")
    endif()
    # Its error log (fprintf to stderr) to the kit console: newlib's stdio would take
    # its FILEs from the heap on the first error (sdk/include/kit/driver_log.h).
    get_filename_component(_kit "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/.." ABSOLUTE)
    target_compile_options(ethosu_kit_ethosu_driver PRIVATE
        "SHELL:-include \"${_kit}/sdk/include/kit/driver_log.h\"")
    # Third-party code: our -Werror is not its contract.
    target_compile_options(ethosu_kit_ethosu_driver PRIVATE -Wno-error)
    message(STATUS "ethosu-porting-kit: Ethos-U core driver from ${ETHOSU_DRIVER_ROOT} (${_arch}, ${_macs} MACs)")
endfunction()

# flatc from the executorch wheel (the build needs one; nothing is downloaded).
function(_ethosu_kit_find_flatc out)
    if(FLATC_EXECUTABLE AND EXISTS "${FLATC_EXECUTABLE}")
        set(${out} "${FLATC_EXECUTABLE}" PARENT_SCOPE)
        return()
    endif()
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
        execute_process(
            COMMAND "${Python3_EXECUTABLE}" -c
                "import importlib.util,pathlib;s=importlib.util.find_spec('executorch');print(pathlib.Path(list(s.submodule_search_locations)[0],'data','bin','flatc'))"
            OUTPUT_VARIABLE _flatc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
        if(_flatc AND EXISTS "${_flatc}")
            set(${out} "${_flatc}" PARENT_SCOPE)
            return()
        endif()
    endif()
    find_program(_flatc_prog flatc)
    if(_flatc_prog)
        set(${out} "${_flatc_prog}" PARENT_SCOPE)
        return()
    endif()
    message(FATAL_ERROR "ethosu-porting-kit: no flatc found: pip install executorch==${ETHOSU_KIT_EXECUTORCH_VERSION} "
        "(its wheel ships data/bin/flatc) or pass -DFLATC_EXECUTABLE=<flatc>")
endfunction()

function(_ethosu_kit_set_default var value)
    if(NOT DEFINED ${var})
        set(${var} "${value}" CACHE STRING "set by ethosu-porting-kit" FORCE)
    endif()
endfunction()

# ExecuTorch: the runtime core, prim ops, kernels and (WITH_ETHOSU) the Ethos-U
# delegate, built from EXECUTORCH_ROOT for this project's toolchain, or taken from
# an installed `executorch` package.
function(ethosu_kit_require_executorch)
    cmake_parse_arguments(ARG "WITH_ETHOSU" "MAX_KERNELS;DRIVER_DIR" "" ${ARGN})
    if(TARGET executorch_core)
        return()
    endif()
    _ethosu_kit_external_path(EXECUTORCH_ROOT "ExecuTorch source tree (folder named executorch)")
    if(NOT EXECUTORCH_ROOT)
        find_package(executorch CONFIG QUIET)
        if(executorch_FOUND AND executorch_DIR MATCHES "site-packages|dist-packages")
            message(FATAL_ERROR "ethosu-porting-kit: found the executorch pip wheel's CMake "
                "package (${executorch_DIR}): it is built for the host, not for Cortex-M. "
                "Set EXECUTORCH_ROOT to an ExecuTorch source tree (${_ETHOSU_KIT_EXTERNAL_DOC}).")
        endif()
        if(executorch_FOUND)
            message(STATUS "ethosu-porting-kit: ExecuTorch package from ${executorch_DIR}")
            return()
        endif()
    endif()
    # the path was resolved above: DOC has nothing left to set
    _ethosu_kit_require_checkout(EXECUTORCH_ROOT
        WHAT "the ExecuTorch source tree"
        FILES CMakeLists.txt runtime/executor/program.h
        HINT "Get ExecuTorch v${ETHOSU_KIT_EXECUTORCH_VERSION} (the version of the pip package): "
            "git clone -b v${ETHOSU_KIT_EXECUTORCH_VERSION} https://github.com/pytorch/executorch && "
            "cd executorch && git submodule update --init --recursive, "
            "or point executorch_DIR at an installed ExecuTorch CMake package.")
    get_filename_component(_leaf "${EXECUTORCH_ROOT}" NAME)
    if(NOT _leaf STREQUAL "executorch")
        message(FATAL_ERROR "ethosu-porting-kit: EXECUTORCH_ROOT=${EXECUTORCH_ROOT} must be a folder "
            "named `executorch` (its sources include <executorch/...> from the parent folder); "
            "rename it or use a symlink named executorch")
    endif()
    set(_missing "")
    foreach(_sub third-party/flatbuffers third-party/flatcc third-party/json
                 third-party/gflags backends/xnnpack/third-party/FXdiv)
        if(NOT EXISTS "${EXECUTORCH_ROOT}/${_sub}/CMakeLists.txt")
            list(APPEND _missing "${_sub}")
        endif()
    endforeach()
    if(_missing)
        string(REPLACE ";" " " _missing_text "${_missing}")
        message(FATAL_ERROR "ethosu-porting-kit: ExecuTorch submodules missing in ${EXECUTORCH_ROOT}: "
            "${_missing_text}. Run: git -C ${EXECUTORCH_ROOT} submodule update --init ${_missing_text}")
    endif()

    _ethosu_kit_find_flatc(_flatc)
    set(FLATC_EXECUTABLE "${_flatc}" CACHE FILEPATH "flatc for ExecuTorch's schema headers" FORCE)

    # Upstream's bare-metal preset, minus what needs a download (Cortex-M/CMSIS-NN
    # kernels, Ethos-U content fetch) or a file system (data loaders, runner util).
    _ethosu_kit_set_default(EXECUTORCH_BUILD_PRESET_FILE "${EXECUTORCH_ROOT}/tools/cmake/preset/arm_baremetal.cmake")
    _ethosu_kit_set_default(EXECUTORCH_BUILD_CORTEX_M OFF)
    _ethosu_kit_set_default(EXECUTORCH_BUILD_EXTENSION_RUNNER_UTIL OFF)
    _ethosu_kit_set_default(EXECUTORCH_BUILD_KERNELS_QUANTIZED ON)
    _ethosu_kit_set_default(EXECUTORCH_BUILD_PTHREADPOOL OFF)
    _ethosu_kit_set_default(EXECUTORCH_BUILD_CPUINFO OFF)
    _ethosu_kit_set_default(EXECUTORCH_PAL_DEFAULT minimal)
    _ethosu_kit_set_default(EXECUTORCH_ENABLE_LOGGING ON)
    _ethosu_kit_set_default(EXECUTORCH_BAREMETAL_SKIP_INSTALL ON)
    _ethosu_kit_set_default(FETCH_ETHOS_U_CONTENT OFF)
    set(EXECUTORCH_BUILD_ARM_BAREMETAL ${ARG_WITH_ETHOSU} CACHE BOOL "set by ethosu-porting-kit" FORCE)
    if(ARG_WITH_ETHOSU)
        # The delegate looks for the driver headers under an Ethos-U SDK layout;
        # give it one made of links to the user's driver, not a download.
        set(_sdk "${CMAKE_BINARY_DIR}/ethosu_kit_ethos_sdk")
        file(MAKE_DIRECTORY "${_sdk}/core_platform" "${_sdk}/core_software")
        set(_driver "${ARG_DRIVER_DIR}")
        if(NOT _driver)
            set(_driver "${ETHOSU_DRIVER_ROOT}")
        endif()
        file(CREATE_LINK "${_driver}" "${_sdk}/core_software/core_driver" SYMBOLIC)
        set(ETHOS_SDK_PATH "${_sdk}" CACHE PATH "set by ethosu-porting-kit" FORCE)
    endif()
    set(CMAKE_SKIP_INSTALL_RULES ON)
    # ExecuTorch adds -fPIC to the PUBLIC options of executorch_core unless this is
    # defined OFF; it would then reach the firmware's own sources, and a PIC reset
    # handler reads the copy table through a GOT that is not copied yet.
    set(CMAKE_POSITION_INDEPENDENT_CODE OFF)
    # The kernel table is a static array of MAX_KERNEL_NUM slots (upstream default
    # 2000, 24 KB of RAM); the runner prints how many it registered.
    if(NOT MAX_KERNEL_NUM AND ARG_MAX_KERNELS)
        set(MAX_KERNEL_NUM ${ARG_MAX_KERNELS})
    endif()
    add_subdirectory("${EXECUTORCH_ROOT}" "${CMAKE_BINARY_DIR}/executorch" EXCLUDE_FROM_ALL)
    # ExecuTorch exports `ethosu_core_driver` in its install set even when install
    # rules are skipped, and CMake then wants everything it links exported too.
    if(TARGET ethosu_core_driver)
        get_target_property(_npu_libs ethosu_core_driver INTERFACE_LINK_LIBRARIES)
        foreach(_lib IN LISTS _npu_libs)
            if(TARGET ${_lib})
                get_target_property(_deps ${_lib} INTERFACE_LINK_LIBRARIES)
                foreach(_dep IN LISTS _deps)
                    if(TARGET ${_dep})
                        install(TARGETS ${_dep} EXPORT ExecuTorchTargets)
                    endif()
                endforeach()
                install(TARGETS ${_lib} EXPORT ExecuTorchTargets)
            endif()
        endforeach()
    endif()
    message(STATUS "ethosu-porting-kit: ExecuTorch from ${EXECUTORCH_ROOT}")
endfunction()

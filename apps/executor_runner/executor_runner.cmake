# The executor_runner app: what ethosu_add_firmware(APP executor_runner) adds to the
# firmware executable it created (board glue, SDK, generated buffers, linker script).
#
#   ethosu_kit_add_executor_runner(<target> <generated_dir> [NPU driver|virtual|none])
#
# <generated_dir> is the generated project (its generated/ folder is also accepted).
# Only the kernels the model needs are registered: the operators of
# generated/kit_operators.txt, through ExecuTorch's own selective-build functions
# (tools/cmake/Codegen.cmake: gen_selected_ops, generate_bindings_for_kernels,
# gen_operators_lib).
include_guard(GLOBAL)

get_filename_component(_ETHOSU_KIT_RUNNER_DIR "${CMAKE_CURRENT_LIST_DIR}" ABSOLUTE)
get_filename_component(_ETHOSU_KIT_ROOT "${_ETHOSU_KIT_RUNNER_DIR}/../.." ABSOLUTE)
include("${_ETHOSU_KIT_ROOT}/cmake/executorch.cmake")
include("${_ETHOSU_KIT_ROOT}/cmake/EthosuKitFirmware.cmake") # _ethosu_kit_python

# The operators ExecuTorch's primitive-op library registers (`aten::sym_size.int`,
# `executorch_prim::add.Scalar`, ...: what the emitter writes for dynamic shapes and
# control flow), read from the checkout's kernels/prim_ops/register_prim_ops.cpp so they
# follow its version. Empty when the source cannot be read.
function(_ethosu_kit_prim_op_names et_root out)
    set(_names "")
    set(_src "${et_root}/kernels/prim_ops/register_prim_ops.cpp")
    if(EXISTS "${_src}")
        file(READ "${_src}" _text)
        string(REGEX MATCHALL "Kernel\\([ \t\r\n]*\"[A-Za-z0-9_:.]+\"" _calls "${_text}")
        foreach(_call IN LISTS _calls)
            string(REGEX REPLACE "^Kernel\\([ \t\r\n]*\"([^\"]+)\"$" "\\1" _name "${_call}")
            list(APPEND _names "${_name}")
        endforeach()
    endif()
    set(${out} "${_names}" PARENT_SCOPE)
endfunction()

# Operators of kit_operators.txt (one per line, `#` comments: after an operator, the
# programs that call it), split by the library that implements them: a primitive op
# (one of `prim_names`, or any `executorch_prim::`) is ExecuTorch's prim-op library's,
# not a kernel library's.
function(_ethosu_kit_read_operators file prim_names out_portable out_quantized out_prim)
    set(_portable "")
    set(_quantized "")
    set(_prim "")
    if(EXISTS "${file}")
        file(STRINGS "${file}" _lines)
        foreach(_line IN LISTS _lines)
            string(REGEX REPLACE "#.*$" "" _op "${_line}")
            string(STRIP "${_op}" _op)
            if(_op STREQUAL "")
                continue()
            endif()
            if(_op IN_LIST prim_names OR _op MATCHES "^executorch_prim::")
                list(APPEND _prim "${_op}")
            elseif(_op MATCHES "^aten::")
                list(APPEND _portable "${_op}")
            elseif(_op MATCHES "^quantized_decomposed::")
                list(APPEND _quantized "${_op}")
            else()
                message(FATAL_ERROR "ethosu-porting-kit: ${file}: operator `${_op}` has no kernel "
                    "library the kit builds (aten:: -> portable, quantized_decomposed:: -> "
                    "quantized, ExecuTorch's primitive ops -> prim ops); lower the model so "
                    "the operator is delegated, or add its kernel library to the firmware")
            endif()
        endforeach()
    endif()
    set(${out_portable} "${_portable}" PARENT_SCOPE)
    set(${out_quantized} "${_quantized}" PARENT_SCOPE)
    set(${out_prim} "${_prim}" PARENT_SCOPE)
endfunction()

# The operators of `ops` that `yaml` (a kernel library's registration list in the
# checkout) has no kernel for: portable's functions.yaml lists `- op: <name>.<overload>`
# (namespace aten; a few `- func: <name>.<overload>(`, also aten), quantized.yaml `- func: <namespace>::<name>.<overload>(<schema>`.
# ExecuTorch's selective build skips a selected operator its yaml lacks without a word,
# so without this the firmware builds and its method load fails ("Missing operator").
# A tree that links a kernel of its own for one lists it in ETHOSU_KIT_OWN_KERNELS.
function(_ethosu_kit_missing_kernels yaml ops out)
    set(_missing "")
    if(ops)
        file(STRINGS "${yaml}" _entries REGEX "^- (op|func):")
        set(_have "")
        foreach(_entry IN LISTS _entries)
            string(REGEX REPLACE "^- op:[ \t]*([A-Za-z0-9_.]+).*$" "aten::\\1" _entry "${_entry}")
            string(REGEX REPLACE "^- func:[ \t]*([A-Za-z0-9_:.]+)\\(.*$" "\\1" _entry "${_entry}")
            # portable also writes a few aten operators as `- func: <name>.<overload>(`
            # (the bitwise shifts), without the namespace: that one is aten
            if(NOT _entry MATCHES "::")
                set(_entry "aten::${_entry}")
            endif()
            list(APPEND _have "${_entry}")
        endforeach()
        foreach(_op IN LISTS ops)
            if(NOT _op IN_LIST _have AND NOT _op IN_LIST ETHOSU_KIT_OWN_KERNELS)
                list(APPEND _missing "${_op}")
            endif()
        endforeach()
    endif()
    set(${out} "${_missing}" PARENT_SCOPE)
endfunction()

# Stop the configure step when the checkout has no kernel for an operator of
# kit_operators.txt, naming each with the programs that call it (the comment after it
# in an image of several programs), before anything is compiled.
function(_ethosu_kit_require_kernels file et_root portable quantized)
    set(_portable_yaml "${et_root}/kernels/portable/functions.yaml")
    set(_quantized_yaml "${et_root}/kernels/quantized/quantized.yaml")
    if(NOT EXISTS "${_portable_yaml}" OR NOT EXISTS "${_quantized_yaml}")
        return() # not a source tree: the selective build's own check names what is missing
    endif()
    _ethosu_kit_missing_kernels("${_portable_yaml}" "${portable}" _missing)
    _ethosu_kit_missing_kernels("${_quantized_yaml}" "${quantized}" _missing_q)
    list(APPEND _missing ${_missing_q})
    if(NOT _missing)
        return()
    endif()
    file(STRINGS "${file}" _lines)
    set(_named "")
    foreach(_op IN LISTS _missing)
        set(_who "the program, generated/model.pte")
        foreach(_line IN LISTS _lines)
            if(_line MATCHES "^[ \t]*([^ \t#]+)[ \t]*#[ \t]*(.*[^ \t])[ \t]*$"
                    AND CMAKE_MATCH_1 STREQUAL _op)
                set(_who "program ${CMAKE_MATCH_2}")
            endif()
        endforeach()
        list(APPEND _named "${_op} (${_who})")
    endforeach()
    list(JOIN _named ", " _named)
    message(FATAL_ERROR "ethosu-porting-kit: no kernel in ExecuTorch at ${et_root} for "
        "${_named}: its portable kernels (kernels/portable/functions.yaml) and quantized "
        "kernels (kernels/quantized/quantized.yaml) have none, and a method calling it "
        "would not load (\"Missing operator\"); lower the model so the operator is "
        "delegated to the Ethos-U or replaced by one with a kernel, or link a kernel of "
        "your own and list the operator in -DETHOSU_KIT_OWN_KERNELS (docs/executorch.md)")
endfunction()

# ExecuTorch's `executorch` library is `executorch_core` + its ~30 primitive ops,
# registered whole in a static constructor: a table of them in .data and as many
# kernel-table slots (~0.7 KiB of RAM in 1.5). Most programs use none (the emitter
# writes them for dynamic shapes and control flow only), so they link the core alone
# (`out_lib` executorch_core, `out_n_prim` 0 slots). A program that uses one links them
# all, and so does every program when the names are unknown (the source could not be
# read: 64 slots). A prim op missing all the same fails the method load by name
# ("Missing operator", exit code 3), never silently.
function(_ethosu_kit_runtime_library prim_names prim_ops out_lib out_n_prim)
    if(prim_ops OR NOT prim_names)
        list(LENGTH prim_names _n)
        if(_n EQUAL 0)
            set(_n 64)
        endif()
        set(${out_lib} executorch PARENT_SCOPE)
        set(${out_n_prim} ${_n} PARENT_SCOPE)
    else()
        set(${out_lib} executorch_core PARENT_SCOPE)
        set(${out_n_prim} 0 PARENT_SCOPE)
    endif()
endfunction()

# One selective registration library over an upstream kernel library.
function(_ethosu_kit_selected_ops lib ops yaml_kind yaml kernel_lib)
    list(JOIN ops "," _root_ops)
    gen_selected_ops(LIB_NAME "${lib}" ROOT_OPS "${_root_ops}")
    generate_bindings_for_kernels(LIB_NAME "${lib}" ${yaml_kind} "${yaml}")
    # Linked whole by gen_operators_lib: registration is in static constructors.
    gen_operators_lib(LIB_NAME "${lib}" KERNEL_LIBS ${kernel_lib} DEPS executorch_core)
endfunction()

# The portable kernels of `ops` only: upstream's portable_kernels compiles all ~180
# kernel sources whatever the model uses. Each `aten::<name>.<overload>` kernel lives
# in kernels/portable/cpu/op_<name>.cpp; when one is not there (an op sharing
# another's file), fall back to the whole library. ETHOSU_KIT_ALL_PORTABLE_KERNELS=ON
# forces the fallback.
function(_ethosu_kit_portable_kernel_lib lib ops out_lib)
    set(${out_lib} portable_kernels PARENT_SCOPE)
    if(ETHOSU_KIT_ALL_PORTABLE_KERNELS)
        return()
    endif()
    set(_srcs "")
    foreach(_op IN LISTS ops)
        string(REGEX REPLACE "^aten::([A-Za-z0-9_]+).*$" "\\1" _name "${_op}")
        set(_src "${EXECUTORCH_ROOT}/kernels/portable/cpu/op_${_name}.cpp")
        if(NOT EXISTS "${_src}")
            message(STATUS "ethosu-porting-kit: no ${_src} for ${_op}: compiling all portable kernels")
            return()
        endif()
        list(APPEND _srcs "${_src}")
    endforeach()
    list(REMOVE_DUPLICATES _srcs)
    add_library(${lib} STATIC ${_srcs})
    target_link_libraries(${lib} PRIVATE executorch_core kernels_util_all_deps)
    target_compile_options(${lib} PRIVATE -Wno-deprecated-declarations)
    set(${out_lib} ${lib} PARENT_SCOPE)
endfunction()

function(ethosu_kit_add_executor_runner target generated_dir)
    cmake_parse_arguments(ARG "" "NPU" "" ${ARGN})
    # One runner per build tree: ExecuTorch is added once (add_subdirectory), its kernel
    # table sized for the first runner's model and its Ethos-U driver configured for that
    # model's memory mode, so a second runner would link a runtime built for another
    # model. Say so here, not as a missing source or a "Missing operator" at run time.
    get_property(_first GLOBAL PROPERTY ETHOSU_KIT_RUNNER_TARGET)
    if(_first AND NOT _first STREQUAL "${target}")
        message(FATAL_ERROR "ethosu-porting-kit: ${target}: this build tree has an "
            "executor_runner already (${_first}); ExecuTorch is built once per tree, for "
            "that target's model (kernel table, NPU driver configuration): build ${target} "
            "in a build tree of its own (another CMake project or ExternalProject)")
    endif()
    set_property(GLOBAL PROPERTY ETHOSU_KIT_RUNNER_TARGET "${target}")
    if(NOT ARG_NPU)
        set(ARG_NPU driver)
    endif()
    if(EXISTS "${generated_dir}/generated/kit_memory_config.h")
        set(_gen "${generated_dir}/generated")
    elseif(EXISTS "${generated_dir}/kit_memory_config.h")
        set(_gen "${generated_dir}")
    else()
        message(FATAL_ERROR "ethosu-porting-kit: ${generated_dir} is not a generated project "
            "(no generated/kit_memory_config.h); run gen-firmware first")
    endif()

    # The kit's clang toolchain file found no C++ headers for the board's CPU (clang's
    # bare-metal driver has none of its own): say why and what to do, before ExecuTorch
    # fails on <cstring>.
    if(DEFINED ETHOSU_KIT_CLANG_CXX_INCLUDES AND NOT ETHOSU_KIT_CLANG_CXX_INCLUDES)
        if(NOT ETHOSU_KIT_BOARD_CMAKE)
            set(_why "the toolchain file picks the arm-none-eabi libstdc++ headers of the "
                "board's multilib from its CPU flags (-DETHOSU_KIT_BOARD_CMAKE=<project>/"
                "generated/kit_board.cmake), and this tree gave it no board: build the "
                "runner from a generated project (ethosu-kit build DIR --app executor_runner "
                "--toolchain clang), or with toolchain/arm-none-eabi-gcc.cmake")
        else()
            set(_why "toolchain/clang.cmake found no arm-none-eabi libstdc++ headers for "
                "the board's CPU (`arm-none-eabi-g++ <board gcc flags> -E -v`): install "
                "libstdc++-arm-none-eabi-dev and libstdc++-arm-none-eabi-newlib")
        endif()
        string(CONCAT _why ${_why})
        message(FATAL_ERROR "ethosu-porting-kit: ${target}: the executor_runner is C++ and "
            "clang has no C++ library for arm-none-eabi of its own; ${_why}")
    endif()
    file(STRINGS "${_gen}/kit_model.h" _delegates REGEX "#define KIT_NUM_ETHOSU_DELEGATES")
    set(_model_delegates OFF)
    if(_delegates MATCHES "KIT_NUM_ETHOSU_DELEGATES[ \t]+([1-9][0-9]*)")
        set(_model_delegates ON)
    endif()
    # The NPU library follows NPU (the board glue calls the driver whenever NPU is
    # not none); the delegate is built only when the model has one, so a CPU-only
    # program links no delegate.
    if(ARG_NPU STREQUAL "driver" AND NOT _model_delegates)
        set(ETHOSU_KIT_DRIVER_HINT "This program has no Ethos-U delegate: configure "
            "with -DETHOSU_KIT_NPU=none to build it without the driver.")
    endif()
    ethosu_kit_npu_library(${target} "${_gen}" ${ARG_NPU} _npu_lib _driver_dir)
    if(NOT _npu_lib AND _model_delegates)
        message(WARNING "ethosu-porting-kit: ${target}: NPU none, but the program has Ethos-U "
            "delegates: loading its method will fail (no EthosUBackend registered)")
    endif()
    if(_npu_lib)
        target_link_libraries(${target} PRIVATE ${_npu_lib})
        # ExecuTorch's delegate links `ethosu_core_driver` by that name.
        if(NOT TARGET ethosu_core_driver)
            add_library(ethosu_core_driver INTERFACE)
            target_link_libraries(ethosu_core_driver INTERFACE ${_npu_lib})
        endif()
    endif()
    set(_with_ethosu OFF)
    if(_npu_lib AND _model_delegates)
        set(_with_ethosu ON)
    endif()

    set(_et "${EXECUTORCH_ROOT}")
    if(NOT _et)
        set(_et "$ENV{EXECUTORCH_ROOT}") # before ethosu_kit_require_executorch caches it
    endif()
    _ethosu_kit_prim_op_names("${_et}" _prim_names)
    _ethosu_kit_read_operators("${_gen}/kit_operators.txt" "${_prim_names}" _portable_ops
        _quantized_ops _prim_ops)
    _ethosu_kit_require_kernels("${_gen}/kit_operators.txt" "${_et}" "${_portable_ops}"
        "${_quantized_ops}")
    _ethosu_kit_runtime_library("${_prim_names}" "${_prim_ops}" _runtime _n_prim)
    # Kernel table (12 B a slot, static RAM): exactly the kernels this build registers,
    # the prim ops linked + one per operator of the model (selective registration), no
    # spare. Too small is loud: the registration logs every kernel it could not add,
    # and the method load then fails with "Missing operator" (exit code 3). A tree that
    # links kernels of its own sets -DMAX_KERNEL_NUM.
    list(LENGTH _portable_ops _n_portable)
    list(LENGTH _quantized_ops _n_quantized)
    math(EXPR _max_kernels "${_n_prim} + ${_n_portable} + ${_n_quantized}")
    if(_max_kernels EQUAL 0)
        set(_max_kernels 1) # no CPU operator at all: a zero-length table is not C++
    endif()
    if(_with_ethosu)
        ethosu_kit_require_executorch(WITH_ETHOSU DRIVER_DIR "${_driver_dir}"
            MAX_KERNELS ${_max_kernels})
    else()
        ethosu_kit_require_executorch(MAX_KERNELS ${_max_kernels})
    endif()
    if(NOT EXECUTORCH_ROOT)
        message(FATAL_ERROR "ethosu-porting-kit: selective kernel registration needs the "
            "ExecuTorch source tree: set EXECUTORCH_ROOT")
    endif()
    if(NOT PYTHON_EXECUTABLE)
        find_package(Python3 COMPONENTS Interpreter REQUIRED)
        set(PYTHON_EXECUTABLE "${Python3_EXECUTABLE}")
    endif()
    include("${EXECUTORCH_ROOT}/tools/cmake/Codegen.cmake")

    set(_libs ${_runtime})
    if(_portable_ops)
        _ethosu_kit_portable_kernel_lib(${target}_portable_kernels "${_portable_ops}" _kernels)
        _ethosu_kit_selected_ops(${target}_portable_ops "${_portable_ops}" FUNCTIONS_YAML
            "${EXECUTORCH_ROOT}/kernels/portable/functions.yaml" ${_kernels})
        list(APPEND _libs ${target}_portable_ops)
    endif()
    if(_quantized_ops)
        _ethosu_kit_selected_ops(${target}_quantized_ops "${_quantized_ops}" CUSTOM_OPS_YAML
            "${EXECUTORCH_ROOT}/kernels/quantized/quantized.yaml" quantized_kernels)
        list(APPEND _libs ${target}_quantized_ops)
    endif()
    if(_with_ethosu)
        # The delegate registers itself in a static constructor: link it whole.
        executorch_target_link_options_shared_lib(executorch_delegate_ethos_u)
        list(APPEND _libs executorch_delegate_ethos_u)
    endif()

    target_sources(${target} PRIVATE
        "${_ETHOSU_KIT_RUNNER_DIR}/executor_runner.cpp"
        "${_ETHOSU_KIT_RUNNER_DIR}/kit_pools.cpp"
        "${_ETHOSU_KIT_ROOT}/sdk/executorch_pal/executorch_pal.cpp")
    target_include_directories(${target} PRIVATE "${_ETHOSU_KIT_RUNNER_DIR}" "${_gen}")
    target_compile_features(${target} PRIVATE cxx_std_17)
    target_compile_definitions(${target} PRIVATE C10_USING_CUSTOM_GENERATED_MACROS)
    target_link_libraries(${target} PRIVATE ${_libs})
    # ExecuTorch's log messages are formatted with vsnprintf, with %zd/%zu/%lld that
    # newlib-nano's lacks (a later %s then prints a wrong pointer): the runner's
    # vsnprintf is the kit's formatter (__wrap_vsnprintf, executorch_pal.cpp). GNU ld
    # and lld; armlink has no --wrap, and the Arm C library's vsnprintf has them.
    _ethosu_kit_toolchain(_toolchain)
    if(NOT _toolchain STREQUAL "armclang")
        target_link_options(${target} PRIVATE "LINKER:--wrap=vsnprintf")
    endif()
    message(STATUS "ethosu-porting-kit: executor_runner for ${target}: portable ops "
        "[${_portable_ops}], quantized ops [${_quantized_ops}], prim ops [${_prim_ops}] "
        "(runtime ${_runtime}), Ethos-U delegate ${_with_ethosu} (NPU ${ARG_NPU})")
endfunction()

/*
 * The plan's pools by symbol, from the generated X-macros: a pool the plan lacks is an
 * undefined symbol at link time (never a name compared at run time).
 */
#include "kit_pools.h"

#include "kit_memory_config.h"
#include "kit_model.h"

#if defined(KIT_PLAN_NO_RUNNER_POOLS)
#error                                                                                             \
    "the project's memory plan is for another app (KIT_PLAN_APP) and has no method pool or planned buffers: regenerate it with gen-firmware --app executor_runner"
#endif

namespace kit_runner
{
namespace
{

#define KIT_RUNNER_ENTRY(index, name, symbol, size, region) {index, {#name, symbol, size, region}},

#if defined(KIT_NUM_PROGRAMS)
/* An image of several programs (kit_programs.h): one table of each kind per program. */
/* The plan's name is the symbol without its `kit_` (the buffers' contract): `#symbol + 4`. */
#define KIT_RUNNER_ROW(index, symbol, size, region) {index, {#symbol + 4, symbol, size, region}},
#define KIT_RUNNER_TABLES(name, ...)                                                               \
    const IndexedBuffer name##_planned[] = {KIT_PROGRAM_PLANNED_##name(KIT_RUNNER_ROW){0, {}}};    \
    const IndexedBuffer name##_inputs[] = {KIT_PROGRAM_INPUTS_##name(KIT_RUNNER_ROW){0, {}}};      \
    const IndexedBuffer name##_outputs[] = {KIT_PROGRAM_OUTPUTS_##name(KIT_RUNNER_ROW){0, {}}};
KIT_PROGRAMS(KIT_RUNNER_TABLES)
#undef KIT_RUNNER_TABLES
#undef KIT_RUNNER_ROW

template <size_t N> IndexedTable table(const IndexedBuffer (&rows)[N]) { return {rows, N - 1}; }

#define KIT_RUNNER_PROGRAM(name, network, network_size, temp, temp_size, temp_region, fast,        \
                           fast_size, pool, pool_size, pool_region, lane)                          \
    {#name,                                                                                        \
     network,                                                                                      \
     network_size,                                                                                 \
     {#pool + 4, pool, pool_size, pool_region},                                                    \
     {#temp + 4, temp, temp_size, temp_region},                                                    \
     fast,                                                                                         \
     fast_size,                                                                                    \
     table(name##_planned),                                                                        \
     table(name##_inputs),                                                                         \
     table(name##_outputs)},
const ProgramPools kPrograms[] = {KIT_PROGRAMS(KIT_RUNNER_PROGRAM)};
#undef KIT_RUNNER_PROGRAM

#else
/* One program: the plan's pools by their single-program names. */
extern "C" uint8_t kit_method_pool[];
extern "C" uint8_t kit_temp_pool[];

const IndexedBuffer kPlanned[] = {KIT_PLANNED_BUFFERS(KIT_RUNNER_ENTRY){0, {}}};
const IndexedBuffer kInputs[] = {KIT_INPUT_BUFFERS(KIT_RUNNER_ENTRY){0, {}}};
const IndexedBuffer kOutputs[] = {KIT_OUTPUT_BUFFERS(KIT_RUNNER_ENTRY){0, {}}};

template <size_t N> IndexedTable table(const IndexedBuffer (&rows)[N]) { return {rows, N - 1}; }

#if defined(KIT_FAST_SCRATCH_SIZE) && KIT_FAST_SCRATCH_SIZE > 0
#define KIT_RUNNER_FAST kit_fast_scratch
#else
#define KIT_RUNNER_FAST nullptr
#endif

const ProgramPools kPrograms[] = {{
    "",
    kit_network,
    KIT_NETWORK_BYTES,
    {"method_pool", kit_method_pool, KIT_METHOD_POOL_SIZE, KIT_METHOD_POOL_REGION},
    {"temp_pool", kit_temp_pool, KIT_TEMP_POOL_SIZE, KIT_TEMP_POOL_REGION},
    KIT_RUNNER_FAST,
    KIT_FAST_SCRATCH_SIZE,
    table(kPlanned),
    table(kInputs),
    table(kOutputs),
}};
#endif
#undef KIT_RUNNER_ENTRY

} // namespace

size_t num_programs() { return sizeof kPrograms / sizeof kPrograms[0]; }
const ProgramPools &program(size_t i) { return kPrograms[i]; }

} // namespace kit_runner

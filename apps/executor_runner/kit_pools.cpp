/*
 * The plan's pools by symbol, from the generated X-macros: a pool the plan lacks is an
 * undefined symbol at link time (never a name compared at run time).
 */
#include "kit_pools.h"

#include "kit_memory_config.h"

#if defined(KIT_PLAN_NO_RUNNER_POOLS)
#error                                                                                             \
    "the project's memory plan is for another app (KIT_PLAN_APP) and has no method pool or planned buffers: regenerate it with gen-firmware --app executor_runner"
#endif

extern "C" uint8_t kit_method_pool[];
extern "C" uint8_t kit_temp_pool[];
#define KIT_RUNNER_DECLARE(index, name, symbol, size, region) extern "C" uint8_t symbol[];
KIT_PLANNED_BUFFERS(KIT_RUNNER_DECLARE)
KIT_INPUT_BUFFERS(KIT_RUNNER_DECLARE)
KIT_OUTPUT_BUFFERS(KIT_RUNNER_DECLARE)
#undef KIT_RUNNER_DECLARE

namespace kit_runner
{
namespace
{

struct Indexed {
    size_t index;
    PlanBuffer buffer;
};

#define KIT_RUNNER_ENTRY(index, name, symbol, size, region) {index, {#name, symbol, size, region}},
const Indexed kPlanned[] = {KIT_PLANNED_BUFFERS(KIT_RUNNER_ENTRY){0, {}}};
const Indexed kInputs[] = {KIT_INPUT_BUFFERS(KIT_RUNNER_ENTRY){0, {}}};
const Indexed kOutputs[] = {KIT_OUTPUT_BUFFERS(KIT_RUNNER_ENTRY){0, {}}};
#undef KIT_RUNNER_ENTRY

template <size_t N> const PlanBuffer *by_index(const Indexed (&table)[N], size_t index)
{
    for (size_t i = 0; i + 1 < N; ++i) { /* the last row only ends the list */
        if (table[i].index == index) {
            return &table[i].buffer;
        }
    }
    return nullptr;
}

} // namespace

const PlanBuffer &method_pool()
{
    static const PlanBuffer b = {"method_pool", kit_method_pool, KIT_METHOD_POOL_SIZE,
                                 KIT_METHOD_POOL_REGION};
    return b;
}

const PlanBuffer &temp_pool()
{
    static const PlanBuffer b = {"temp_pool", kit_temp_pool, KIT_TEMP_POOL_SIZE,
                                 KIT_TEMP_POOL_REGION};
    return b;
}

const PlanBuffer *planned_buffer(size_t mem_id) { return by_index(kPlanned, mem_id); }
const PlanBuffer *input_buffer(size_t index) { return by_index(kInputs, index); }
const PlanBuffer *output_buffer(size_t index) { return by_index(kOutputs, index); }

} // namespace kit_runner

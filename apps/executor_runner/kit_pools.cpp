/* The plan's RAM buffers as a table, built from the generated X-macro. */
#include "kit_pools.h"

#include <cstring>

#include "kit_memory_config.h"

#define KIT_RUNNER_DECLARE(name, symbol, size, region, npu) extern "C" uint8_t symbol[];
KIT_RAM_BUFFERS(KIT_RUNNER_DECLARE)
#undef KIT_RUNNER_DECLARE

namespace kit_runner {
namespace {

#define KIT_RUNNER_ENTRY(name, symbol, size, region, npu) {#name, symbol, size, region},
const PlanBuffer kBuffers[] = {KIT_RAM_BUFFERS(KIT_RUNNER_ENTRY){nullptr, nullptr, 0, nullptr}};
#undef KIT_RUNNER_ENTRY

} // namespace

const PlanBuffer *find_buffer(const char *name)
{
    for (const PlanBuffer &b : kBuffers) {
        if (b.name != nullptr && std::strcmp(b.name, name) == 0) {
            return &b;
        }
    }
    return nullptr;
}

const PlanBuffer *find_buffer(const char *prefix, size_t index)
{
    /* No snprintf: it would pull newlib's whole printf into the image. */
    char name[48];
    size_t n = std::strlen(prefix);
    if (n + 21 > sizeof(name)) {
        return nullptr;
    }
    std::memcpy(name, prefix, n);
    char digits[20];
    size_t d = 0;
    do {
        digits[d++] = static_cast<char>('0' + index % 10);
        index /= 10;
    } while (index != 0);
    while (d != 0) {
        name[n++] = digits[--d];
    }
    name[n] = '\0';
    return find_buffer(name);
}

} // namespace kit_runner

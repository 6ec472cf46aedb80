/*
 * The runner's NamedDataMap over the placed .ptd files (docs/ptd.md): ExecuTorch's
 * Ethos-U delegate asks it for each external Vela block by key and gets the bytes where
 * the plan placed them, borrowed (a FreeableBuffer with no free function): never copied.
 * The keys are the program's own (generated kit_ptd.h); each is looked up in the
 * flat-tensor header of its tag's file at run time, so data flashed into a slot is read
 * as it is, and the start-up check (kit/ptd_program.h) has already refused data that is
 * not this program's.
 */
#ifndef KIT_DATA_MAP_H
#define KIT_DATA_MAP_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/named_data_map.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/tensor_layout.h>

#include "kit/ptd.h"
#include "kit/ptd_program.h"

namespace kit_runner
{

class PtdDataMap final : public executorch::runtime::NamedDataMap
{
  public:
    executorch::runtime::Result<const executorch::runtime::TensorLayout>
    get_tensor_layout(std::string_view /*key*/) const override
    {
        /* Vela blocks are bytes, not tensors: no layout (MergedDataMap takes this). */
        return executorch::runtime::Error::NotImplemented;
    }

    executorch::runtime::Result<executorch::runtime::FreeableBuffer>
    get_data(std::string_view key) const override
    {
        const uint8_t *data = nullptr;
        size_t size = 0;
        const char *tag = kit_ptd_tag_of(key.data(), key.size());
        if (tag == nullptr || kit_ptd_lookup(kit_ptd_files, KIT_PTD_COUNT, tag, key.data(),
                                             key.size(), &data, &size) != KIT_PTD_OK) {
            return executorch::runtime::Error::NotFound;
        }
        return executorch::runtime::FreeableBuffer(data, size, nullptr);
    }

    executorch::runtime::Error load_data_into(std::string_view /*key*/, void * /*buffer*/,
                                              size_t /*size*/) const override
    {
        return executorch::runtime::Error::NotImplemented; /* read in place, never copied */
    }

    executorch::runtime::Result<uint32_t> get_num_keys() const override
    {
        return static_cast<uint32_t>(KIT_PTD_NUM_KEYS);
    }

    executorch::runtime::Result<const char *> get_key(uint32_t index) const override
    {
        if (index >= KIT_PTD_NUM_KEYS) {
            return executorch::runtime::Error::InvalidArgument;
        }
        return kit_ptd_keys[index].key;
    }
};

} // namespace kit_runner

#endif /* KIT_DATA_MAP_H */

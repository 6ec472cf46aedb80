/*
 * The generated memory plan as the ExecuTorch runtime sees it.
 *
 * Every pool the runner hands to the runtime is a buffer of the generated
 * kit_buffers.c, taken by its symbol through the X-macros of kit_memory_config.h: a
 * pool the plan lacks fails the link. Nothing here has a size of its own: a pool
 * smaller than the program needs is reported with both numbers, because that means
 * the firmware was built from a different .pte than the one it embeds.
 */
#ifndef KIT_RUNNER_POOLS_H
#define KIT_RUNNER_POOLS_H

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/memory_allocator.h>

namespace kit_runner
{

struct PlanBuffer {
    const char *name; /* plan name: "method_pool", "planned_1", "input_0" ... */
    uint8_t *base;
    size_t size; /* the plan's size (the array may be 1 byte when this is 0) */
    const char *region;
};

/* The method allocator's and the temp allocator's pools. */
const PlanBuffer &method_pool();
const PlanBuffer &temp_pool();
/* Planned buffer mem_id (1..), or nullptr when the plan has fewer. */
const PlanBuffer *planned_buffer(size_t mem_id);
/* The plan's own buffer of input/output `index`, or nullptr (memory-planned IO has none). */
const PlanBuffer *input_buffer(size_t index);
const PlanBuffer *output_buffer(size_t index);

/*
 * A bump allocator that remembers its high-water mark. The runtime resets the
 * temp allocator after every instruction, so its used size after execute() says
 * nothing; the peak is what the plan must cover.
 */
class PeakAllocator final : public executorch::runtime::MemoryAllocator
{
  public:
    explicit PeakAllocator(const PlanBuffer &buffer)
        : MemoryAllocator(static_cast<uint32_t>(buffer.size), buffer.base), name_(buffer.name),
          region_(buffer.region)
    {
    }

    void *allocate(size_t size, size_t alignment = kDefaultAlignment) override
    {
        void *p = MemoryAllocator::allocate(size, alignment);
        if (used_size() > peak_) {
            peak_ = used_size();
        }
        if (p == nullptr) {
            failed_request_ = size;
        }
        return p;
    }

    size_t peak() const { return peak_; }
    size_t failed_request() const { return failed_request_; }
    const char *name() const { return name_; }
    const char *region() const { return region_; }

  private:
    const char *name_;
    const char *region_;
    size_t peak_ = 0;
    size_t failed_request_ = 0; /* bytes of the last allocation that did not fit */
};

} // namespace kit_runner

#endif /* KIT_RUNNER_POOLS_H */

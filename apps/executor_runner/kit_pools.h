/*
 * The generated memory plan as the ExecuTorch runtime sees it.
 *
 * Every pool the runner hands to the runtime is a buffer of the generated
 * kit_buffers.c, taken by its symbol through the X-macros of kit_memory_config.h (and,
 * for an image of several programs, kit_programs.h): a pool the plan lacks fails the
 * link. Nothing here has a size of its own: a pool smaller than the program needs is
 * reported with both numbers, because that means the firmware was built from a
 * different .pte than the one it embeds.
 */
#ifndef KIT_RUNNER_POOLS_H
#define KIT_RUNNER_POOLS_H

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/memory_allocator.h>

namespace kit_runner
{

struct PlanBuffer {
    const char *name; /* plan name: "method_pool", "planned_1", "kws_input_0" ... */
    uint8_t *base;
    size_t size; /* the plan's size (the array may be 1 byte when this is 0) */
    const char *region;
};

/* A buffer of an indexed kind: planned by mem_id (1..), inputs and outputs by index. */
struct IndexedBuffer {
    size_t index;
    PlanBuffer buffer;
};

/* A table of indexed buffers; `count` rows (the arrays end with one more, unused). */
struct IndexedTable {
    const IndexedBuffer *rows;
    size_t count;

    /* The buffer of `index`, or nullptr when the plan has none. */
    const PlanBuffer *find(size_t index) const
    {
        for (size_t i = 0; i < count; ++i) {
            if (rows[i].index == index) {
                return &rows[i].buffer;
            }
        }
        return nullptr;
    }
};

/*
 * One program of the image and its pools: the single program of a one-program image
 * (name ""), or one row of KIT_PROGRAMS(X). Programs of one lane share the temp pool,
 * the fast scratch and the planned arenas: they never run at the same time.
 */
struct ProgramPools {
    const char *name;
    const uint8_t *network;
    size_t network_size;
    PlanBuffer method_pool;
    PlanBuffer temp_pool;
    uint8_t *fast_scratch; /* nullptr outside Dedicated_Sram */
    size_t fast_scratch_size;
    IndexedTable planned;
    IndexedTable inputs;
    IndexedTable outputs;
};

/* The image's programs, in the plan's order. */
size_t num_programs();
const ProgramPools &program(size_t i);

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

/*
 * The kit's embedded executor_runner: runs the embedded program once over the
 * generated memory plan and exits with a code the host can read (QEMU semihosting).
 *
 * Differences from upstream's examples/arm/executor_runner, on purpose:
 * - every pool is a buffer of the generated plan with the size the model needs
 *   (upstream: a 60 MiB method pool, a 2 MiB / 64 MiB temp pool whatever the model);
 * - planned buffers are the plan's own `planned_<mem_id>` buffers, not carved out of
 *   the method pool at run time, so the linker (and check-elf) sees each one;
 * - the temp pool reports its peak, because the runtime resets it per instruction.
 *
 * Exit codes (docs/ARCHITECTURE.md): 0 ok, 2 program load, 3 method load,
 * 4 inputs, 5 execute, 6 outputs, 7 the plan does not match the program, 11 the
 * external data (.ptd) is not the program's.
 */
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/platform/runtime.h>

#include "kit/app.h"
#include "kit/console.h"
#include "kit/log.h"
#include "kit/semihosting_files.h"
#include "kit/usage.h"
#include "kit/platform.h"
#include "kit/timing.h"
#include "kit_memory_config.h"
#include "kit_model.h"
#include "kit_pools.h"
#include "kit_sections.h"

#if defined(__has_include)
#if __has_include("kit_ptd.h")
/* The program reads its Vela blocks from named external data (.ptd, docs/ptd.md). */
#include "kit_data_map.h"
#define KIT_RUNNER_HAVE_PTD 1
#endif
#if __has_include("kit_input_data.h")
/* Optional: X(index, symbol, nbytes) per input, `symbol` a const uint8_t array. */
#include "kit_input_data.h"
#define KIT_RUNNER_HAVE_INPUT_DATA 1
#endif
#endif

#ifndef KIT_RUNNER_MAX_INPUTS
#define KIT_RUNNER_MAX_INPUTS 16 /* inputs filled in place; more are staged */
#endif
#ifndef KIT_RUNNER_PRINT_VALUES
#define KIT_RUNNER_PRINT_VALUES 16 /* values printed per output */
#endif

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using executorch::extension::BufferDataLoader;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::Span;
using executorch::runtime::Tag;
using executorch::runtime::TensorInfo;
using kit_runner::PeakAllocator;
using kit_runner::PlanBuffer;

namespace
{

/* code: KIT_EXIT_* of the generated table (kit_exit_codes.h, via kit/platform.h) */
[[noreturn]] void finish(int code) { kit_hal_exit(kit_app_result(code)); }

unsigned long ul(size_t v) { return static_cast<unsigned long>(v); }

/* %llu is not in every embedded printf. */
void print_u64(uint64_t v)
{
    char digits[20];
    size_t n = 0;
    do {
        digits[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n != 0) {
        kit_putc(digits[--n]);
    }
}

/* Fixed-point print: the SDK's printf need not carry float support. */
void print_float(double v)
{
    if (v != v) {
        kit_puts("nan");
        return;
    }
    if (v < 0) {
        kit_putc('-');
        v = -v;
    }
    if (v >= 4.0e9) {
        kit_puts("inf");
        return;
    }
    auto whole = static_cast<unsigned long>(v);
    auto frac = static_cast<unsigned long>((v - static_cast<double>(whole)) * 1000000.0 + 0.5);
    if (frac >= 1000000UL) {
        whole += 1;
        frac -= 1000000UL;
    }
    kit_printf("%lu.%06lu", whole, frac);
}

void print_value(ScalarType type, const uint8_t *p)
{
    switch (type) {
    case ScalarType::Float: {
        float f;
        std::memcpy(&f, p, sizeof f);
        print_float(f);
        break;
    }
    case ScalarType::Double: {
        double d;
        std::memcpy(&d, p, sizeof d);
        print_float(d);
        break;
    }
    case ScalarType::Char:
        kit_printf("%d", static_cast<int>(static_cast<int8_t>(*p)));
        break;
    case ScalarType::Byte:
    case ScalarType::Bool:
        kit_printf("%u", static_cast<unsigned>(*p));
        break;
    case ScalarType::Short: {
        int16_t s;
        std::memcpy(&s, p, sizeof s);
        kit_printf("%d", static_cast<int>(s));
        break;
    }
    case ScalarType::Int: {
        int32_t i;
        std::memcpy(&i, p, sizeof i);
        kit_printf("%ld", static_cast<long>(i));
        break;
    }
    case ScalarType::Long: {
        int64_t l;
        std::memcpy(&l, p, sizeof l);
        kit_printf("%lld", static_cast<long long>(l)); /* long is 32-bit on Cortex-M */
        break;
    }
    default:
        kit_printf("0x%02x", static_cast<unsigned>(*p));
        break;
    }
}

size_t element_size(ScalarType type)
{
    switch (type) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Bool:
        return 1;
    case ScalarType::Short:
    case ScalarType::Half:
    case ScalarType::BFloat16:
        return 2;
    case ScalarType::Int:
    case ScalarType::Float:
        return 4;
    case ScalarType::Long:
    case ScalarType::Double:
        return 8;
    default:
        return 1;
    }
}

/* What the host asked for on the semihosting command line (docs/running.md). */
bool g_host_inputs = false;  /* --kit-inputs: read kit_input_<i>.bin */
bool g_host_outputs = false; /* --kit-outputs: write kit_output_<o>.bin */
char g_program[40];          /* --kit-program=<name>: that program only ("" every one) */
char g_method[72];           /* --kit-method=<name>: that method only ("" every one) */

/* The value of `--<flag>=<value>` on the command line into `out` ("" when absent). */
void arg_value(const char *cmdline, const char *flag, char *out, size_t size)
{
    out[0] = '\0';
    const char *at = std::strstr(cmdline, flag);
    if (at == nullptr) {
        return;
    }
    at += std::strlen(flag);
    size_t n = 0;
    while (at[n] != '\0' && at[n] != ' ' && n + 1 < size) {
        out[n] = at[n];
        ++n;
    }
    out[n] = '\0';
}

/* noinline: its buffer is on its own frame, gone before execute, not in main's. */
__attribute__((noinline)) void read_host_command_line()
{
    /* On the stack, not static: read once at start-up, where the stack is shallow (its
     * deepest point is in execute), so these bytes cost no RAM of their own. */
    char cmdline[256];
    if (kit_semihost_cmdline(cmdline, sizeof cmdline) != 0) {
        return; /* no host: compiled-in inputs or ones, no files */
    }
    g_host_inputs = kit_semihost_has_arg(cmdline, "--kit-inputs") != 0;
    g_host_outputs = kit_semihost_has_arg(cmdline, "--kit-outputs") != 0;
    arg_value(cmdline, "--kit-program=", g_program, sizeof g_program);
    arg_value(cmdline, "--kit-method=", g_method, sizeof g_method);
}

void host_file_name(char *buf, size_t size, const char *kind, size_t index)
{
    /* kit_printf-free formatting: "kit_<kind>_<index>.bin" */
    char digits[20];
    size_t n = 0;
    do {
        digits[n++] = static_cast<char>('0' + index % 10);
        index /= 10;
    } while (index != 0 && n < sizeof digits);
    size_t at = 0;
    for (const char *p = "kit_"; *p != '\0' && at + 1 < size; ++p) {
        buf[at++] = *p;
    }
    for (const char *p = kind; *p != '\0' && at + 1 < size; ++p) {
        buf[at++] = *p;
    }
    if (at + 1 < size) {
        buf[at++] = '_';
    }
    while (n != 0 && at + 1 < size) {
        buf[at++] = digits[--n];
    }
    for (const char *p = ".bin"; *p != '\0' && at + 1 < size; ++p) {
        buf[at++] = *p;
    }
    buf[at] = '\0';
}

/* kit_<kind>_<index>.bin opened in `mode`, or -1 (and a line naming it). */
int open_host_file(const char *kind, size_t index, const char *mode, char (&name)[32])
{
    host_file_name(name, sizeof name, kind, index);
    const int fd = kit_semihost_open(name, mode);
    if (fd < 0) {
        kit_printf("kit: %s %lu: %s cannot be opened (\"%s\")\n", kind, ul(index), name, mode);
    }
    return fd;
}

/* Input `i` from the host's kit_input_<i>.bin, exactly `nbytes` long, into `dst`. */
Error read_host_input(size_t i, uint8_t *dst, size_t nbytes)
{
    char name[32];
    const int fd = open_host_file("input", i, "rb", name);
    if (fd < 0) {
        return Error::InvalidArgument;
    }
    /* -1 where the host cannot tell (QEMU 7.2 when GDB serves its semihosting, run
     * --probe qemu): then the read proves the length, exactly nbytes and nothing after. */
    const long size = kit_semihost_flen(fd);
    if (size >= 0 && static_cast<size_t>(size) != nbytes) {
        kit_printf("kit: input %lu: %s has %ld bytes, the program's input has %lu\n", ul(i), name,
                   size, ul(nbytes));
        kit_semihost_close(fd);
        return Error::InvalidArgument;
    }
    const int rc = kit_semihost_read(fd, dst, nbytes);
    const int longer = size < 0 && rc == 0 && kit_semihost_at_end(fd) != 1;
    kit_semihost_close(fd);
    if (rc != 0 || longer) {
        const char *what = size >= 0 ? "reading it failed"
                           : longer  ? "it has more bytes than the program's input"
                                     : "it has fewer bytes than the program's input";
        kit_printf("kit: input %lu: %s: %s (%lu)\n", ul(i), name, what, ul(nbytes));
        return Error::InvalidArgument;
    }
    kit_printf("kit: input %lu: %lu bytes from %s\n", ul(i), ul(nbytes), name);
    return Error::Ok;
}

/* Tensor `index` to the host's kit_<kind>_<index>.bin (kind "output", or "input"). */
Error write_host_file(const char *kind, size_t index, const uint8_t *data, size_t nbytes)
{
    char name[32];
    const int fd = open_host_file(kind, index, "wb", name);
    if (fd < 0) {
        return Error::InvalidState;
    }
    const int rc = nbytes != 0 ? kit_semihost_write(fd, data, nbytes) : 0;
    kit_semihost_close(fd);
    if (rc != 0) {
        kit_printf("kit: %s %lu: writing %s failed\n", kind, ul(index), name);
        return Error::InvalidState;
    }
    kit_printf("kit: %s %lu: wrote %s %lu bytes\n", kind, ul(index), name, ul(nbytes));
    return Error::Ok;
}

/*
 * With --kit-outputs but not --kit-inputs the host did not choose the inputs (they are
 * compiled in, or ones): send back the bytes input `i` has, so the host's out.npz holds
 * what the outputs were computed from and the run can be reproduced there. Called as
 * soon as the input is set: a planned input's bytes may be overwritten by execute.
 */
Error echo_input(size_t i, const uint8_t *data, size_t nbytes)
{
    if (!g_host_outputs || g_host_inputs) {
        return Error::Ok;
    }
    return write_host_file("input", i, data, nbytes);
}

/* The documented default input: every element 1 in the tensor's dtype. */
void fill_ones(ScalarType type, uint8_t *data, size_t nbytes)
{
    const size_t esize = element_size(type);
    uint8_t one[8] = {};
    switch (type) {
    case ScalarType::Float: {
        const float f = 1.0f;
        std::memcpy(one, &f, sizeof f);
        break;
    }
    case ScalarType::Double: {
        const double d = 1.0;
        std::memcpy(one, &d, sizeof d);
        break;
    }
    case ScalarType::Half:
        one[1] = 0x3c; /* 1.0 in IEEE half, little-endian */
        break;
    case ScalarType::BFloat16:
        one[0] = 0x80;
        one[1] = 0x3f;
        break;
    default:
        one[0] = 1; /* integers and bool, little-endian */
        break;
    }
    for (size_t off = 0; off + esize <= nbytes; off += esize) {
        std::memcpy(data + off, one, esize);
    }
}

#if defined(KIT_RUNNER_HAVE_INPUT_DATA)
struct InputData {
    size_t index;
    const uint8_t *data;
    size_t nbytes;
};
#define KIT_RUNNER_INPUT(index, symbol, nbytes) {index, symbol, nbytes},
const InputData kInputData[] = {KIT_INPUT_DATA(KIT_RUNNER_INPUT){~size_t{0}, nullptr, 0}};
#undef KIT_RUNNER_INPUT

const InputData *input_data(size_t index)
{
    for (const InputData &d : kInputData) {
        if (d.index == index && d.data != nullptr) {
            return &d;
        }
    }
    return nullptr;
}
#endif

/* The data of input `i` from kit_input_data.h, checked against the program; or nullptr. */
const uint8_t *generated_input(size_t i, const TensorInfo &info, Error *err)
{
    *err = Error::Ok;
#if defined(KIT_RUNNER_HAVE_INPUT_DATA)
    if (const InputData *d = input_data(i)) {
        if (d->nbytes != info.nbytes()) {
            kit_printf("kit: input %lu: kit_input_data.h has %lu bytes, the program wants %lu\n",
                       ul(i), ul(d->nbytes), ul(info.nbytes()));
            *err = Error::InvalidArgument;
        }
        return d->data;
    }
#else
    (void)i;
    (void)info;
#endif
    return nullptr;
}

/*
 * The planned memory of tensor input `i`, or nullptr when it cannot be had.
 * Method::get_inputs is marked deprecated, but it is the one call that reaches a
 * planned input's own bytes; the alternative (set_input from a staging copy) costs
 * a second buffer the size of the input, which is what this avoids.
 */
__attribute__((noinline)) uint8_t *planned_input(Method &method, const MethodMeta &meta, size_t i)
{
    /* On the stack (noinline: its own frame, gone before execute), not static. */
    EValue current[KIT_RUNNER_MAX_INPUTS];
    const size_t n = meta.num_inputs();
    if (n > KIT_RUNNER_MAX_INPUTS) {
        return nullptr;
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    const Error err = method.get_inputs(current, n);
#pragma GCC diagnostic pop
    if (err != Error::Ok || !current[i].isTensor()) {
        return nullptr;
    }
    return current[i].toTensor().mutable_data_ptr<uint8_t>();
}

/*
 * A memory-planned input already has its bytes inside planned_<mem_id>: without
 * kit_input_data.h it is filled with ones in place (no staging copy, no buffer of its
 * own in the plan). Otherwise the input is handed over with set_input, which copies
 * planned inputs and aliases the others: from kit_input_data.h in flash, or from the
 * plan's `input_<i>` buffer (planned for inputs that are not memory-planned), or, with
 * neither, from the method pool.
 */
/* noinline, as print_outputs: inlined, their locals would join main's frame, which is
 * live under execute, the stack's deepest point. */
__attribute__((noinline)) Error set_inputs(Method &method, const MethodMeta &meta,
                                           PeakAllocator &method_allocator,
                                           const kit_runner::ProgramPools &pools)
{
    for (size_t i = 0; i < meta.num_inputs(); ++i) {
        Result<Tag> tag = meta.input_tag(i);
        if (!tag.ok()) {
            return tag.error();
        }
        if (tag.get() != Tag::Tensor) {
            kit_printf("kit: input %lu is not a tensor; left as the program set it\n", ul(i));
            continue;
        }
        Result<TensorInfo> info = meta.input_tensor_meta(i);
        if (!info.ok()) {
            return info.error();
        }
        const size_t nbytes = info->nbytes();
        Error err = Error::Ok;
        const uint8_t *src = generated_input(i, info.get(), &err);
        if (err != Error::Ok) {
            return err;
        }
        if (g_host_inputs) {
            src = nullptr; /* the host's file wins over compiled-in data */
        }
        const PlanBuffer *staging = pools.inputs.find(i);
        if (src == nullptr && staging == nullptr && info->is_memory_planned()) {
            uint8_t *planned = planned_input(method, meta, i);
            if (planned != nullptr) {
                if (g_host_inputs) {
                    err = read_host_input(i, planned, nbytes);
                    if (err != Error::Ok) {
                        return err;
                    }
                    continue;
                }
                fill_ones(info->scalar_type(), planned, nbytes);
                kit_printf("kit: input %lu: %lu bytes of ones, in place (no kit_input_data.h)\n",
                           ul(i), ul(nbytes));
                err = echo_input(i, planned, nbytes);
                if (err != Error::Ok) {
                    return err;
                }
                continue;
            }
        }
        uint8_t *data = nullptr;
        if (staging != nullptr && staging->size >= nbytes) {
            data = staging->base;
        } else if (src == nullptr || !info->is_memory_planned()) {
            data = static_cast<uint8_t *>(method_allocator.allocate(nbytes, 16));
            if (data == nullptr) {
                kit_printf("kit: input %lu: no input_%lu buffer in the plan and %lu bytes do "
                           "not fit the method pool\n",
                           ul(i), ul(i), ul(nbytes));
                return Error::MemoryAllocationFailed;
            }
        }
        if (data == nullptr) {
            /* Planned input from flash: set_input only reads it. */
            data = const_cast<uint8_t *>(src);
        } else if (src != nullptr) {
            std::memcpy(data, src, nbytes);
        } else if (g_host_inputs) {
            err = read_host_input(i, data, nbytes);
            if (err != Error::Ok) {
                return err;
            }
        } else {
            fill_ones(info->scalar_type(), data, nbytes);
        }
        if (!g_host_inputs) {
            kit_printf("kit: input %lu: %lu bytes %s\n", ul(i), ul(nbytes),
                       src != nullptr ? "from kit_input_data.h" : "of ones (no kit_input_data.h)");
            err = echo_input(i, data, nbytes);
            if (err != Error::Ok) {
                return err;
            }
        }
        TensorImpl impl(info->scalar_type(), static_cast<ssize_t>(info->sizes().size()),
                        const_cast<TensorImpl::SizesType *>(info->sizes().data()), data,
                        const_cast<TensorImpl::DimOrderType *>(info->dim_order().data()));
        err = method.set_input(EValue(Tensor(&impl)), i);
        if (err != Error::Ok) {
            kit_printf("kit: input %lu: set_input failed: error 0x%x\n", ul(i),
                       static_cast<unsigned>(err));
            return err;
        }
    }
    return Error::Ok;
}

/* Print the first values of every output; copy each into `output_<i>` if the plan has one. */
__attribute__((noinline)) Error print_outputs(const Method &method,
                                              const kit_runner::ProgramPools &pools)
{
    for (size_t i = 0; i < method.outputs_size(); ++i) {
        const EValue &value = method.get_output(i);
        if (!value.isTensor()) {
            kit_printf("kit: output %lu: not a tensor (tag %d)\n", ul(i),
                       static_cast<int>(value.tag));
            continue;
        }
        const Tensor &t = value.toTensor();
        const auto *data = static_cast<const uint8_t *>(t.const_data_ptr());
        const size_t esize = t.element_size();
        const size_t count = static_cast<size_t>(t.numel());
        if (data == nullptr && count != 0) {
            kit_printf("kit: output %lu: no data\n", ul(i));
            return Error::InvalidState;
        }
        if (const PlanBuffer *out = pools.outputs.find(i)) {
            if (out->size >= t.nbytes()) {
                std::memcpy(out->base, data, t.nbytes());
            }
        }
        kit_printf("kit: output %lu: %s [", ul(i), executorch::runtime::toString(t.scalar_type()));
        for (ssize_t d = 0; d < t.dim(); ++d) {
            kit_printf(d == 0 ? "%ld" : ", %ld", static_cast<long>(t.size(d)));
        }
        const size_t shown = count < KIT_RUNNER_PRINT_VALUES ? count : KIT_RUNNER_PRINT_VALUES;
        kit_printf("] %lu of %lu values:", ul(shown), ul(count));
        for (size_t k = 0; k < shown; ++k) {
            kit_putc(' ');
            print_value(t.scalar_type(), data + k * esize);
        }
        kit_putc('\n');
        if (g_host_outputs) {
            const Error err = write_host_file("output", i, data, t.nbytes());
            if (err != Error::Ok) {
                return err;
            }
        }
    }
    return Error::Ok;
}

void print_pool(const char *name, const char *region, size_t used, size_t size, const char *what)
{
    kit_printf("kit: pool %s %s %lu / %lu bytes (%s)\n", name, what, ul(used), ul(size), region);
}

/* Planned memory: mem_id i+1 of the program is the plan's planned_<i+1> (an image of
 * several programs: the program's arena of that mem_id), each checked against what the
 * method needs. Returns how many spans it filled. */
Span<uint8_t> planned_spans[KIT_NUM_PLANNED > 0 ? KIT_NUM_PLANNED : 1];

size_t planned_memory_spans(const MethodMeta &meta, const kit_runner::ProgramPools &pools)
{
    const size_t num_planned = meta.num_memory_planned_buffers();
    if (num_planned > pools.planned.count) {
        kit_printf("kit: the program has %lu planned buffers, the memory plan %lu (regenerate "
                   "the project from this .pte)\n",
                   ul(num_planned), ul(pools.planned.count));
        finish(KIT_EXIT_PLAN_MISMATCH);
    }
    for (size_t id = 0; id < num_planned; ++id) {
        Result<int64_t> need = meta.memory_planned_buffer_size(id);
        const PlanBuffer *b = pools.planned.find(id + 1);
        if (!need.ok() || b == nullptr || b->size < static_cast<size_t>(need.get())) {
            kit_printf("kit: planned buffer mem_id %lu needs %ld bytes, the plan has %lu "
                       "(regenerate the project from this .pte)\n",
                       ul(id + 1), need.ok() ? static_cast<long>(need.get()) : -1L,
                       b != nullptr ? ul(b->size) : 0UL);
            finish(KIT_EXIT_PLAN_MISMATCH);
        }
        planned_spans[id] = Span<uint8_t>(b->base, static_cast<size_t>(need.get()));
    }
    return num_planned;
}

/* After a good execute: its cycles, each pool's use, and the measured lines
 * `gen --stack auto --heap auto` reads (ethosu_kit.firmware.measure). */
void report_run(uint64_t cycles, const PeakAllocator &method_allocator,
                const PeakAllocator &temp_allocator, size_t num_planned,
                const kit_runner::ProgramPools &pools)
{
    const PlanBuffer *method_buf = &pools.method_pool;
    kit_puts("kit: cycles ");
    print_u64(cycles);
    kit_puts(" execute (");
    print_u64(kit_cycles_to_us(cycles));
    kit_printf(" us at %lu Hz)\n", static_cast<unsigned long>(kit_cpu_clock_hz()));
    print_pool(method_buf->name, method_buf->region, method_allocator.used_size(), method_buf->size,
               "used");
    print_pool(temp_allocator.name(), temp_allocator.region(), temp_allocator.peak(),
               temp_allocator.size(), "peak");
    for (size_t id = 0; id < num_planned; ++id) {
        const PlanBuffer *b = pools.planned.find(id + 1);
        print_pool(b->name, b->region, planned_spans[id].size(), b->size, "used");
    }
    kit_usage_report_stack_heap();
    kit_usage_report("method_pool", method_allocator.used_size(), method_buf->size);
    kit_usage_report("temp_pool", temp_allocator.peak(), temp_allocator.size());
}

} // namespace

#if defined(KIT_FAST_SCRATCH_SIZE) && KIT_FAST_SCRATCH_SIZE > 0
/* Dedicated_Sram: the Ethos-U delegate hands region 2 (the fast scratch) to the driver
 * from these (weak, empty in the delegate), as upstream's runner sets them: the plan's
 * buffer. Without them the delegate passes a fast scratch of 0 bytes. */
extern "C" {
unsigned char *ethosu_fast_scratch = kit_fast_scratch;
size_t ethosu_fast_scratch_size = KIT_FAST_SCRATCH_SIZE;
}
#endif

namespace
{

/* Load and run method `method_name` of `program` once over `pools`: its inputs, execute,
 * its outputs and pools. Any failure ends the run with its exit code. */
void run_method(Program &program, const kit_runner::ProgramPools &pools, const char *method_name,
                PeakAllocator &method_allocator)
{
    Result<MethodMeta> meta = program.method_meta(method_name);
    if (!meta.ok()) {
        kit_printf("kit: no method \"%s\" in the program: error 0x%x\n", method_name,
                   static_cast<unsigned>(meta.error()));
        finish(KIT_EXIT_PROGRAM_LOAD);
    }
    const PlanBuffer *method_buf = &pools.method_pool;

    const size_t num_planned = planned_memory_spans(meta.get(), pools);
    HierarchicalAllocator planned_memory({planned_spans, num_planned});

    /* The Ethos-U delegate takes the NPU scratch (Vela region 1) from here on every execute. */
    PeakAllocator temp_allocator(pools.temp_pool);
    MemoryManager memory_manager(&method_allocator, &planned_memory, &temp_allocator);

#if defined(KIT_RUNNER_HAVE_PTD)
    /* the placed .ptd files, borrowed in place (checked at start-up) */
    static kit_runner::PtdDataMap data_map;
    const executorch::runtime::NamedDataMap *named_data = &data_map;
#else
    const executorch::runtime::NamedDataMap *named_data = nullptr;
#endif
    Result<Method> method = program.load_method(method_name, &memory_manager, nullptr, named_data);
    if (!method.ok()) {
        kit_printf("kit: loading method \"%s\" failed: error 0x%x\n", method_name,
                   static_cast<unsigned>(method.error()));
        if (method_allocator.failed_request() != 0) {
            kit_printf("kit: %s too small: %lu bytes used of %lu, %lu more asked\n",
                       method_buf->name, ul(method_allocator.used_size()), ul(method_buf->size),
                       ul(method_allocator.failed_request()));
        } else {
            kit_printf("kit: a missing kernel shows as \"Missing operator\" above: the "
                       "firmware registers only generated/kit_operators.txt\n");
        }
        finish(KIT_EXIT_METHOD_LOAD);
    }
    kit_printf("kit: method \"%s\" loaded, %lu planned buffer(s)\n", method_name, ul(num_planned));

    if (set_inputs(method.get(), meta.get(), method_allocator, pools) != Error::Ok) {
        finish(KIT_EXIT_INPUTS);
    }

    const uint64_t start = kit_cycles();
    const Error status = method->execute();
    const uint64_t cycles = kit_cycles() - start;
    if (status != Error::Ok) {
        kit_printf("kit: execute failed: error 0x%x\n", static_cast<unsigned>(status));
        if (temp_allocator.failed_request() != 0) {
            kit_printf("kit: %s too small: %lu bytes asked, %lu in the plan\n",
                       temp_allocator.name(), ul(temp_allocator.failed_request()),
                       ul(temp_allocator.size()));
        }
        finish(KIT_EXIT_EXECUTE);
    }
    if (print_outputs(method.get(), pools) != Error::Ok) {
        finish(KIT_EXIT_OUTPUTS);
    }

    report_run(cycles, method_allocator, temp_allocator, num_planned, pools);
}

/* Load `pools`' program and run the method the host names, else every method (the one
 * the project names, for an image of one program). */
void run_program(const kit_runner::ProgramPools &pools)
{
#if defined(KIT_NUM_PROGRAMS)
    kit_printf("kit: program %s, %lu-byte program\n", pools.name, ul(pools.network_size));
#if defined(KIT_FAST_SCRATCH_SIZE) && KIT_FAST_SCRATCH_SIZE > 0
    /* the fast scratch of the program's lane */
    ethosu_fast_scratch = pools.fast_scratch;
    ethosu_fast_scratch_size = pools.fast_scratch_size;
#endif
#endif
    BufferDataLoader loader(pools.network, pools.network_size);
    Result<Program> program = Program::load(&loader, Program::Verification::Minimal);
    if (!program.ok()) {
        kit_printf("kit: program load failed: error 0x%x (not a .pte, or built for another "
                   "runtime version)\n",
                   static_cast<unsigned>(program.error()));
        finish(KIT_EXIT_PROGRAM_LOAD);
    }
    /* every method of the program is loaded from the one pool, which the plan sized for all */
    PeakAllocator method_allocator(pools.method_pool);
    if (g_method[0] != '\0') {
        run_method(program.get(), pools, g_method, method_allocator);
        return;
    }
#if defined(KIT_METHOD_NAME)
    run_method(program.get(), pools, KIT_METHOD_NAME, method_allocator);
#else
    const size_t n = program->num_methods();
    if (n == 0) {
        kit_printf("kit: the program has no method\n");
        finish(KIT_EXIT_PROGRAM_LOAD);
    }
    for (size_t i = 0; i < n; ++i) {
        Result<const char *> name = program->get_method_name(i);
        if (!name.ok()) {
            finish(KIT_EXIT_PROGRAM_LOAD);
        }
        run_method(program.get(), pools, name.get(), method_allocator);
    }
#endif
}

} // namespace

int ethosu_kit_app_main(void)
{
    kit_stack_paint();
    kit_sections_init();
    if (kit_platform_init() != 0) {
        /* as the bring-up and self-test: without its board (console, caches, NPU) the run
         * would only hang until the time limit */
        kit_printf("kit: platform init failed\n");
        finish(KIT_EXIT_INIT);
    }
    read_host_command_line();
    executorch::runtime::runtime_init();
#if defined(KIT_NUM_PROGRAMS)
    kit_printf("kit: executor_runner on %s, model %s, %lu programs, mode %s\n", kit_board_name(),
               KIT_ACCELERATOR, ul(kit_runner::num_programs()), KIT_MEMORY_MODE);
#else
    kit_printf("kit: executor_runner on %s, model %s, %lu-byte program, mode %s\n",
               kit_board_name(), KIT_ACCELERATOR, ul(kit_network_size), KIT_MEMORY_MODE);
#endif
    /* The kernel table is sized at build time (MAX_KERNEL_NUM): say how full it is. */
    kit_printf("kit: %lu kernels registered\n",
               ul(executorch::runtime::get_registered_kernels().size()));

#if defined(KIT_RUNNER_HAVE_PTD)
    /* Checked before anything runs: a slot flashed with another model's .ptd is named and
     * refused, never executed. */
    if (kit_ptd_check_program() != 0) {
        finish(KIT_EXIT_DATA_MISMATCH);
    }
#endif
    size_t ran = 0;
    for (size_t i = 0; i < kit_runner::num_programs(); ++i) {
        const kit_runner::ProgramPools &pools = kit_runner::program(i);
        if (g_program[0] != '\0' && std::strcmp(g_program, pools.name) != 0) {
            continue;
        }
        run_program(pools);
        ++ran;
    }
    if (ran == 0) {
        kit_printf("kit: no program named \"%s\" in this image\n", g_program);
        finish(KIT_EXIT_PROGRAM_LOAD);
    }
    finish(KIT_EXIT_OK);
}

/*
 * The ExecuTorch platform abstraction layer (runtime/platform/platform.h) over the
 * kit SDK: ticks are CPU cycles (kit/timing.h), logs go to the UART (kit/log.h),
 * abort leaves through the board's exit so an emulator run ends with a code.
 *
 * These are strong definitions; ExecuTorch's own (built with
 * EXECUTORCH_PAL_DEFAULT=minimal) are weak and give way.
 * et_pal_allocate/et_pal_free keep the runtime's default (nullptr): every pool
 * the runtime uses comes from the generated memory plan.
 */
#include <cstdarg>
#include <cstddef>
#include <cstdint>

#include <executorch/runtime/platform/platform.h>

#include "kit/console.h"
#include "kit/log.h"
#include "kit/platform.h"
#include "kit/timing.h"

extern "C" {

void et_pal_init(void)
{
    /* The runner calls kit_platform_init() (UART, caches, timing) before runtime_init(). */
}

ET_NORETURN void et_pal_abort(void)
{
    kit_printf("kit: executorch abort\n");
    kit_hal_exit(KIT_EXIT_ABORT); /* a runtime ET_CHECK failed */
}

et_timestamp_t et_pal_current_ticks(void) { return static_cast<et_timestamp_t>(kit_cycles()); }

et_tick_ratio_t et_pal_ticks_to_ns_multiplier(void)
{
    const uint32_t hz = kit_cpu_clock_hz();
    return {1000000000ULL, hz != 0 ? hz : 1ULL};
}

void et_pal_emit_log_message(et_timestamp_t timestamp, et_pal_log_level_t level,
                             const char *filename, const char *function, size_t line,
                             const char *message, size_t length)
{
    (void)timestamp;
    (void)function;
    /* Basename only: the full build path says nothing on a UART. */
    const char *base = filename != nullptr ? filename : "?";
    for (const char *p = base; *p != '\0'; ++p) {
        if (*p == '/' || *p == '\\') {
            base = p + 1;
        }
    }
    while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == '\r')) {
        --length;
    }
    kit_printf("%c [executorch:%s:%lu] ", static_cast<char>(level), base,
               static_cast<unsigned long>(line));
    kit_write(message, length);
    kit_putc('\n');
}

/*
 * vsnprintf of the runner's link (-Wl,--wrap=vsnprintf, executor_runner.cmake): the
 * kit's formatter. ExecuTorch formats every log message with vsnprintf
 * (runtime/platform/log.cpp), and its formats use %zd/%zu (ET_PRIsize_t) and %lld
 * (PRId64), which newlib-nano's has not: it reads such an argument with the wrong
 * size, every later one shifts, and a later %s takes a wrong value as a pointer
 * ("Missing operator: [%zd] %s" printed garbage, and faults where that address is not
 * readable) while the runtime reports an error.
 */
int __wrap_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int __wrap_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
    return kit_vsnprintf(buf, n, fmt, ap);
}

#if !defined(ETHOSU_KIT_CXX_EXCEPTIONS)
/*
 * C++ exceptions: none in the firmware. The Ethos-U delegate's objects can reach
 * __cxa_throw (an inlined std::string_view bounds check), which links libstdc++'s
 * eh_alloc.o, and its start-up constructor mallocs a ~2.5 KiB emergency pool for
 * throwing when the heap is full: the image's largest heap user, never used. Nothing
 * in the image catches, so a throw would end in std::terminate anyway; these
 * definitions keep eh_alloc.o out of the link and end such a run with a line instead.
 * A team tree whose own code throws and catches builds with -DETHOSU_KIT_CXX_EXCEPTIONS.
 */
[[noreturn]] static void no_exceptions(size_t size)
{
    kit_printf("kit: a C++ exception was thrown (a %lu-byte object): the firmware is built "
               "without exception support\n",
               static_cast<unsigned long>(size));
    kit_hal_exit(KIT_EXIT_ABORT);
}

void *__cxa_allocate_exception(size_t size) noexcept;
void __cxa_free_exception(void *object) noexcept;
void *__cxa_allocate_dependent_exception() noexcept;
void __cxa_free_dependent_exception(void *object) noexcept;

void *__cxa_allocate_exception(size_t size) noexcept { no_exceptions(size); }
void __cxa_free_exception(void *object) noexcept { (void)object; }
void *__cxa_allocate_dependent_exception() noexcept { no_exceptions(0); }
void __cxa_free_dependent_exception(void *object) noexcept { (void)object; }
#endif

} /* extern "C" */

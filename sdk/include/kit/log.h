/*
 * Logging to the board's console (kit/console.h) without newlib's printf (a few hundred
 * bytes of code instead of tens of KiB). Formats: %d %i %u %x %X %p %s %c %% with optional
 * '-', '0', '+' and ' ' flags, width, precision (a %s's most characters, or '*'), and
 * 'l'/'ll'/'z' length modifiers (also 'h'/'hh'/'j'/'t'), which newlib-nano's printf
 * lacks in part ('ll', 'z'). No floating point: a %f (%e %g %a) prints as itself.
 */
#ifndef KIT_LOG_H
#define KIT_LOG_H

#include <stdarg.h>
#include <stddef.h>

/* The console the formatter writes to, for the callers that took kit_putc/kit_puts from
 * here before the console had its own header. */
#include "kit/console.h"

#ifdef __cplusplus
extern "C" {
#endif

int kit_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int kit_vprintf(const char *fmt, va_list ap);
/* The same formats into buf, C99 vsnprintf's contract: at most n bytes, NUL-terminated
 * when n > 0; returns the length the whole text has (a result >= n: cut short). */
int kit_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);

#define KIT_LOG_INFO(...) kit_printf("I: " __VA_ARGS__)
#define KIT_LOG_WARN(...) kit_printf("W: " __VA_ARGS__)
#define KIT_LOG_ERROR(...) kit_printf("E: " __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* KIT_LOG_H */

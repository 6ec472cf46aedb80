/* The kit's formatter (kit/log.h): it writes to the console (kit/console.h) or a buffer. */
#include "kit/log.h"

#include <stdint.h>
#include <stdio.h>

#include "kit/console.h"

/*
 * Where the formatter writes: the console (buf NULL), or a bounded buffer of cap bytes
 * (kit_vsnprintf). len counts every character, written or not (vsnprintf's return).
 * A plain struct, not a function pointer: the stack-path check (tests/
 * test_driver_stack_path.py) follows direct calls only.
 */
struct kit_sink {
    char *buf;
    size_t cap;
    size_t len;
};

__attribute__((noinline)) static void sink_putc(struct kit_sink *sink, char c)
{
    if (sink->buf == NULL) {
        kit_putc(c);
    } else if (sink->len + 1u < sink->cap) {
        sink->buf[sink->len] = c;
    }
    ++sink->len;
}

static void sink_pad(struct kit_sink *sink, char c, int from, int to)
{
    for (; from < to; ++from) {
        sink_putc(sink, c);
    }
}

/* sign: '-', '+', ' ' or 0 (none) */
static void put_number(struct kit_sink *sink, unsigned long long v, unsigned base, int upper,
                       int width, char pad, char sign)
{
    char buf[24];
    int n = 0;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        buf[n++] = digits[v % base];
        v /= base;
    } while (v != 0u);
    const int len = n + (sign != 0 ? 1 : 0);
    if (sign != 0 && pad == '0') {
        sink_putc(sink, sign);
    }
    sink_pad(sink, pad, len, width);
    if (sign != 0 && pad != '0') {
        sink_putc(sink, sign);
    }
    while (n > 0) {
        sink_putc(sink, buf[--n]);
    }
}

/*
 * The one formatting core. Besides what kit/log.h lists it parses, so that the
 * arguments stay in step with the format (a conversion read with the wrong size shifts
 * every later one, and a later %s then reads a wrong pointer): the '+' and ' ' flags,
 * '#' (ignored), a precision (".N" or ".*": the most characters of a %s, ignored for
 * the other conversions), the 'h'/'hh'/'j'/'t' modifiers, and %f %e %g %a, whose
 * double it takes and prints as the conversion's own text (no floating point in the
 * kit). Not a width '*' (none of the kit's or ExecuTorch's formats has one).
 */
static void kit_format(struct kit_sink *sink, const char *fmt, va_list ap)
{
    for (const char *p = fmt; *p != '\0'; ++p) {
        if (*p != '%') {
            sink_putc(sink, *p);
            continue;
        }
        const char *spec = p++;
        char pad = ' ';
        int left = 0;
        char plus = 0; /* the sign of a positive %d: '+', ' ' or none */
        int width = 0;
        int precision = -1;
        int longs = 0;
        int shorts = 0;
        int size_t_arg = 0;
        for (;; ++p) {
            if (*p == '-') {
                left = 1;
            } else if (*p == '0') {
                pad = '0';
            } else if (*p == '+' || (*p == ' ' && plus == 0)) {
                plus = *p;
            } else if (*p != '#') {
                break;
            }
        }
        if (left) {
            pad = ' ';
        }
        while (*p >= '0' && *p <= '9') {
            width = width * 10 + (*p++ - '0');
        }
        if (*p == '.') {
            ++p;
            precision = 0;
            if (*p == '*') {
                precision = va_arg(ap, int);
                ++p;
            }
            while (*p >= '0' && *p <= '9') {
                precision = precision * 10 + (*p++ - '0');
            }
        }
        while (*p == 'h') {
            ++shorts;
            ++p;
        }
        while (*p == 'l') {
            ++longs;
            ++p;
        }
        if (*p == 'j') {
            longs = 2; /* intmax_t */
            ++p;
        } else if (*p == 'z' || *p == 't') {
            size_t_arg = 1; /* size_t, ptrdiff_t: the same size */
            ++p;
        }
        switch (*p) {
        case 'd':
        case 'i':
        case 'u':
        case 'x':
        case 'X': {
            /* read unsigned (the same size as signed), sign-extended below for %d */
            unsigned long long v = longs >= 2   ? va_arg(ap, unsigned long long)
                                   : longs == 1 ? va_arg(ap, unsigned long)
                                   : size_t_arg ? va_arg(ap, size_t)
                                                : va_arg(ap, unsigned int);
            const int is_signed = *p == 'd' || *p == 'i';
            char sign = 0;
            if (is_signed) {
                const long long sv = longs >= 2    ? (long long)v
                                     : longs == 1  ? (long long)(long)v
                                     : size_t_arg  ? (long long)(ptrdiff_t)v
                                     : shorts >= 2 ? (long long)(signed char)v
                                     : shorts == 1 ? (long long)(short)v
                                                   : (long long)(int)v;
                sign = sv < 0 ? '-' : plus;
                v = sv < 0 ? 0ull - (unsigned long long)sv : (unsigned long long)sv;
            } else if (shorts != 0) {
                v = shorts >= 2 ? (unsigned char)v : (unsigned short)v;
            }
            const size_t before = sink->len;
            put_number(sink, v, is_signed || *p == 'u' ? 10u : 16u, *p == 'X', left ? 0 : width,
                       pad, sign);
            if (left) {
                sink_pad(sink, ' ', (int)(sink->len - before), width);
            }
            break;
        }
        case 'p':
            sink_putc(sink, '0');
            sink_putc(sink, 'x');
            put_number(sink, (uintptr_t)va_arg(ap, void *), 16, 0, 8, '0', 0);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (s == NULL) {
                s = "(null)";
            }
            int len = 0;
            while (s[len] != '\0' && (precision < 0 || len < precision)) {
                ++len;
            }
            if (!left) {
                sink_pad(sink, ' ', len, width);
            }
            for (int i = 0; i < len; ++i) {
                sink_putc(sink, s[i]);
            }
            if (left) {
                sink_pad(sink, ' ', len, width);
            }
            break;
        }
        case 'c':
            sink_putc(sink, (char)va_arg(ap, int));
            break;
        case '%':
            sink_putc(sink, '%');
            break;
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G':
        case 'a':
        case 'A':
            (void)va_arg(ap, double);
            for (; spec <= p; ++spec) {
                sink_putc(sink, *spec);
            }
            break;
        case '\0':
            return;
        default: /* unknown conversion: show it rather than guess */
            sink_putc(sink, '%');
            sink_putc(sink, *p);
            break;
        }
    }
}

int kit_vprintf(const char *fmt, va_list ap)
{
    struct kit_sink console = {NULL, 0, 0};
    kit_format(&console, fmt, ap);
    return (int)console.len;
}

int kit_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
    char none;
    struct kit_sink out = {buf, n, 0};
    if (n == 0u) {
        out = (struct kit_sink){&none, 1u, 0}; /* buf may be NULL: count only */
    }
    kit_format(&out, fmt, ap);
    if (n > 0u) {
        buf[out.len < n ? out.len : n - 1u] = '\0';
    }
    return (int)out.len;
}

int kit_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = kit_vprintf(fmt, ap);
    va_end(ap);
    return n;
}

/* The Ethos-U driver's fprintf (kit/driver_log.h): the console, whatever the stream. */
int kit_fprintf(FILE *stream, const char *fmt, ...);
int kit_fprintf(FILE *stream, const char *fmt, ...)
{
    (void)stream;
    va_list ap;
    va_start(ap, fmt);
    const int n = kit_vprintf(fmt, ap);
    va_end(ap);
    return n;
}

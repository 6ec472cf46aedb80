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

/* One conversion's flags, width, precision and size, as parsed from the format. */
struct kit_spec {
    char pad;
    int left;
    char plus; /* the sign of a positive %d: '+', ' ' or none */
    int width;
    int precision; /* -1: none */
    int longs;
    int shorts;
    int size_t_arg;
};

/* Flags, width, precision and size modifiers from p (just past the '%'); returns the
 * conversion character's position. ap is a pointer: ".*" takes an argument, and a
 * va_list passed by pointer stays in step with the caller's (C11 7.16p3). */
static const char *parse_spec(const char *p, struct kit_spec *spec, va_list *ap)
{
    *spec = (struct kit_spec){' ', 0, 0, 0, -1, 0, 0, 0};
    for (;; ++p) {
        if (*p == '-') {
            spec->left = 1;
        } else if (*p == '0') {
            spec->pad = '0';
        } else if (*p == '+' || (*p == ' ' && spec->plus == 0)) {
            spec->plus = *p;
        } else if (*p != '#') {
            break;
        }
    }
    if (spec->left) {
        spec->pad = ' ';
    }
    while (*p >= '0' && *p <= '9') {
        spec->width = spec->width * 10 + (*p++ - '0');
    }
    if (*p == '.') {
        ++p;
        spec->precision = 0;
        if (*p == '*') {
            spec->precision = va_arg(*ap, int);
            ++p;
        }
        while (*p >= '0' && *p <= '9') {
            spec->precision = spec->precision * 10 + (*p++ - '0');
        }
    }
    while (*p == 'h') {
        ++spec->shorts;
        ++p;
    }
    while (*p == 'l') {
        ++spec->longs;
        ++p;
    }
    if (*p == 'j') {
        spec->longs = 2; /* intmax_t */
        ++p;
    } else if (*p == 'z' || *p == 't') {
        spec->size_t_arg = 1; /* size_t, ptrdiff_t: the same size */
        ++p;
    }
    return p;
}

/* %d %i %u %x %X: read unsigned (the same size as signed), sign-extended for %d. */
static void put_integer(struct kit_sink *sink, const struct kit_spec *spec, char conv, va_list *ap)
{
    unsigned long long v = spec->longs >= 2   ? va_arg(*ap, unsigned long long)
                           : spec->longs == 1 ? va_arg(*ap, unsigned long)
                           : spec->size_t_arg ? va_arg(*ap, size_t)
                                              : va_arg(*ap, unsigned int);
    const int is_signed = conv == 'd' || conv == 'i';
    char sign = 0;
    if (is_signed) {
        const long long sv = spec->longs >= 2    ? (long long)v
                             : spec->longs == 1  ? (long long)(long)v
                             : spec->size_t_arg  ? (long long)(ptrdiff_t)v
                             : spec->shorts >= 2 ? (long long)(signed char)v
                             : spec->shorts == 1 ? (long long)(short)v
                                                 : (long long)(int)v;
        sign = sv < 0 ? '-' : spec->plus;
        v = sv < 0 ? 0ull - (unsigned long long)sv : (unsigned long long)sv;
    } else if (spec->shorts != 0) {
        v = spec->shorts >= 2 ? (unsigned char)v : (unsigned short)v;
    }
    const size_t before = sink->len;
    put_number(sink, v, is_signed || conv == 'u' ? 10u : 16u, conv == 'X',
               spec->left ? 0 : spec->width, spec->pad, sign);
    if (spec->left) {
        sink_pad(sink, ' ', (int)(sink->len - before), spec->width);
    }
}

/* %s: at most precision characters, padded to width. */
static void put_string(struct kit_sink *sink, const struct kit_spec *spec, const char *s)
{
    if (s == NULL) {
        s = "(null)";
    }
    int len = 0;
    while (s[len] != '\0' && (spec->precision < 0 || len < spec->precision)) {
        ++len;
    }
    if (!spec->left) {
        sink_pad(sink, ' ', len, spec->width);
    }
    for (int i = 0; i < len; ++i) {
        sink_putc(sink, s[i]);
    }
    if (spec->left) {
        sink_pad(sink, ' ', len, spec->width);
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
    va_list args;
    va_copy(args, ap);
    for (const char *p = fmt; *p != '\0'; ++p) {
        if (*p != '%') {
            sink_putc(sink, *p);
            continue;
        }
        const char *spec_text = p++;
        struct kit_spec spec;
        p = parse_spec(p, &spec, &args);
        switch (*p) {
        case 'd':
        case 'i':
        case 'u':
        case 'x':
        case 'X':
            put_integer(sink, &spec, *p, &args);
            break;
        case 'p':
            sink_putc(sink, '0');
            sink_putc(sink, 'x');
            put_number(sink, (uintptr_t)va_arg(args, void *), 16, 0, 8, '0', 0);
            break;
        case 's':
            put_string(sink, &spec, va_arg(args, const char *));
            break;
        case 'c': /* padded to width as C's %c is */
            sink_pad(sink, ' ', 1, spec.left ? 0 : spec.width);
            sink_putc(sink, (char)va_arg(args, int));
            sink_pad(sink, ' ', 1, spec.left ? spec.width : 0);
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
            (void)va_arg(args, double);
            for (; spec_text <= p; ++spec_text) {
                sink_putc(sink, *spec_text);
            }
            break;
        case '\0':
            va_end(args);
            return;
        default: /* unknown conversion: show it rather than guess */
            sink_putc(sink, '%');
            sink_putc(sink, *p);
            break;
        }
    }
    va_end(args);
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

#include "kit/log.h"

#include "kit/app.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

void kit_write(const char *s, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        kit_putc(s[i]);
    }
}

void kit_puts(const char *s) { kit_write(s, strlen(s)); }

static int put_number(unsigned long long v, unsigned base, int upper, int width, char pad,
                      int negative)
{
    char buf[24];
    int n = 0;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        buf[n++] = digits[v % base];
        v /= base;
    } while (v != 0u);
    int len = n + (negative ? 1 : 0);
    int out = 0;
    if (negative && pad == '0') {
        kit_putc('-');
        ++out;
    }
    for (; len < width; ++len) {
        kit_putc(pad);
        ++out;
    }
    if (negative && pad != '0') {
        kit_putc('-');
        ++out;
    }
    while (n > 0) {
        kit_putc(buf[--n]);
        ++out;
    }
    return out;
}

int kit_vprintf(const char *fmt, va_list ap)
{
    int out = 0;
    for (const char *p = fmt; *p != '\0'; ++p) {
        if (*p != '%') {
            kit_putc(*p);
            ++out;
            continue;
        }
        ++p;
        char pad = ' ';
        int left = 0;
        int width = 0;
        int longs = 0;
        int size_t_arg = 0;
        if (*p == '-') {
            left = 1;
            ++p;
        }
        if (*p == '0' && !left) {
            pad = '0';
            ++p;
        }
        while (*p >= '0' && *p <= '9') {
            width = width * 10 + (*p++ - '0');
        }
        while (*p == 'l') {
            ++longs;
            ++p;
        }
        if (*p == 'z') {
            size_t_arg = 1;
            ++p;
        }
        switch (*p) {
        case 'd':
        case 'i': {
            long long v = longs >= 2   ? va_arg(ap, long long)
                          : longs == 1 ? (long long)va_arg(ap, long)
                          : size_t_arg ? (long long)va_arg(ap, ptrdiff_t)
                                       : (long long)va_arg(ap, int);
            unsigned long long mag = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
            out += put_number(mag, 10, 0, width, pad, v < 0);
            break;
        }
        case 'u':
        case 'x':
        case 'X': {
            unsigned long long v = longs >= 2   ? va_arg(ap, unsigned long long)
                                   : longs == 1 ? va_arg(ap, unsigned long)
                                   : size_t_arg ? va_arg(ap, size_t)
                                                : va_arg(ap, unsigned int);
            const int n = put_number(v, *p == 'u' ? 10u : 16u, *p == 'X', left ? 0 : width, pad, 0);
            out += n;
            for (int i = n; left && i < width; ++i, ++out) {
                kit_putc(' ');
            }
            break;
        }
        case 'p':
            kit_puts("0x");
            out += 2 + put_number((uintptr_t)va_arg(ap, void *), 16, 0, 8, '0', 0);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (s == NULL) {
                s = "(null)";
            }
            const int len = (int)strlen(s);
            for (int i = len; !left && i < width; ++i, ++out) {
                kit_putc(' ');
            }
            kit_write(s, (size_t)len);
            out += len;
            for (int i = len; left && i < width; ++i, ++out) {
                kit_putc(' ');
            }
            break;
        }
        case 'c':
            kit_putc((char)va_arg(ap, int));
            ++out;
            break;
        case '%':
            kit_putc('%');
            ++out;
            break;
        case '\0':
            return out;
        default: /* unknown conversion: show it rather than guess */
            kit_putc('%');
            kit_putc(*p);
            out += 2;
            break;
        }
    }
    return out;
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

int kit_app_result(int code)
{
    kit_printf("kit: exit %d\n", code);
    return code;
}

/* The console over the HAL hook: the only code that calls kit_hal_console_putc. */
#include "kit/console.h"

#include <string.h>

#include "kit/hal.h"

static int console_ready;

void kit_console_ready(void) { console_ready = 1; }

void kit_putc(char c)
{
    if (console_ready) { /* before init there is nowhere to write */
        kit_hal_console_putc(c);
    }
}

void kit_write(const char *s, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        kit_putc(s[i]);
    }
}

void kit_puts(const char *s) { kit_write(s, strlen(s)); }

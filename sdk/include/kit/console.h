/*
 * The console: bytes out to wherever the board's HAL console hook sends them
 * (kit_hal_console_putc, kit/hal.h). The one owner of "is the console up yet": until
 * kit_platform_init has initialised the hook, output is dropped, because before that
 * there is nowhere to write. The formatter (kit/log.h) writes through these.
 */
#ifndef KIT_CONSOLE_H
#define KIT_CONSOLE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void kit_putc(char c);
void kit_write(const char *s, size_t n);
void kit_puts(const char *s); /* no newline added */

/* kit_hal_console_init returned 0: output goes to kit_hal_console_putc from now on.
 * kit_platform_init calls it (a team's own start-up that inits the console itself too). */
void kit_console_ready(void);

#ifdef __cplusplus
}
#endif

#endif /* KIT_CONSOLE_H */

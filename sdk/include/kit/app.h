/*
 * The entry of every kit app (bringup, executor_runner, selftest, or a team's own):
 * a team's firmware calls it from its own main once its board is up; its result is the
 * app's exit code (kit_exit_codes.h). In the kit's whole image, sdk/src/app_main.c is
 * the main that calls it.
 */
#ifndef KIT_APP_H
#define KIT_APP_H

#ifdef __cplusplus
extern "C" {
#endif

int ethosu_kit_app_main(void);

/* Print the app's last line, "kit: exit <code>", and return `code`: `ethosu-kit run`
 * takes the exit code from it on an Arm FVP, whose own exit status need not be the
 * firmware's. Every kit app ends through it (a team's own app should too), and so do
 * the fault default and the stack check: it is the only code that prints that line. */
int kit_app_result(int code);

#ifdef __cplusplus
}
#endif

#endif /* KIT_APP_H */

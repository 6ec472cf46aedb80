/* Arm semihosting calls the kit uses (Semihosting for AArch32 and AArch64, v3). */
#ifndef KIT_SEMIHOSTING_H
#define KIT_SEMIHOSTING_H

#ifdef __cplusplus
extern "C" {
#endif

/* Non-zero while a semihosting call is in flight: a fault then means no host serviced
 * it (the BKPT faults without a debugger), so the fault report must not print. */
extern volatile int kit_semihost_active;

/* SYS_EXIT_EXTENDED: the host (QEMU -semihosting) exits with `code`. Returns only
 * when no debugger/emulator serviced the call. */
void kit_semihost_exit(int code);

/* SYS_WRITEC: one character to the host's console. */
void kit_semihost_writec(char c);

#ifdef __cplusplus
}
#endif

#endif /* KIT_SEMIHOSTING_H */

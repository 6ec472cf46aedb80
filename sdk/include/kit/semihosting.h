/* Arm semihosting calls the kit uses (Semihosting for AArch32 and AArch64, v3). */
#ifndef KIT_SEMIHOSTING_H
#define KIT_SEMIHOSTING_H

#ifdef __cplusplus
extern "C" {
#endif

/* SYS_EXIT_EXTENDED: the host (QEMU -semihosting) exits with `code`. Returns only
 * when no debugger/emulator serviced the call. */
void kit_semihost_exit(int code);

#ifdef __cplusplus
}
#endif

#endif /* KIT_SEMIHOSTING_H */

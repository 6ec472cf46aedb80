/*
 * Corstone-320 specifics. The shared Armv8.1-M code (vectors, caches, UART, NPU hooks)
 * is in sdk/; the SSE-320 boots Secure with its secure aliases reachable, so the
 * bare-metal bring-up needs nothing more here yet. QEMU has no Corstone-320: images
 * for it are built, linked and ELF-checked, not run.
 */
#include "kit/platform.h"

int kit_board_init(void);

int kit_board_init(void) { return 0; }

/*
 * Corstone-300 specifics. Everything the SSE-300 shares with the SSE-320 (vectors,
 * caches, UART, NPU hooks) is in sdk/; here is only what this SoC does differently.
 * The firmware runs Secure with the secure aliases of memory and peripherals, which
 * is what the SSE-300 comes out of reset in: no SAU/MPC set-up is needed for that.
 */
#include "kit/platform.h"

int kit_board_init(void);

int kit_board_init(void) { return 0; }

/* Corstone-320 (SSE-320, Cortex-M85): what its glue needs beyond the generated board config. */
#ifndef KIT_BOARD_GLUE_H
#define KIT_BOARD_GLUE_H

/* The SSE-320 expansion interrupts the FVP wires (NPU at 16) fit in 128. */
#define KIT_BOARD_NUM_IRQS 128

#endif /* KIT_BOARD_GLUE_H */

/* Corstone-300 (SSE-300, Cortex-M55): what its glue needs beyond the generated board config. */
#ifndef KIT_BOARD_GLUE_H
#define KIT_BOARD_GLUE_H

/* External interrupts wired on the MPS3 AN552/AN547 images (NPU at 56): 96. */
#define KIT_BOARD_NUM_IRQS 96

#endif /* KIT_BOARD_GLUE_H */

/* Linked when no Ethos-U driver is: the NPU stays untouched (QEMU's reads as zero). */
#include <stddef.h>

#include "kit/platform.h"

int kit_npu_init(void) { return 0; }

void *kit_npu_driver(void) { return NULL; }

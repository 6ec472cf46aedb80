/*
 * Force-included (-include) into the Arm Ethos-U core driver's sources by
 * cmake/executorch.cmake. The driver logs its errors with fprintf(stderr, ...), and
 * newlib's first use of stdio allocates the standard FILEs from the heap (~430 B with
 * newlib 3.3 nano): a heap that `--heap auto` sized from a virtual-NPU run (which prints
 * nothing through stdio) would not hold them, and an NPU error would end in a fault
 * instead of its message. The driver's messages go to the kit console, heap-free.
 */
#ifndef KIT_DRIVER_LOG_H
#define KIT_DRIVER_LOG_H

#include <stdio.h>

int kit_fprintf(FILE *stream, const char *fmt, ...);
#define fprintf kit_fprintf

#endif /* KIT_DRIVER_LOG_H */

/*
 * What the firmware used of the memory the plan gave it: the stack's high-water mark
 * (the stack is painted with a pattern, then scanned for the deepest overwritten word)
 * and the heap's. Apps print them as `usage:` lines, which `ethosu-kit gen --stack auto
 * --heap auto` reads back to size the next image (docs/running.md).
 */
#ifndef KIT_USAGE_H
#define KIT_USAGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes at the stack's bottom no access may touch: the MPU guard the kit's start-up puts
 * there on an Armv7-M core with an MPU (0 elsewhere); the paint and the scan skip them. */
extern size_t kit_stack_guard;
/* Whether `addr` is in that guard (a MemManage fault there is a stack overflow). */
int kit_stack_guard_hit(uintptr_t addr);

/* Fill the stack below the live frame with the paint pattern. Call it first thing in
 * the app: everything above the caller's frame counts as used. Only when the live stack
 * pointer is in the plan's stack: a start-up that keeps its own stack elsewhere gets one
 * `W: stack: …` line, and the stack is then neither painted nor measured. */
void kit_stack_paint(void);
/* Bytes of the stack ever used since kit_stack_paint (the high-water mark). */
size_t kit_stack_high_water(void);
/* Bytes the linker gave the stack (__StackTop - __StackLimit). */
size_t kit_stack_size(void);
/* Bytes of the heap handed out by sbrk (newlib's malloc never gives them back). */
size_t kit_heap_used(void);
/* Bytes the heap has (__HeapLimit - __HeapBase). */
size_t kit_heap_size(void);

/* One `usage: <what> used <n> of <m> bytes` line, the format the host parses. */
void kit_usage_report(const char *what, size_t used, size_t size);
/* The stack and heap lines (and, with the virtual NPU, `stack_cpu` and `npu_entry`: the
 * stack depth where the NPU driver was entered). A stack used to its bottom word is an
 * overflow: it then prints `E: stack overflow: …` and `kit: exit 16` and does not return
 * (docs/memory.md). */
void kit_usage_report_stack_heap(void);
/* The lowest stack address at the NPU driver's entry, or 0 where it is not recorded. */
uintptr_t kit_npu_lowest_entry(void);
/* Around each virtual-NPU job: the mark so far is the CPU's; after it, the job's frames
 * are counted into the stack's mark and painted over, so that `usage: stack_cpu` is the
 * deepest the stack went outside the jobs (what an image with a real NPU driver needs,
 * with the driver's own path added from `npu_entry`). */
void kit_stack_npu_enter(void);
void kit_stack_npu_leave(void);

#ifdef __cplusplus
}
#endif

#endif /* KIT_USAGE_H */

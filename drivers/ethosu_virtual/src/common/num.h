/* ethosu-porting-kit virtual NPU: 64-bit numbers in error messages. */
#ifndef VNPU_NUM_H
#define VNPU_NUM_H

#include <stdint.h>

/*
 * Decimal text of a 64-bit value, for error messages: the firmware's C library
 * (newlib-nano) has no %lld/%llu, so a message prints VNPU_I64(x) / VNPU_U64(x) with %s.
 * The text is in a compound literal of the caller's block (C99: it lives until the block
 * ends), so several may be arguments of one snprintf.
 */
#define VNPU_NUM_LEN 21 /* "-9223372036854775808" and its NUL */
const char *vnpu_i64(char *buf, int64_t v);
const char *vnpu_u64(char *buf, uint64_t v);
#define VNPU_I64(v) vnpu_i64((char[VNPU_NUM_LEN]){0}, (int64_t)(v))
#define VNPU_U64(v) vnpu_u64((char[VNPU_NUM_LEN]){0}, (uint64_t)(v))

#endif /* VNPU_NUM_H */

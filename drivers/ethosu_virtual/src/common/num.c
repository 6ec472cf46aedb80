/* ethosu-porting-kit virtual NPU: 64-bit numbers in error messages (newlib-nano has no %lld). */
#include "common/num.h"

const char *vnpu_u64(char *buf, uint64_t v)
{
    char *p = buf + VNPU_NUM_LEN - 1;
    *p = '\0';
    do {
        *--p = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0);
    return p;
}

const char *vnpu_i64(char *buf, int64_t v)
{
    if (v >= 0) {
        return vnpu_u64(buf, (uint64_t)v);
    }
    /* the magnitude in unsigned arithmetic: -INT64_MIN does not fit an int64_t */
    char *p = (char *)vnpu_u64(buf, 0u - (uint64_t)v);
    *--p = '-';
    return p;
}

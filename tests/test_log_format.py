"""The kit's formatter (sdk/src/log.c) against the host C library's snprintf.

log.c is plain C with no target dependency, so the host compiler builds it with a
console stub; every format the kit documents (kit/log.h) must print what C99's
vsnprintf prints, and the count and truncation must follow vsnprintf's contract. The
firmware tests see the formatter only through the lines apps print; this one sees
every flag, width, precision and size modifier.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fw_helpers import host_cc

REPO = Path(__file__).resolve().parents[1]

# (format, C arguments): each is printed by kit_vsnprintf and by the host's snprintf
CASES = [
    ('"%d|%i|%u"', "-42, 7, 4000000000u"),
    ('"%5d|%-5d|%05d|%+d|% d"', "42, 42, -42, 42, 42"),
    ('"%x|%X|%08x"', "0xbeefu, 0xbeefu, 0x12u"),  # '#' is parsed and ignored (kit/log.h)
    ('"%ld|%lu|%lld|%llu"', "-5L, 5UL, -1234567890123LL, 18446744073709551615ULL"),
    ('"%zd|%zu|%td|%jd"', "(ptrdiff_t)-3, (size_t)9, (ptrdiff_t)-7, (intmax_t)-9"),
    ('"%hd|%hhd|%hu|%hhu"', "-70000, 300, 70000, 300"),
    ('"%s|%10s|%-10s|%.3s|%.*s"', '"abc", "abc", "abc", "abcdef", 2, "xyz"'),
    ('"%c%c|%%|%-3c|"', "'o', 'k', 'z'"),
    ('"[%s] %d"', '"Missing operator", 0'),
]

PROGRAM = r"""
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "kit/log.h"

void kit_putc(char c) { (void)c; }

static int kit(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = kit_vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return r;
}

int main(void)
{
    char a[256], b[256];
    int ra, rb;
%(cases)s
    /* truncation: the count is the whole text's, the buffer NUL-terminated */
    ra = kit(a, 4, "%%s", "abcdef");
    rb = snprintf(b, 4, "%%s", "abcdef");
    printf("%%d|%%s\n%%d|%%s\n", ra, a, rb, b);
    ra = kit(NULL, 0, "%%d", 12345);
    printf("%%d\n%%d\n", ra, 5);
    return 0;
}
"""


@pytest.fixture(scope="module")
def formatter(tmp_path_factory: pytest.TempPathFactory) -> str:
    cc = host_cc()
    folder = tmp_path_factory.mktemp("log")
    cases = "\n".join(
        f"    ra = kit(a, sizeof a, {fmt}, {args});\n"
        f"    rb = snprintf(b, sizeof b, {fmt}, {args});\n"
        f'    printf("%d|%s\\n%d|%s\\n", ra, a, rb, b);'
        for fmt, args in CASES
    )
    (folder / "main.c").write_text(PROGRAM % {"cases": cases})
    exe = folder / "log_test"
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-format"]
    sources = [str(folder / "main.c"), str(REPO / "sdk" / "src" / "log.c")]
    include = ["-I", str(REPO / "sdk" / "include")]
    subprocess.run([cc, *flags, *include, *sources, "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


def test_formats_equal_the_c_library(formatter: str) -> None:
    lines = formatter.splitlines()
    pairs = list(zip(lines[0::2], lines[1::2], strict=True))
    assert len(pairs) == len(CASES) + 2
    for (fmt, args), (ours, libc) in zip(CASES, pairs, strict=False):
        assert ours == libc, f"{fmt} with {args}: kit {ours!r}, C library {libc!r}"
    truncated, counted = pairs[len(CASES) :]
    assert truncated[0] == truncated[1] == "6|abc"
    assert counted[0] == counted[1] == "5"

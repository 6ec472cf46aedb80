"""The host library's build: native flags for this machine, the portable build when refused."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from ethosu_kit.vnpu import build
from fw_helpers import host_cc


def test_cache_key_holds_the_flags_and_the_cpu() -> None:
    portable = build.source_hash()
    native_a = build.source_hash((*build.NATIVE_FLAGS, "cpu A"))
    native_b = build.source_hash((*build.NATIVE_FLAGS, "cpu B"))
    assert len({portable, native_a, native_b}) == 3
    assert build.cpu_id()  # at least the architecture


def test_a_compiler_refusing_native_flags_gets_the_portable_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gcc = host_cc()
    # a compiler that rejects -march=native (as some cross or old compilers do)
    cc = tmp_path / "cc-no-native"
    cc.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = -march=native ] && '
        "{ echo 'error: unrecognized -march=native' >&2; exit 1; }; done\n"
        f'exec {gcc} "$@"\n'
    )
    cc.chmod(cc.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CC", str(cc))
    monkeypatch.setenv("ETHOSU_KIT_CACHE", str(tmp_path / "cache"))
    lib = build.library_path()
    assert lib.parent.name == f"vnpu-{build.source_hash()}"  # the portable key
    native_dir = (
        tmp_path / "cache" / f"vnpu-{build.source_hash((*build.NATIVE_FLAGS, build.cpu_id()))}"
    )
    assert "-march=native" in (native_dir / build.NATIVE_REFUSED).read_text()
    # the next process goes straight to the portable build
    assert build.library_path() == lib

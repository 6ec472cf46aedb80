"""What an Ethos-U delegate was compiled for, recovered from its compile specs.

ExecuTorch's EthosUCompileSpec stores `target` (e.g. `ethos-u85-256`) and
`compile_flags`: the Vela command line, space-joined (Vela itself is invoked with
`" ".join(args).split(" ")`), e.g. `--accelerator-config=ethos-u85-256
--config=Arm/vela.ini --output-format=raw --system-config=Ethos_U85_SYS_DRAM_Mid
--memory-mode=Dedicated_Sram_384KB`.
"""

from __future__ import annotations

import re

from ethosu_kit.npu.facts import Accelerator, MemoryMode
from ethosu_kit.pte._flatbuffer import Malformed
from ethosu_kit.pte.model import EthosUCompileSpec

ETHOSU_BACKEND_ID = "EthosUBackend"
_VALUED_FLAGS = (
    "--accelerator-config",
    "--system-config",
    "--memory-mode",
    "--config",
    "--arena-cache-size",
)


def _text(value: bytes, key: str, what: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise Malformed(f"{what}: compile spec '{key}' is not UTF-8 text") from None


def parse_flags(flags: list[str]) -> dict[str, str]:
    """The values of the flags the kit needs, for `--flag=value` and `--flag value`."""
    values: dict[str, str] = {}
    i = 0
    while i < len(flags):
        flag = flags[i]
        name, eq, value = flag.partition("=")
        if name in _VALUED_FLAGS:
            if not eq and i + 1 < len(flags) and not flags[i + 1].startswith("--"):
                value = flags[i + 1]
                i += 1
            values.setdefault(name, value)
        i += 1
    return values


def parse_ethosu_compile_spec(specs: tuple[tuple[str, bytes], ...], what: str) -> EthosUCompileSpec:
    by_key = {k: v for k, v in specs}
    if "compile_flags" not in by_key:
        raise Malformed(f"{what}: Ethos-U delegate has no 'compile_flags' compile spec")
    flags = _text(by_key["compile_flags"], "compile_flags", what).split()
    values = parse_flags(flags)
    if "target" in by_key:
        accelerator = _text(by_key["target"], "target", what)
    else:
        accelerator = values.get("--accelerator-config", "")
    configured = values.get("--accelerator-config", accelerator)
    try:
        parsed = Accelerator.parse(accelerator)  # once: every later stage gets the typed value
    except ValueError:
        raise Malformed(
            f"{what}: unknown Ethos-U accelerator {accelerator!r} in the compile specs"
        ) from None
    if configured != accelerator:
        raise Malformed(
            f"{what}: compile spec target {accelerator!r} disagrees with "
            f"--accelerator-config={configured}"
        )
    for flag in flags:
        if not flag.isprintable() or "*/" in flag or "/*" in flag:
            raise Malformed(f"{what}: compile flag {flag[:60]!r} is not plain printable text")
    mode_name = values.get("--memory-mode", "")
    try:
        if not re.fullmatch(r"[A-Za-z0-9_]+", mode_name):
            raise ValueError(mode_name)
        mode = MemoryMode.parse(mode_name)
    except ValueError:
        raise Malformed(
            f"{what}: compile flags name no known --memory-mode ({mode_name!r})"
        ) from None
    arena: int | None = None
    if "--arena-cache-size" in values:
        try:
            arena = int(values["--arena-cache-size"], 0)
        except ValueError:
            raise Malformed(
                f"{what}: --arena-cache-size={values['--arena-cache-size']} is not a number"
            ) from None
    return EthosUCompileSpec(
        accelerator=parsed,
        system_config=values.get("--system-config", ""),
        memory_mode=mode,
        memory_mode_name=mode_name,
        config_ini=values.get("--config", ""),
        flags=tuple(flags),
        arena_cache_size=arena,
    )

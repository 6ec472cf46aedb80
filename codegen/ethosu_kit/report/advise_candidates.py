"""`advise`'s candidates: which NPU configurations, memory modes, fast-scratch sizes and
Vela system configurations to try for the boards given (`Candidate`,
`choose_candidates`), and the TOSA profile each lowers for (`tosa_family`).
"""

from __future__ import annotations

import configparser
from collections.abc import Sequence
from dataclasses import dataclass

from ethosu_kit.board.model import Board
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.sizes import size_text
from ethosu_kit.npu.facts import Accelerator, MemoryMode, NpuKind, mode_refusal
from ethosu_kit.pte.vela_compile import DEFAULT_SYSTEM_CONFIG, VelaTarget
from ethosu_kit.pte.vela_config import vela_ini_path

# ExecuTorch's default mode name for Dedicated_Sram (EthosUCompileSpec for a U65)
DEFAULT_DEDICATED = "Dedicated_Sram_384KB"


# -- candidates ------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """One way to lower the model: what ExecuTorch's EthosUCompileSpec is given."""

    target: VelaTarget

    @property
    def name(self) -> str:
        t = self.target
        fast = f" fast {size_text(t.arena_cache_size)}" if t.arena_cache_size is not None else ""
        return f"{t.accelerator} {t.memory_mode}{fast} ({t.system_config})"

    @property
    def compile_spec_text(self) -> str:
        """The ExecuTorch compile spec that lowers the model this way (Python)."""
        t = self.target
        args = [
            f'"{t.accelerator}"',
            f'system_config="{t.system_config}"',
            f'memory_mode="{t.memory_mode}"',
        ]
        if t.extra_flags:
            args.append("extra_flags=[" + ", ".join(f'"{f}"' for f in t.extra_flags) + "]")
        return f"EthosUCompileSpec({', '.join(args)})"


def _vela_ini_names(kind: str) -> frozenset[str]:
    """The `[<kind>.<name>]` section names of the installed Arm/vela.ini (System_Config,
    Memory_Mode); empty when it cannot be read (then Vela itself judges the names)."""
    path = vela_ini_path()
    if path is None:
        return frozenset()
    ini = configparser.ConfigParser()
    try:
        ini.read(path, encoding="utf-8")
    except (OSError, configparser.Error):
        return frozenset()
    prefix = f"{kind}."
    return frozenset(s[len(prefix) :] for s in ini.sections() if s.startswith(prefix))


def _for_kind(system_config: str, kind: NpuKind) -> bool:
    """Does a vela.ini system config belong to `kind` (Ethos_U55_... to ethos-u55)? A name
    that names no product (a custom one) goes with every kind."""
    named = {k for k in NpuKind if f"_U{k.value[-2:]}_" in f"_{system_config}_"}
    return not named or kind in named


def choose_candidates(
    boards: Sequence[Board],
    accelerators: Sequence[str] = (),
    modes: Sequence[str] = (),
    fast_scratch: Sequence[int] = (),
    system_configs: Sequence[str] = (),
) -> tuple[Candidate, ...]:
    """The candidates the user names, the rest from what the boards allow.

    Accelerators: the given ones, else every NPU kind and MAC configuration of the
    boards. Modes: the given ones, else those a board has NPU registers for. A
    Dedicated_Sram candidate per `fast_scratch` size (Vela --arena-cache-size), else
    ExecuTorch's Dedicated_Sram_384KB. System configs: the given ones that fit the
    product, else ExecuTorch's default for it. KitError for a name none of those know.
    """
    accels: list[Accelerator] = []
    for text in accelerators:
        try:
            accels.append(Accelerator.parse(text))
        except ValueError:
            raise KitError(
                f"unknown candidate: --accelerator {text!r} is not an Ethos-U configuration",
                hint="use e.g. ethos-u55-128, ethos-u65-256 or ethos-u85-256",
            ) from None
    if not accels:
        accels = [
            Accelerator(NpuKind(kind), macs)
            for b in boards
            for kind in b.npu.kinds
            for macs in b.npu.macs.get(kind, ())
        ]
    known_modes = _vela_ini_names("Memory_Mode")
    for text in modes:
        try:
            MemoryMode.parse(text)
            if known_modes and text not in known_modes:
                raise ValueError(text)
        except ValueError:
            raise KitError(
                f"unknown candidate: --mode {text!r} is not a memory mode of Vela's Arm/vela.ini",
                hint="use "
                + (", ".join(sorted(known_modes)) or "Sram_Only, Shared_Sram or Dedicated_Sram")
                + " (--fast-scratch SIZE for other Dedicated_Sram sizes)",
            ) from None
    known = _vela_ini_names("System_Config")
    for name in system_configs:
        if known and name not in known:
            raise KitError(
                f"unknown candidate: --system-config {name!r} is not in Vela's Arm/vela.ini",
                hint="use one of " + ", ".join(sorted(known)),
            )
    out: dict[VelaTarget, None] = {}
    refused: list[str] = []
    for accel in dict.fromkeys(accels):
        kind = accel.kind
        names = list(modes) or [
            m.value
            for m in MemoryMode
            if any((kind.value, m.value) in b.npu.registers for b in boards)
        ]
        configs = [c for c in system_configs if _for_kind(c, kind)] or [
            DEFAULT_SYSTEM_CONFIG[kind.value]
        ]
        for name in names:
            mode = MemoryMode.parse(name)
            refusal = mode_refusal(kind, mode)
            if refusal:
                refused.append(refusal)
                continue
            variants: list[tuple[str, int | None]] = [(name, None)]
            if mode == MemoryMode.DEDICATED_SRAM:
                if fast_scratch:
                    variants = [(MemoryMode.DEDICATED_SRAM.value, s) for s in fast_scratch]
                elif name == MemoryMode.DEDICATED_SRAM.value and not modes:
                    variants = [(DEFAULT_DEDICATED, None)]
            for mode_name, arena in variants:
                for config in configs:
                    out[VelaTarget(accel, config, mode_name, arena)] = None
    if fast_scratch and not any(t.arena_cache_size is not None for t in out):
        raise KitError(
            "--fast-scratch sizes a Dedicated_Sram fast scratch, and no candidate runs "
            "Dedicated_Sram",
            hint="add --mode Dedicated_Sram with an Ethos-U65/U85 --accelerator",
        )
    if not out:
        why = f": {refused[0]}" if refused else ""
        raise KitError(
            f"no candidate to compile{why}", hint="name others with --accelerator/--mode"
        )
    return tuple(Candidate(t) for t in out)


def tosa_family(kind: NpuKind) -> str:
    """The TOSA profile ExecuTorch lowers for `kind` (EthosUCompileSpec._tosa_spec_for_target):
    the U55 and U65 share the "+u55" subset, the U85 has its own."""
    return "u85" if kind == NpuKind.U85 else "u55"

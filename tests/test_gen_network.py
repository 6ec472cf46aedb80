"""kit_network.S: a 4 MiB network assembles in seconds (.incbin, not a C array)."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from ethosu_kit.board.loader import load_board
from ethosu_kit.core import paths
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.pte import read_pte
from ethosu_kit.render.project import render_project

SIZE = 4 * 1024 * 1024


@pytest.mark.firmware
def test_four_mib_network_assembles_quickly(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None:
        pytest.skip("arm-none-eabi-gcc is not installed (scripts/install.sh installs it)")
    model = read_pte(data_pte_u55_shared)
    plan = plan_memory(model, load_board("corstone-300"), None)
    # A synthetic 4 MiB network in place of the real one: the template only sees bytes.
    blob = bytes((i * 2654435761 >> 13) & 0xFF for i in range(SIZE // 4)) * 4
    plan = dataclasses.replace(plan, model_sha256=hashlib.sha256(blob).hexdigest())
    files = render_project(model, plan, blob, kit_dir=paths.kit_root().resolve())
    gen = tmp_path / "generated"
    gen.mkdir()
    # kit_network.S includes kit_sections.h (the section names, one header for C, asm, ld)
    for rel in ("generated/kit_network.S", "generated/model.pte", "generated/kit_sections.h"):
        (tmp_path / rel).write_bytes(files[rel])
    start = time.perf_counter()
    subprocess.run(
        [gcc, "-mcpu=cortex-m55", "-mthumb", "-I.", "-c", "kit_network.S", "-o", "net.o"],
        cwd=gen,
        check=True,
        timeout=120,
    )
    seconds = time.perf_counter() - start
    print(f"\nkit_network.S with a {SIZE >> 20} MiB network: assembled in {seconds:.3f} s")
    with (gen / "net.o").open("rb") as f:
        elf = ELFFile(f)
        syms = {s.name: s for s in elf.get_section_by_name(".symtab").iter_symbols()}
        network = syms["kit_network"]
        assert network["st_size"] == SIZE
        assert network["st_value"] % 16 == 0
        section = elf.get_section(network["st_shndx"])
        assert section.name == ".kit.network"
        assert section["sh_addralign"] >= 16
        assert section.data()[:SIZE] == blob
        size_sym = syms["kit_network_size"]
        data = elf.get_section(size_sym["st_shndx"]).data()
        offset = size_sym["st_value"]
        assert int.from_bytes(data[offset : offset + 4], "little") == SIZE

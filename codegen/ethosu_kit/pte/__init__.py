"""Read an ExecuTorch .pte without torch or executorch (stage 1: pte -> ModelInfo).

Public API:

- `read_pte(path) -> ModelInfo`: methods, IO tensors, planned buffers per mem_id,
  constant data, the CPU operators the firmware must register, every delegate with
  its compile specs and, for Ethos-U delegates, the Vela stream summary
  (`VelaStream`) and the target it was compiled for (`EthosUCompileSpec`).
- `read_vela_streams(path) -> list[VelaBlocks]`: raw access to each Ethos-U
  delegate's payload, in method then delegate order: `cmd_data` (COP1 driver
  actions + register command stream; `command_stream` is the latter alone, `cop`
  the parsed header), `weight_data` (region 0), `scratch_size` (region 1 bytes),
  `inputs` / `outputs` (`VelaTensor`: 6-D shape, elem size, offset, region) and
  every block as written (`blocks`). External blocks are resolved through the
  program's named data.
- `parse_pte(data, path)` / `vela_streams(data, path)`: the same from bytes.

Every malformed input (too short, wrong identifier, truncated, corrupt offsets,
random bytes) raises `ethosu_kit.core.errors.PteError` with one line naming the file and
what is wrong. Layers, as the bytes are read:

- `container`: header, extended header ("eh00"), segments;
- `program`: the schema's tables (program.fbs) as plain records, through the
  bounds-checked accessors of `_flatbuffer`;
- `vela`: the Vela block stream and the COP1 header;
- `compile_spec`: accelerator, system config, memory mode, flags;
- `reader`: ModelInfo;
- `quant`: the method's IO quantization and how each delegate argument meets the method.
"""

from ethosu_kit.pte.reader import parse_pte, read_pte, read_vela_streams, vela_streams
from ethosu_kit.pte.vela import VelaBlock, VelaBlocks

__all__ = [
    "VelaBlock",
    "VelaBlocks",
    "parse_pte",
    "read_pte",
    "read_vela_streams",
    "vela_streams",
]

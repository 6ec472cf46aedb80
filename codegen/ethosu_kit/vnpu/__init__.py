"""The virtual Ethos-U55/U65/U85 on the host: the C library of drivers/ethosu_virtual over ctypes.

- `VirtualNpu`: one NPU instance (the driver API: invoke a COP1 stream on regions),
  plus the library's disassembler and MLW decoder for tests and tools;
- `run_delegate(blocks, inputs)`: run one Ethos-U delegate of a .pte (its Vela
  payload from `ethosu_kit.pte.read_vela_streams`) on integer inputs;
  `PreparedDelegate(blocks, npu)`: the same, prepared once for many inferences.

The library is compiled on first use with the host C compiler into a cache folder
keyed by the sources' hash (`ethosu_kit.vnpu.build.library_path`).
"""

from ethosu_kit.vnpu.delegate import PreparedDelegate, run_delegate
from ethosu_kit.vnpu.npu import Mutation, VirtualNpu, VnpuError

__all__ = ["Mutation", "PreparedDelegate", "VirtualNpu", "VnpuError", "run_delegate"]

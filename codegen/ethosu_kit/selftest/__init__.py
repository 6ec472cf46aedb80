"""The self-test app's vectors: inputs and the virtual NPU's expected outputs, built
into the firmware.

`vectors` is a leaf over `pte` (the vector layout and its size, which the planner
needs); `make` computes the vectors with the virtual NPU and reads them back from a
project.

`vectors` may import: `pte`, `npu`, `core`. `make` may import anything below
`firmware` (`inputs`, `render`, `vnpu`, `plan`, ...).
"""

"""Ahead-of-time helpers that need torch and ExecuTorch: lowering a model to a .pte
and the kit's example model.

torch/executorch are imported inside the functions that use them, so importing this
package is cheap; the rest of the library never imports it (only `cli`).

May import: `core`.
"""

"""What the plan holds per app: the code and data the linker will need (estimates kept
free), whether the ExecuTorch runner's pools are planned, the default stack and heap,
and the method pool's estimate from the program.

Policy, written once: the planner, the pipeline (defaults) and the reports read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ethosu_kit.core.sizes import align_up
from ethosu_kit.pte.model import MethodInfo

KIB = 1024


# Method allocator: what Method::init allocates, per item, on a 32-bit target.
# Conservative per-item costs (each includes allocator alignment padding):
METHOD_PER_VALUE = 16  # one EValue (8-byte payload + tag, 8-aligned)


METHOD_PER_TENSOR = 96  # TensorImpl (~48) + strides/dim_order copies for up to 8 dims


METHOD_PER_INSTRUCTION = 64  # Instruction + kernel pointer + argument list (~8 args)


METHOD_PER_DELEGATE = 128  # BackendDelegate + compile-spec list + handle bookkeeping


METHOD_PER_PLANNED = 16  # Span of one memory-planned buffer


METHOD_FIXED = 1 * KIB  # chains, input/output index tables, delegate-name strings


# Linker-sized parts the plan must leave room for (override with PlanOptions.*_reserve).
# executor_runner: runtime core ~69 KB, prim ops ~16 KB, delegate ~7 KB, driver ~9 KB,
# selected kernels and libc/libstdc++ (measured on the firmware side).
# selftest: ~103 KB of code with the virtual NPU (GCC 12, U55 and U65 streams), less with
# the Arm driver; ~7 KiB of statics (the virtual NPU's state and per-run tables).
# The runner's stack and heap (PlanOptions' defaults): what an app is planned with when
# no size is given and the app has none of its own.
RUNNER_STACK = 16 * KIB
RUNNER_HEAP = 32 * KIB


class App(StrEnum):
    """The kit's own apps (apps/<name>/; cmake/EthosUKitFirmware.cmake lists the same),
    each carrying its plan policy. `build --app` also takes a folder of the user's."""

    EXECUTOR_RUNNER = "executor_runner"
    BRINGUP = "bringup"
    SELFTEST = "selftest"

    @property
    def code_estimate(self) -> int:
        return _POLICY[self].code

    @property
    def data_estimate(self) -> int:
        return _POLICY[self].data

    @property
    def runner_pools(self) -> bool:
        """Does its plan hold the ExecuTorch runner's pools (planned buffers, IO copies,
        the method pool)? Only the self-test's does not."""
        return _POLICY[self].runner_pools

    @property
    def stack_heap(self) -> tuple[int, int]:
        """The stack and heap it is planned with when no size is given."""
        return _POLICY[self].stack_heap


@dataclass(frozen=True)
class _Policy:
    code: int  # bytes kept free for its .text/.rodata
    data: int  # bytes kept free for its .data/.bss
    runner_pools: bool
    stack_heap: tuple[int, int] = (RUNNER_STACK, RUNNER_HEAP)


# Only the self-test has no ExecuTorch runner pools (planned_<i>, input_<i>/output_<i>
# copies, method_pool): it runs the command streams itself, from the temp pool, the fast
# scratch and its vectors. The runner uses them, bringup proves them on the board. The
# self-test's deepest stack is ~2.4 KiB with GCC and ~5.7 KiB with clang-19 (the virtual
# NPU's frames, docs/memory.md); its heap a few hundred bytes.
_POLICY = {
    App.EXECUTOR_RUNNER: _Policy(320 * KIB, 32 * KIB, runner_pools=True),
    App.BRINGUP: _Policy(32 * KIB, 8 * KIB, runner_pools=True),
    App.SELFTEST: _Policy(192 * KIB, 16 * KIB, runner_pools=False, stack_heap=(8 * KIB, 4 * KIB)),
}


def method_pool_size(method: MethodInfo) -> tuple[int, str]:
    """Conservative method-allocator need of one method, with the arithmetic spelled out."""
    n_planned = len(method.planned_buffers)
    parts = [
        (method.num_values, METHOD_PER_VALUE, "values"),
        (method.num_tensors, METHOD_PER_TENSOR, "tensors"),
        (method.num_instructions, METHOD_PER_INSTRUCTION, "instructions"),
        (len(method.delegates), METHOD_PER_DELEGATE, "delegates"),
        (n_planned, METHOD_PER_PLANNED, "planned buffers"),
    ]
    total = sum(n * per for n, per, _ in parts) + METHOD_FIXED
    size = align_up(total, 256)
    terms = " + ".join(f"{n} {what} x {per}" for n, per, what in parts)
    return size, f"estimate {terms} + fixed {METHOD_FIXED} = {total}, rounded to 256 = {size}"

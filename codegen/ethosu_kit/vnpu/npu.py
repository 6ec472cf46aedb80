"""ctypes binding of the virtual NPU library (drivers/ethosu_virtual)."""

from __future__ import annotations

import ctypes
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ethosu_kit.core.errors import KitError
from ethosu_kit.npu.facts import NPU_ALIGN
from ethosu_kit.vnpu.build import library_path

U55_128_CONFIG = 0x00001807
U55_ID = 0x10066001


# the library keeps the pointer ethosu_virtual_set_workspace gets: keep its array alive
_workspace: list[npt.NDArray[np.uint8]] = []


class VnpuError(KitError):
    """The virtual NPU refused or failed a job; the message is the library's reason."""


class Mutation(enum.IntFlag):
    """Deliberately wrong rules (ethosu_virtual_mutation), to prove a test can fail."""

    NONE = 0
    NATURAL_FLOOR = 1 << 0
    NO_BIAS = 1 << 1
    CLAMP_32BIT = 1 << 2
    SHIFT_18 = 1 << 3
    U85_NO_SERPENTINE = 1 << 4
    U85_MINMAX_UNSCALED = 1 << 5
    U85_AVG_FLOOR = 1 << 6
    U85_TRANSPOSE_SWAP = 1 << 7
    U85_FWD_NO_INTERLEAVE = 1 << 8
    U85_SPARSE_AS_DENSE = 1 << 9
    U85_CMP_TRUE_ONE = 1 << 10
    U85_B64_LOW32 = 1 << 11
    U85_GATHER_NO_INDEX = 1 << 12
    U85_ACC_KEEP_AS_RESET = 1 << 13
    U85_CONV_IFM2_IGNORED = 1 << 14


@cache
def _lib() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(library_path()))
    u64p = ctypes.POINTER(ctypes.c_uint64)
    szp = ctypes.POINTER(ctypes.c_size_t)
    sigs: dict[str, tuple[object, list[object]]] = {
        "ethosu_virtual_driver_size": (ctypes.c_size_t, []),
        "ethosu_init": (
            ctypes.c_int,
            [
                ctypes.c_void_p,
                ctypes.c_void_p,
                ctypes.c_void_p,
                ctypes.c_size_t,
                ctypes.c_uint32,
                ctypes.c_uint32,
            ],
        ),
        "ethosu_deinit": (None, [ctypes.c_void_p]),
        "ethosu_virtual_set_hw": (None, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]),
        "ethosu_virtual_last_error": (ctypes.c_char_p, [ctypes.c_void_p]),
        "ethosu_virtual_set_mutation": (None, [ctypes.c_uint32]),
        "ethosu_virtual_workspace_peak": (ctypes.c_size_t, []),
        "ethosu_virtual_set_workspace": (None, [ctypes.c_void_p, ctypes.c_size_t]),
        "ethosu_virtual_reset_workspace_peak": (None, []),
        "ethosu_invoke_v3": (
            ctypes.c_int,
            [
                ctypes.c_void_p,
                ctypes.c_void_p,
                ctypes.c_int,
                u64p,
                szp,
                ctypes.c_int,
                ctypes.c_void_p,
            ],
        ),
        "ethosu_virtual_run_job": (ctypes.c_int, [ctypes.c_void_p]),
        "ethosu_virtual_disasm": (
            ctypes.c_int,
            [ctypes.c_void_p, ctypes.c_size_t, szp, ctypes.c_char_p, ctypes.c_size_t],
        ),
        "ethosu_virtual_disasm_product": (
            ctypes.c_int,
            [
                ctypes.c_uint32,
                ctypes.c_void_p,
                ctypes.c_size_t,
                szp,
                ctypes.c_char_p,
                ctypes.c_size_t,
            ],
        ),
        "ethosu_virtual_mlw_decode": (
            ctypes.c_long,
            [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t],
        ),
        "ethosu_virtual_fwd_decode": (
            ctypes.c_long,
            [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t],
        ),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def aligned_bytes(size: int, data: bytes | None = None) -> npt.NDArray[np.uint8]:
    """A zeroed uint8 array of `size` bytes whose address is 16-byte aligned (as the NPU needs)."""
    raw = np.zeros(size + NPU_ALIGN, dtype=np.uint8)
    start = (-raw.ctypes.data) % NPU_ALIGN
    buf = raw[start : start + size]
    if data is not None:
        buf[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    return buf


class VirtualNpu:
    """One virtual Ethos-U (U55-128 unless told otherwise), driven through the driver API."""

    def __init__(self, config: int = U55_128_CONFIG, npu_id: int = U55_ID) -> None:
        lib = _lib()
        self._lib = lib
        self._drv: ctypes.Array[ctypes.c_char] | None = ctypes.create_string_buffer(
            lib.ethosu_virtual_driver_size()
        )
        if lib.ethosu_init(self._drv, None, None, 0, 0, 0) != 0:
            raise VnpuError("ethosu_init of the virtual NPU failed")
        lib.ethosu_virtual_set_hw(self._drv, config, npu_id)
        # the aligned copy of the last command stream: a delegate run again reuses it
        self._cmd: tuple[bytes, npt.NDArray[np.uint8]] | None = None
        # what callers prepare once per stream and reuse (ethosu_kit.vnpu.delegate's plans)
        self.plans: dict[object, tuple[object, object]] = {}

    def close(self) -> None:
        if self._drv is not None:
            self._lib.ethosu_deinit(self._drv)
            self._drv = None

    def __enter__(self) -> VirtualNpu:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    @staticmethod
    def set_mutation(mask: Mutation | int) -> None:
        _lib().ethosu_virtual_set_mutation(int(mask))

    @staticmethod
    def set_workspace(mem: npt.NDArray[np.uint8] | None) -> None:
        """Use `mem` as the library's working memory (None: its static default again)."""
        _workspace.clear()
        if mem is None:
            _lib().ethosu_virtual_set_workspace(None, 0)
        else:
            _workspace.append(mem)
            _lib().ethosu_virtual_set_workspace(mem.ctypes.data, mem.nbytes)

    @staticmethod
    def workspace_peak(reset: bool = False) -> int:
        """Most working memory one operation used (bytes) since start or the last reset."""
        lib = _lib()
        peak = int(lib.ethosu_virtual_workspace_peak())
        if reset:
            lib.ethosu_virtual_reset_workspace_peak()
        return peak

    def prepare(
        self,
        cmd_data: bytes,
        regions: Sequence[npt.NDArray[np.uint8]],
        weights: npt.NDArray[np.uint8] | None = None,
        zero_regions: int = 0,
        copy_in: Sequence[tuple[npt.NDArray[Any], npt.NDArray[Any]]] = (),
    ) -> Job:
        """A job that runs `cmd_data` on these regions (kept alive by the job) each time
        it is given to `run`: the aligned command copy and the library's job record are made
        once, not per inference. Each run first copies `weights` into regions[0] (unless
        the last run left them there: the library proves that the stream cannot write
        region 0; `weights` must not change), zeroes the regions whose bit is set in
        `zero_regions` and copies each (source, destination) pair of `copy_in` (contiguous
        arrays of equal size, kept alive by the job), inside the same library call."""
        if self._drv is None:
            raise VnpuError("the virtual NPU is closed")
        if self._cmd is None or self._cmd[0] is not cmd_data:
            self._cmd = (cmd_data, aligned_bytes(len(cmd_data), cmd_data))
        n = len(regions)
        bases = (ctypes.c_uint64 * n)(*(r.ctypes.data for r in regions))
        sizes = (ctypes.c_size_t * n)(*(r.nbytes for r in regions))
        for src, dst in copy_in:
            if src.nbytes != dst.nbytes or not (src.flags.c_contiguous and dst.flags.c_contiguous):
                raise VnpuError("a copy_in pair is not two contiguous arrays of one size")
        copies = (_NativeCopy * max(1, len(copy_in)))(
            *(_NativeCopy(src.ctypes.data, dst.ctypes.data, src.nbytes) for src, dst in copy_in)
        )
        native = _NativeJob(
            drv=ctypes.addressof(self._drv),
            custom_data=self._cmd[1].ctypes.data,
            base_addr=ctypes.addressof(bases),
            base_addr_size=ctypes.addressof(sizes),
            weights=None if weights is None else weights.ctypes.data,
            weights_size=0 if weights is None else weights.nbytes,
            custom_data_size=len(cmd_data),
            num_base_addr=n,
            zero_regions=zero_regions,
            num_copy_in=len(copy_in),
            copy_in=ctypes.addressof(copies),
        )
        return Job(
            cmd=self._cmd[1],
            regions=tuple(regions),
            weights=weights,
            keep=(bases, sizes, tuple(copy_in)),
            copies=copies,
            native=native,
            addr=ctypes.addressof(native),
            drv=self._drv,
        )

    def run(self, job: Job) -> None:
        """Run a prepared job (of this NPU)."""
        if self._drv is None:
            raise VnpuError("the virtual NPU is closed")
        if job.drv is not self._drv:
            raise VnpuError("the job was prepared for another virtual NPU")
        rc = self._lib.ethosu_virtual_run_job(job.addr)
        if rc != 0:
            self._failed(rc)

    def _failed(self, rc: int) -> None:
        """Raise the library's reason for the job that returned `rc`."""
        reason = (self._lib.ethosu_virtual_last_error(self._drv) or b"").decode()
        raise VnpuError(f"virtual NPU: {reason or f'ethosu_invoke_v3 returned {rc}'}")

    def runner(self, job: Job) -> Callable[[], None]:
        """`run(job)` as a call without arguments, for a caller that runs one job many times:
        the library function and the job's address bound once."""
        run_job, addr = self.native_run(job)

        def run() -> None:
            if self._drv is None:
                raise VnpuError("the virtual NPU is closed")
            rc = run_job(addr)
            if rc != 0:
                self._failed(rc)

        return run

    def native_run(self, job: Job) -> tuple[Callable[[ctypes.c_void_p], int], ctypes.c_void_p]:
        """The library's run of `job` as a function and its argument, for a caller that
        inlines `run(job)` (a small model's whole run is a few microseconds, a Python call
        layer a tenth of one): check `closed` first, then pass a non-zero result to
        `failed`."""
        if job.drv is not self._drv:
            raise VnpuError("the job was prepared for another virtual NPU")
        # a handle without argtypes, called with a ready c_void_p: ctypes passes it as is
        # (converting the address through argtypes was a third of the call's cost, which is
        # a sizeable part of a small model's run); restype stays the default, c_int
        lib = self._lib
        run_job = lib._FuncPtr(("ethosu_virtual_run_job", lib))
        return run_job, ctypes.c_void_p(job.addr)

    @property
    def closed(self) -> bool:
        """True after `close()`: no job runs any more."""
        return self._drv is None

    def failed(self, rc: int) -> None:
        """Raise the library's reason for the job that returned `rc`."""
        self._failed(rc)

    def invoke(self, cmd_data: bytes, regions: Sequence[npt.NDArray[np.uint8]]) -> None:
        """Run a COP1 payload with base_addr[i] = regions[i] (16-byte aligned uint8 arrays)."""
        if self._drv is None:
            raise VnpuError("the virtual NPU is closed")
        self.run(self.prepare(cmd_data, regions))


class _NativeCopy(ctypes.Structure):
    """struct ethosu_virtual_copy (include/ethosu_virtual.h)."""

    _fields_ = [("src", ctypes.c_void_p), ("dst", ctypes.c_void_p), ("bytes", ctypes.c_size_t)]


class _NativeJob(ctypes.Structure):
    """struct ethosu_virtual_job (include/ethosu_virtual.h)."""

    _fields_ = [
        ("drv", ctypes.c_void_p),
        ("custom_data", ctypes.c_void_p),
        ("base_addr", ctypes.c_void_p),
        ("base_addr_size", ctypes.c_void_p),
        ("weights", ctypes.c_void_p),
        ("weights_size", ctypes.c_size_t),
        ("custom_data_size", ctypes.c_int),
        ("num_base_addr", ctypes.c_int),
        ("zero_regions", ctypes.c_uint32),
        ("num_copy_in", ctypes.c_int),
        ("copy_in", ctypes.c_void_p),
        ("weights_kept", ctypes.c_uint32),  # the library's (0: copy the weights in)
    ]


@dataclass(frozen=True)
class Job:
    """A command stream and its regions, ready for `VirtualNpu.run`: `native` is the
    library's job record (at `addr`); the arrays it points into are kept alive here."""

    cmd: npt.NDArray[np.uint8]
    regions: tuple[npt.NDArray[np.uint8], ...]
    weights: npt.NDArray[np.uint8] | None
    keep: tuple[object, ...]
    copies: ctypes.Array[_NativeCopy]  # the copy_in pairs as the library reads them
    native: _NativeJob
    addr: int
    drv: object

    def set_copy_source(self, index: int, address: int) -> None:
        """Make copy_in pair `index` read from `address` from the next run on: memory of
        the pair's size that the caller keeps alive while it is the source."""
        self.copies[index].src = address


def disassemble(command_stream: bytes, product: int = 0) -> list[str]:
    """One line per command: '<offset> <code> <NAME> field=value ...' (the library's decoder).

    `product` is CONFIG.product of the NPU the stream is for (0 U55, 1 U65, 2 U85).
    """
    lib = _lib()
    words = np.frombuffer(command_stream, dtype="<u4").copy()
    index = ctypes.c_size_t(0)
    buf = ctypes.create_string_buffer(512)
    lines = []
    while index.value < len(words):
        before = index.value
        rc = lib.ethosu_virtual_disasm_product(
            product, words.ctypes.data, len(words), ctypes.byref(index), buf, len(buf)
        )
        lines.append(buf.value.decode())
        if rc != 0 or index.value == before:
            break
    return lines


def mlw_decode(stream: bytes, max_values: int | None = None) -> npt.NDArray[np.int16]:
    """Decode an MLW weight stream with the library's decoder."""
    limit = max_values if max_values is not None else max(64, len(stream) * 16)
    src = np.frombuffer(stream, dtype=np.uint8).copy()
    while True:
        out = np.zeros(limit, dtype=np.int16)
        n = _lib().ethosu_virtual_mlw_decode(src.ctypes.data, len(src), out.ctypes.data, limit)
        if n != -2 or max_values is not None:
            break
        limit *= 4  # zero runs make the output unbounded by the input size
    if n == -2:
        raise VnpuError(f"MLW weight stream decodes to more than {limit} values")
    if n < 0:
        raise VnpuError(f"malformed MLW weight stream ({len(stream)} bytes)")
    return out[:n]


def fwd_decode(stream: bytes) -> npt.NDArray[np.int16]:
    """Every code of an Ethos-U85 FWD weight stream, decoded by the library (padding included)."""
    src = np.frombuffer(stream, dtype=np.uint8).copy()
    limit = max(1, len(stream) * 4)
    out = np.zeros(limit, dtype=np.int16)
    n = _lib().ethosu_virtual_fwd_decode(src.ctypes.data, len(src), out.ctypes.data, limit)
    if n < 0:
        raise VnpuError(f"malformed FWD weight stream ({len(stream)} bytes)")
    return out[:n]

"""Arrays a user gives the kit (`.npy` / `.npz`): loaded with every header checked first.

The one loader of user arrays, for `simulate --inputs`, `run --inputs` and test
vectors. NumPy's own `np.load` trusts a file's header: it allocates whatever shape
the header declares and returns object, string or datetime arrays as readily as
integers. Here, before a byte of data is read:

- the file is a regular file within `files.MAX_INPUT` (a FIFO or /dev/zero is refused);
- its format is known by its magic, not its name: `\\x93NUMPY` is one array, a zip
  (`PK`) is an `.npz` whose members must each be an `.npy`; a corrupt zip, a raw
  member, an unknown npy version or a bad header is one error naming the file and
  the member;
- the dtype is a plain number (bool, integer, float): object, structured, string,
  datetime and complex arrays are refused by name;
- the declared shape times the item size must be the bytes the file (or member)
  actually holds, and within the limit, so a header claiming 10^12 elements never
  allocates;
- a float array holds no NaN or infinity (refused for every command alike).

API:

- `load_arrays(paths) -> list[NamedArray]`: every array of every file, in order
  (an `.npz`'s in its member order); `NamedArray.source` is `x.npy` or `in.npz[key]`
  for messages.
- `conform(named, dtype, shape, what) -> ndarray`: the array as a tensor of `dtype`
  and `shape` (an integer dtype), refusing a wrong element count, a float array
  (with a hint to quantize) and values outside the dtype's range.
- `save_npz(path, arrays)`: write an `.npz` atomically (a temporary sibling renamed
  over the target), after checking the target is not a folder nor under a file.
"""

from __future__ import annotations

import io
import lzma
import struct
import tokenize
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
from numpy.lib import format as npy_format

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_INPUT, open_regular, too_large
from ethosu_kit.core.writer import write_file_atomic

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
# An .npz is a handful of tensors (a method's inputs and outputs): at most this many
# members, checked from the zip's end record before its directory is parsed.
MAX_NPZ_MEMBERS = 1024
_NPZ_COMPRESSION = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)  # np.savez, np.savez_compressed
_EOCD_SEARCH = 22 + 0xFFFF  # the end record and the longest zip comment
_MAX_HEADER = 10_000  # numpy's own default bound on an .npy header
# dtype kinds the kit accepts: b bool, i signed, u unsigned, f float (refused by conform)
_NUMERIC_KINDS = {"b": "bool", "i": "integer", "u": "unsigned integer", "f": "float"}
_REFUSED_KINDS = {
    "O": "object (pickled Python objects)",
    "V": "structured (record fields)",
    "S": "byte string",
    "U": "text string",
    "M": "datetime",
    "m": "timedelta",
    "c": "complex",
}

Array = npt.NDArray[Any]


class InputError(KitError):
    """An input array file that cannot be used."""


@dataclass(frozen=True)
class NamedArray:
    source: str  # `x.npy` or `in.npz[key]`
    array: Array


def _check_dtype(source: str, dtype: np.dtype[Any]) -> None:
    if dtype.fields is not None or dtype.subdtype is not None:
        kind = "structured (record fields)" if dtype.fields else f"sub-array {dtype}"
        raise InputError(f"{source}: dtype {dtype} is {kind}; inputs are plain number arrays")
    if dtype.kind in _REFUSED_KINDS:
        raise InputError(
            f"{source}: dtype {dtype} is {_REFUSED_KINDS[dtype.kind]}; "
            "inputs are plain number arrays",
            hint="save the quantized integers the NPU sees, e.g. np.save(f, x.astype(np.int8))",
        )
    if dtype.kind not in _NUMERIC_KINDS or dtype.itemsize == 0:
        raise InputError(f"{source}: dtype {dtype} is not a number type")


def _read_npy(f: IO[bytes], source: str, available: int) -> Array:
    """One .npy from a stream holding `available` bytes from its start."""
    npy: Any = npy_format  # untyped in numpy's stubs
    try:
        version = npy.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = npy.read_array_header_1_0(f, max_header_size=_MAX_HEADER)
        elif version == (2, 0):
            shape, fortran, dtype = npy.read_array_header_2_0(f, max_header_size=_MAX_HEADER)
        else:
            raise InputError(f"{source}: .npy format version {version} is not read by the kit")
    # numpy re-reads a header it cannot parse with tokenize (Python 2's headers), which
    # raises TokenError on a cut-off dict; a deeply bracketed one can recurse
    except (ValueError, SyntaxError, EOFError, tokenize.TokenError, RecursionError) as exc:
        raise InputError(f"{source}: not a valid .npy header ({_one_line(exc)})") from None
    _check_dtype(source, dtype)
    if any(d < 0 for d in shape):
        raise InputError(f"{source}: header declares a negative dimension {shape}")
    count = 1
    for d in shape:
        count *= d
    nbytes = count * dtype.itemsize
    header = f.tell() if f.seekable() else None
    body = available - header if header is not None else available
    if nbytes > MAX_INPUT.bytes:
        raise too_large(f"{source} (shape {tuple(shape)} {dtype})", nbytes, MAX_INPUT, InputError)
    if nbytes > body:
        raise InputError(
            f"{source}: header declares shape {tuple(shape)} {dtype} ({nbytes} bytes), "
            f"the file holds {max(body, 0)} bytes of data"
        )
    data = f.read(nbytes)
    if len(data) != nbytes:
        raise InputError(f"{source}: truncated: {len(data)} of {nbytes} data bytes")
    array = np.frombuffer(data, dtype=dtype, count=count)
    return array.reshape(shape, order="F" if fortran else "C").copy()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def _member_count(f: IO[bytes], size: int) -> int | None:
    """The member count the zip's end record declares (None when there is none to find),
    read before zipfile parses a central directory of that many entries."""
    tail_size = min(size, _EOCD_SEARCH)
    f.seek(size - tail_size)
    tail = f.read(tail_size)
    f.seek(0)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        return None
    (total,) = struct.unpack_from("<H", tail, at + 10)
    return int(total)


def _check_members(path: Path, infos: list[zipfile.ZipInfo]) -> None:
    """Bound the archive from its directory, before a byte of any member is expanded:
    how many members, what they expand to in all, and how they are stored."""
    if len(infos) > MAX_NPZ_MEMBERS:
        raise InputError(
            f"{path}: {len(infos)} members; the kit reads at most {MAX_NPZ_MEMBERS} arrays "
            "from one .npz"
        )
    total = sum(info.file_size for info in infos)
    if total > MAX_INPUT.bytes:
        raise too_large(f"{path} (expanded)", total, MAX_INPUT, InputError)
    for info in infos:
        name = info.filename.removesuffix(".npy")[:80]
        if info.flag_bits & 0x1:
            raise InputError(f"{path}[{name}]: an encrypted member; the kit reads plain .npz")
        if info.compress_type not in _NPZ_COMPRESSION:
            raise InputError(
                f"{path}[{name}]: compression method {info.compress_type} is not one numpy "
                "writes (stored or deflate)",
                hint="write the file with np.savez or np.savez_compressed",
            )


def _read_npz(f: IO[bytes], path: Path, size: int) -> list[NamedArray]:
    declared = _member_count(f, size)
    if declared is not None and declared > MAX_NPZ_MEMBERS and declared != 0xFFFF:
        raise InputError(
            f"{path}: {declared} members; the kit reads at most {MAX_NPZ_MEMBERS} arrays "
            "from one .npz"
        )
    try:
        archive = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise InputError(f"{path}: not a valid .npz (corrupt zip: {_one_line(exc)})") from None
    out: list[NamedArray] = []
    total = 0
    with archive:
        _check_members(path, archive.infolist())
        for info in archive.infolist():
            if info.is_dir():
                continue
            source = f"{path}[{info.filename.removesuffix('.npy')}]"
            if not info.filename.endswith(".npy"):
                raise InputError(
                    f"{path}: member {info.filename!r} is not an .npy array",
                    hint="write the file with np.savez (every member an array)",
                )
            total += info.file_size
            if total > MAX_INPUT.bytes:
                raise too_large(path, total, MAX_INPUT, InputError)
            try:
                with archive.open(info) as member:
                    out.append(NamedArray(source, _read_npy(member, source, info.file_size)))
            except (
                zipfile.BadZipFile,
                OSError,
                EOFError,
                NotImplementedError,
                zlib.error,
                lzma.LZMAError,
                RuntimeError,  # zipfile: "File ... is encrypted, password required"
            ) as exc:
                raise InputError(f"{source}: corrupt member ({_one_line(exc)})") from None
    return out


def load_arrays(paths: Sequence[str | Path]) -> list[NamedArray]:
    """Every array of every .npy / .npz file, in order; InputError on anything else."""
    out: list[NamedArray] = []
    for name in paths:
        path = Path(name)
        with open_regular(path, MAX_INPUT, InputError) as (f, size):
            magic = f.read(6)
            f.seek(0)
            if magic == _NPY_MAGIC:
                arrays = [NamedArray(str(path), _read_npy(f, str(path), size))]
            elif magic[:4] in _ZIP_MAGICS:
                arrays = _read_npz(f, path, size)
                if not arrays:
                    raise InputError(f"{path}: the .npz holds no arrays")
            else:
                raise InputError(
                    f"{path}: not a .npy or .npz file (starts with {magic!r})",
                    hint="save inputs with np.save (one array) or np.savez (several)",
                )
        for named in arrays:
            _check_finite(named)
        out.extend(arrays)
    return out


def _check_finite(named: NamedArray) -> None:
    """Refuse a float array holding NaN or infinity, for every command alike (simulate,
    run, gen --inputs, compare): the program's quantize_per_tensor has no integer for
    them (ExecuTorch's kernel casts the float to int, undefined in C), and a NaN in a
    result would make every difference compare as within tolerance."""
    value = named.array
    if value.dtype.kind != "f" or not value.size:
        return
    bad = ~np.isfinite(value)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(
            f"{named.source}: holds NaN or infinity ({int(bad.sum())} of {value.size} values, "
            f"the first at index {list(first)}); it cannot be quantized, and the kit reads "
            "finite numbers only"
        )


def conform(named: NamedArray, dtype: np.dtype[Any], shape: tuple[int, ...], what: str) -> Array:
    """`named` as a `dtype` tensor of `shape` (`what` names it: `delegate 0 input 1`)."""
    value, source = named.array, named.source
    need = 1
    for d in shape:
        need *= d
    if value.size != need:
        raise InputError(
            f"{source}: {what}: needs shape {shape} ({need} values), the file has "
            f"{value.shape} ({value.size} values)"
        )
    info = np.iinfo(dtype)
    if value.dtype.kind == "f":
        raise InputError(
            f"{source}: {what}: is {value.dtype}, the NPU takes {dtype} "
            f"[{info.min}, {info.max}]; float inputs are not cast silently",
            hint="quantize first: q = clip(round(x / scale) + zero_point) with the input's "
            "scale and zero point, saved as that integer type",
        )
    if value.size:
        low, high = int(value.min()), int(value.max())
        if low < info.min or high > info.max:
            raise InputError(
                f"{source}: {what}: values {low}..{high} outside {dtype} [{info.min}, {info.max}]",
                hint="pass the quantized integers the NPU sees",
            )
    return value.astype(dtype).reshape(shape)


def check_output_path(path: Path, suffix: str = ".npz") -> Path:
    """Where an output file will go (`suffix` added if missing); refused if it cannot be."""
    target = path
    if path.name and not path.name.endswith(suffix):
        target = path.with_name(path.name + suffix)
    for candidate in (path, target):
        if candidate.is_dir():
            raise KitError(
                f"{candidate}: is a folder; -o takes a file name",
                hint=f"e.g. -o {path / ('out' + suffix)}",
            )
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise KitError(f"{target}: {parent} is a file, not a folder")
            break
    return target


def save_npz(path: Path, arrays: Mapping[str, Array]) -> Path:
    """Write `arrays` to an .npz atomically; the path written (`.npz` added if missing)."""
    target = check_output_path(path)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_file_atomic(target, buffer.getvalue())
    except OSError as exc:
        raise KitError(f"{target}: cannot write ({exc.strerror or exc})") from None
    return target

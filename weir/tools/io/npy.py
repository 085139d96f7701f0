"""numpy `.npy` files and raw binary files as IREE's tools use them.

Several arrays may be concatenated in one `.npy` file (`np.save` to the same open file twice);
`@file` starts reading a file from its beginning and `+file` goes on where the previous read of
the same file stopped, so `--input=@a.npy --input=+a.npy` reads its first two arrays.

bfloat16 has no npy type code: numpy with ml_dtypes writes it as raw 2-byte records (`<V2`), so a
`V2` array is read back as bfloat16, which keeps results saved by weir round-trippable.

Files are mapped, not read, and an array is a view on its file as it lies there (big-endian,
Fortran order and all): the function it is passed to checks its shape and type before anything
is copied, and its one copy into a device buffer puts it in the host's order
(runtime/abi_tensors.py). A wrong 256 MiB input costs a header read, not three copies.
"""

from __future__ import annotations

import ast
import math
import mmap
import os
import stat
import struct
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from weir.errors import UsageError
from weir.tools.io.element_types import ELEMENT_TYPES, ElementType, element_type_of

_NPY_MAGIC = b"\x93NUMPY"
# The one-byte ml_dtypes types (i2, i4, the f8/f6/f4 floats): numpy saves them as raw bytes
# (`|V1`; f8E5M2 as `<f1`, which numpy cannot read back), so a file cannot tell them apart.
_ONE_BYTE = tuple(t.name for t in ELEMENT_TYPES
                  if t.byte_size == 1 and t.kind != "bool" and (t.bits < 8 or t.is_float))


def _one_byte_error(where: str) -> UsageError:
    return UsageError(f"{where}: numpy saves {', '.join(_ONE_BYTE)} all as one raw byte, so the "
                      "file cannot say which; give such values as text "
                      "(--input=4xf8E4M3FN=1,2,3,4)")


@dataclass
class _OpenFile:
    data: bytes | mmap.mmap
    offset: int = 0
    arrays_read: int = 0


def _map(path: str) -> bytes | mmap.mmap:
    """The file's bytes, mapped when it is a regular file with any (a pipe or an empty file
    cannot be mapped, and is read)."""
    with open(path, "rb") as file:
        info = os.fstat(file.fileno())
        if stat.S_ISREG(info.st_mode) and info.st_size:
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        return file.read()


@dataclass
class FileStreams:
    """Files opened while reading one list of flag values, by their verbatim path (as IREE's
    stream list), so `+path` continues where the last read of `path` ended."""

    files: dict[str, _OpenFile] = field(default_factory=dict)

    def open(self, path: str, *, append: bool) -> _OpenFile:
        """The file at `path`, rewound unless `append` (the `+` prefix) continues a read."""
        opened = self.files.get(path)
        if opened is None:
            try:
                opened = _OpenFile(_map(path))
            except OSError as error:
                raise UsageError(f"cannot read '{path}': {error.strerror or error}") from None
            self.files[path] = opened
        elif not append:
            opened.offset = 0
            opened.arrays_read = 0
        return opened

    def read_npy(self, path: str, *, append: bool) -> np.ndarray:
        """The next array of the `.npy` file at `path`."""
        return _read_next_npy(path, self.open(path, append=append))

    def read_all_npy(self, path: str, *, append: bool) -> list[np.ndarray]:
        """Every remaining array of the file (IREE's `*file.npy`); may be none."""
        opened = self.open(path, append=append)
        arrays: list[np.ndarray] = []
        while opened.offset < len(opened.data):
            arrays.append(_read_next_npy(path, opened))
        return arrays

    def read_raw(self, path: str, etype: ElementType, shape: tuple[int, ...], *,
                 append: bool) -> np.ndarray:
        """`shape` elements of `etype` read verbatim (little-endian, dense) from `path`."""
        opened = self.open(path, append=append)
        if opened.data[opened.offset:opened.offset + len(_NPY_MAGIC)] == _NPY_MAGIC:
            # Its header would be read as elements: a silently wrong input.
            raise UsageError(f"'{path}' is a numpy .npy file, not raw data: give it without a "
                             f"shape and type (`@{path}`)")
        count = math.prod(shape)  # Python ints: a huge shape must not wrap around
        size = count * etype.dtype.itemsize
        left = len(opened.data) - opened.offset
        if size > left:
            raise UsageError(f"'{path}' has {left} bytes left at offset {opened.offset} but "
                             f"{count} {etype.name} elements need {size}")
        start = opened.offset
        opened.offset += size
        raw = np.frombuffer(opened.data, dtype=etype.dtype.newbyteorder("<"), count=count,
                            offset=start)
        return raw.reshape(shape)


_HEADER_LENGTH = {1: struct.Struct("<H"), 2: struct.Struct("<I"), 3: struct.Struct("<I")}


def _read_next_npy(path: str, opened: _OpenFile) -> np.ndarray:
    where = f"'{path}'" if opened.offset == 0 else f"'{path}' at byte {opened.offset}"
    data, start = opened.data, opened.offset
    if start >= len(data):
        raise UsageError(f"'{path}' has no more arrays (read {opened.arrays_read})")
    if data[start:start + len(_NPY_MAGIC)] != _NPY_MAGIC:
        raise UsageError(f"{where} is not a numpy .npy array (bad magic)")
    dtype, shape, fortran, body = _read_header(data, start, where)
    count = math.prod(shape)
    size = count * dtype.itemsize
    if size > len(data) - body:
        raise UsageError(f"{where} is not a readable .npy array: its header promises {size} "
                         f"bytes of data, the file has {len(data) - body}")
    array = np.frombuffer(data, dtype, count, body) if count else np.empty(0, dtype)
    opened.offset = body + size
    opened.arrays_read += 1
    return normalize_loaded_array(array.reshape(shape, order="F" if fortran else "C"), where)


def _read_header(data: bytes | mmap.mmap, start: int,
                 where: str) -> tuple[np.dtype, tuple[int, ...], bool, int]:
    """(dtype, shape, Fortran order, where the data starts) from the header at `start`,
    read without touching the data."""
    major = data[start + 6] if start + 8 <= len(data) else 0
    length = _HEADER_LENGTH.get(major)
    text_start = start + 8 + (length.size if length else 0)
    if length is None or text_start > len(data):
        raise UsageError(f"{where} is not a readable .npy array: unknown format version {major}")
    (text_length,) = length.unpack_from(data, start + 8)
    text = bytes(data[text_start:text_start + text_length])
    try:
        header = ast.literal_eval(text.decode("utf-8" if major == 3 else "latin1"))
        descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
        if isinstance(descr, str) and descr[1:] == "f1":
            raise _one_byte_error(where)
        dtype = np.lib.format.descr_to_dtype(descr)
        if not isinstance(fortran, bool) or not isinstance(shape, tuple) \
                or not all(type(d) is int and d >= 0 for d in shape):
            raise ValueError("malformed shape or order")
    except (ValueError, SyntaxError, KeyError, TypeError, UnicodeDecodeError,
            MemoryError, RecursionError) as error:
        raise UsageError(f"{where} is not a readable .npy array: bad header "
                         f"({type(error).__name__})") from None
    if dtype.hasobject:
        raise UsageError(f"{where}: arrays of Python objects are not supported")
    return dtype, shape, fortran, text_start + text_length


def normalize_loaded_array(array: np.ndarray, where: str) -> np.ndarray:
    """The array as read, of a weir element type (bfloat16 restored from `V2`); its byte order
    and layout are left to the one copy that uses it (`host_order`)."""
    if array.dtype.kind == "V" and array.dtype.itemsize == 2 and array.dtype.names is None:
        array = array.view(ml_dtypes.bfloat16)
    if array.dtype.kind == "V" and array.dtype.itemsize == 1 and array.dtype.names is None:
        raise _one_byte_error(where)
    try:
        element_type_of(array.dtype)
    except UsageError as error:
        raise UsageError(f"{where}: {error}") from None
    return array


def host_order(array: np.ndarray) -> np.ndarray:
    """`array` dense, row-major and in the host's byte order, copied only when it is not."""
    if array.dtype.isnative and array.flags.c_contiguous:
        return array
    return np.array(array, dtype=array.dtype.newbyteorder("="), order="C")


def _c_order(array: np.ndarray) -> np.ndarray:
    """Row-major without losing a 0-d shape (`np.ascontiguousarray` makes 0-d arrays 1-d)."""
    return array if array.flags.c_contiguous else array.copy(order="C")


def write_npy(path: str, array: np.ndarray, *, append: bool) -> None:
    """Writes one array to `path` (`append` adds it after the arrays already there)."""
    try:
        with open(path, "ab" if append else "wb") as file:
            np.save(file, _c_order(array), allow_pickle=False)
    except OSError as error:
        raise UsageError(f"cannot write '{path}': {error.strerror or error}") from None


def write_raw(path: str, array: np.ndarray, *, append: bool) -> None:
    """Writes the array's bytes with no metadata (IREE's binary output for non-.npy paths)."""
    try:
        with open(path, "ab" if append else "wb") as file:
            file.write(_c_order(array).tobytes())
    except OSError as error:
        raise UsageError(f"cannot write '{path}': {error.strerror or error}") from None

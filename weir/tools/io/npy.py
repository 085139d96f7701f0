"""numpy `.npy` files and raw binary files as IREE's tools use them.

Several arrays may be concatenated in one `.npy` file (`np.save` to the same open file twice);
`@file` starts reading a file from its beginning and `+file` goes on where the previous read of
the same file stopped, so `--input=@a.npy --input=+a.npy` reads its first two arrays.

bfloat16 has no npy type code: numpy with ml_dtypes writes it as raw 2-byte records (`<V2`), so a
`V2` array is read back as bfloat16, which keeps results saved by weir round-trippable.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path

import ml_dtypes
import numpy as np

from weir.errors import UsageError
from weir.tools.io.element_types import ElementType, element_type_of

_NPY_MAGIC = b"\x93NUMPY"


@dataclass
class _OpenFile:
    data: bytes
    offset: int = 0
    arrays_read: int = 0


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
                opened = _OpenFile(Path(path).read_bytes())
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
        return raw.astype(etype.dtype).reshape(shape)


def _read_next_npy(path: str, opened: _OpenFile) -> np.ndarray:
    where = f"'{path}'" if opened.offset == 0 else f"'{path}' at byte {opened.offset}"
    if opened.offset >= len(opened.data):
        raise UsageError(f"'{path}' has no more arrays (read {opened.arrays_read})")
    if opened.data[opened.offset:opened.offset + len(_NPY_MAGIC)] != _NPY_MAGIC:
        raise UsageError(f"{where} is not a numpy .npy array (bad magic)")
    stream = io.BytesIO(opened.data)
    stream.seek(opened.offset)
    try:
        array = np.load(stream, allow_pickle=False)
    except ValueError as error:
        raise UsageError(f"{where} is not a readable .npy array: {error}") from None
    opened.offset = stream.tell()
    opened.arrays_read += 1
    return normalize_loaded_array(array, where)


def normalize_loaded_array(array: np.ndarray, where: str) -> np.ndarray:
    """A dense, native-order array of a weir element type (bfloat16 restored from `V2`)."""
    if array.dtype.kind == "V" and array.dtype.itemsize == 2 and array.dtype.names is None:
        array = array.view(ml_dtypes.bfloat16)
    if array.dtype.byteorder not in "|=":
        array = array.astype(array.dtype.newbyteorder("="))
    try:
        element_type_of(array.dtype)
    except UsageError as error:
        raise UsageError(f"{where}: {error}") from None
    return _c_order(array)


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

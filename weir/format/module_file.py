"""The module file codec (layout in docs/contracts.md).

The header's checksum covers the whole body, so a corrupted file is rejected before any of its
JSON is parsed; after that every field is still verified, because a file may also be *well formed
but wrong* (written by a buggy or hostile producer). Segments come back as memoryviews into the
input buffer so constants and payloads are mapped, not copied, wherever the input lies aligned
in memory (`_aligned_area`).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import numpy as np

from weir.errors import ModuleFormatError
from weir.format.image import ModuleImage
from weir.format.module_json import image_from_json, image_to_json
from weir.format.module_verify import verify_image

MAGIC = b"WEIRMOD\0"
# 2: dispatches carry their real workgroup count (weir/format/workgroups.py), which the llvm-cpu
# loader checks; version 1 modules passed 1x1x1 and would fail at their first dispatch.
VERSION = 2
HEADER = struct.Struct("<8sIIQ32s")  # magic, version, flags, body length, sha256(body)
HEADER_SIZE = HEADER.size  # 56
SEGMENT_ALIGNMENT = 64

Buffer = Union[bytes, bytearray, memoryview, mmap.mmap]


def _align(n: int) -> int:
    return (n + SEGMENT_ALIGNMENT - 1) // SEGMENT_ALIGNMENT * SEGMENT_ALIGNMENT


def serialize(image: ModuleImage) -> bytes:
    """Writes `image` (verified first: a bad image must fail in the producer, not the loader)."""
    verify_image(image)
    # Segment offsets are relative to the segment area, which starts at an absolute file offset
    # that is a multiple of 64, so aligned offsets are aligned in memory too (mmap is page aligned).
    placements: list[list[int]] = []
    cursor = 0
    for seg in image.segments:
        placements.append([cursor, seg.nbytes])
        cursor = _align(cursor + seg.nbytes)
    metadata = json.dumps(image_to_json(image, placements), separators=(",", ":")).encode("utf-8")
    meta_end = HEADER_SIZE + 8 + len(metadata)
    area_start = _align(meta_end)
    out = bytearray(area_start + cursor)
    struct.pack_into("<Q", out, HEADER_SIZE, len(metadata))
    out[HEADER_SIZE + 8:meta_end] = metadata
    for seg, (offset, length) in zip(image.segments, placements):
        out[area_start + offset:area_start + offset + length] = seg.cast("B") if seg.ndim != 1 or \
            seg.format != "B" else seg
    body = memoryview(out)[HEADER_SIZE:]
    HEADER.pack_into(out, 0, MAGIC, VERSION, 0, len(body), hashlib.sha256(body).digest())
    return bytes(out)


@dataclass(frozen=True)
class FileLayout:
    """Where the parts of a verified module file lie, as read on the way to its image, so a tool
    that shows them (`weir-dump-module`) needs no second pass over the file: no second checksum,
    no second JSON parse, no copy of the layout arithmetic."""

    size: int  # of the whole file
    version: int
    digest: bytes  # sha256 of the body, from the header (and verified)
    metadata_offset: int  # absolute, like area_offset
    metadata_length: int
    area_offset: int  # where the segment area starts
    segments: tuple[tuple[int, int], ...]  # (offset within the area, length) per segment


def deserialize(data: Buffer) -> ModuleImage:
    """Reads and fully verifies a module; raises `ModuleFormatError` with one line on any problem.

    The returned image's segments are views into `data`, which must stay alive (and unmodified)
    as long as the image is used."""
    return deserialize_with_layout(data)[0]


def deserialize_with_layout(data: Buffer) -> tuple[ModuleImage, FileLayout]:
    """`deserialize`, also returning where each part of the file lies."""
    try:
        view = memoryview(data).cast("B")
    except TypeError as e:
        raise ModuleFormatError(f"not a byte buffer: {e}") from None
    if len(view) < HEADER_SIZE:
        raise ModuleFormatError(f"truncated module file: {len(view)} bytes, the header alone is "
                                f"{HEADER_SIZE}")
    magic, version, flags, body_length, digest = HEADER.unpack_from(view, 0)
    if magic != MAGIC:
        raise ModuleFormatError(f"not a weir module file (magic {bytes(magic)!r}, expected {MAGIC!r})")
    if version != VERSION:
        raise ModuleFormatError(f"unsupported module format version {version} (this runtime reads "
                                f"version {VERSION}; compile the program again with this "
                                f"weir-compile)")
    if flags != 0:
        raise ModuleFormatError(f"unsupported module flags 0x{flags:x}")
    actual_body = len(view) - HEADER_SIZE
    if body_length != actual_body:
        what = "truncated module file" if body_length > actual_body else "trailing bytes after module"
        raise ModuleFormatError(f"{what}: header says the body is {body_length} bytes, "
                                f"found {actual_body}")
    body = view[HEADER_SIZE:]
    if hashlib.sha256(body).digest() != digest:
        raise ModuleFormatError("checksum mismatch: the module file is corrupted")
    if len(body) < 8:
        raise ModuleFormatError("truncated module file: no metadata length")
    (meta_length,) = struct.unpack_from("<Q", body, 0)
    meta_end = HEADER_SIZE + 8 + meta_length
    if meta_end > len(view):
        raise ModuleFormatError(f"truncated module file: metadata of {meta_length} bytes does not fit")
    try:
        metadata: Any = json.loads(bytes(view[HEADER_SIZE + 8:meta_end]).decode("utf-8"))
    except (ValueError, RecursionError) as e:  # ValueError: bad UTF-8, bad JSON, huge ints
        raise ModuleFormatError(f"module metadata is not valid JSON: {e}") from None
    area_start = _align(meta_end)
    if area_start > len(view):
        area_start = len(view)
    area = _aligned_area(view[area_start:])
    placements = _segment_placements(metadata, len(area))
    segments = tuple(area[offset:offset + length].toreadonly() for offset, length in placements)
    image = image_from_json(metadata, segments)
    verify_image(image)
    layout = FileLayout(len(view), version, bytes(digest), HEADER_SIZE + 8, meta_length,
                        area_start, placements)
    return image, layout


def _aligned_area(area: memoryview) -> memoryview:
    """The segment area itself when it starts on a SEGMENT_ALIGNMENT boundary in memory (a
    mapped file always does), else a read-only copy that does. A module given as bytes (the
    result of `weir.compile_string`, a file read into memory) starts wherever the allocator put
    the object, and the constants kernels read with vector loads would then straddle cache
    lines: loaded from bytes, ResNet-18 took 1.08x and SqueezeNet 1.02x the time of the same
    file mapped (calls alternating in one process)."""
    if not len(area):
        return area
    data = np.frombuffer(area, np.uint8)
    if data.ctypes.data % SEGMENT_ALIGNMENT == 0:
        return area
    room = np.empty(len(area) + SEGMENT_ALIGNMENT, np.uint8)
    start = -room.ctypes.data % SEGMENT_ALIGNMENT
    copy = room[start:start + len(area)]
    copy[:] = data
    copy.flags.writeable = False
    return memoryview(copy)


def _segment_placements(metadata: Any, area_size: int) -> tuple[tuple[int, int], ...]:
    """The verified `[offset, length]` of each segment within an area of `area_size` bytes."""
    if not isinstance(metadata, dict) or not isinstance(metadata.get("segments"), list):
        raise ModuleFormatError("metadata: missing 'segments' list")
    out: list[tuple[int, int]] = []
    for k, entry in enumerate(metadata["segments"]):
        if (not isinstance(entry, list) or len(entry) != 2
                or not all(type(v) is int and v >= 0 for v in entry)):
            raise ModuleFormatError(f"segments[{k}]: expected [offset, length] of non-negative ints")
        offset, length = entry
        if offset % SEGMENT_ALIGNMENT:
            raise ModuleFormatError(f"segments[{k}]: offset {offset} is not {SEGMENT_ALIGNMENT}-byte aligned")
        if offset + length > area_size:
            raise ModuleFormatError(f"truncated module file: segments[{k}] ends at {offset + length}, "
                                    f"the segment area has {area_size} bytes")
        out.append((offset, length))
    return tuple(out)


def load_file(path: str | Path) -> ModuleImage:
    """Maps the file read-only and deserializes it; segments stay views on the mapping, which lives
    as long as any of them does."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            if size == 0:
                raise ModuleFormatError(f"{path}: empty module file")
            mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as e:
        raise ModuleFormatError(f"{path}: cannot read module file: {e.strerror or e}") from None
    try:
        return deserialize(mapping)
    except ModuleFormatError as e:
        raise ModuleFormatError(f"{path}: {e}") from None

"""The `llvm-cpu` payload: object code for one CPU plus what the runtime must know to call it
safely without reading the code: which CPU features it needs, and per entry point its symbol, its
bindings' byte extents (so every access is bounds-checked before native code runs) and how its
iteration space splits into workgroups.

Layout: magic `WNEX`, u32 little-endian header length, a UTF-8 JSON header, then the ELF objects
back to back (their sizes are in the header): the entry points' own code first, then shared
routines such as the GEMM microkernel, compiled once per compilation and linked in at load time.

Every native entry point has the C signature
    void entry(void **bindings, const int64_t *push_constants, int64_t begin, int64_t end)
and runs workgroups [begin, end) of its grid; the grid has ceil(extent / tile) workgroups, with
`extent` a static size or a push constant. The runtime picks the grid, so the host program's
workgroup count (always 1x1x1 in weir) is not consulted: like IREE's per-variant workgroup-count
region, the split belongs to the code that was generated for it."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any

from weir.errors import ModuleFormatError
from weir.format import json_fields as jf
from weir.format.reference_kernel import DTYPES, Dim, PushDim, Shape

FORMAT = "llvm-cpu"
MAGIC = b"WNEX"
_HEADER = struct.Struct("<4sI")


@dataclass(frozen=True)
class BindingAccess:
    """A tensor the entry reads or writes at `offset` bytes into a binding."""

    binding: int
    offset: int
    dtype: str
    shape: Shape
    writes: bool


@dataclass(frozen=True)
class WindowBounds:
    """A slice window, offset + i*stride for 0 <= i < size, that must lie in [0, extent): the
    runtime checks it (`reference_kernel.window_error`) before native code runs, as the code
    indexes without checks. Listed only where a value is a push constant; static windows are
    checked by the compiler."""

    offset: Dim
    size: Dim
    stride: Dim
    extent: Dim


@dataclass(frozen=True)
class NativeEntry:
    name: str
    symbol: str
    num_bindings: int
    num_push_constants: int
    accesses: tuple[BindingAccess, ...]
    grid_extent: Dim
    grid_tile: int
    windows: tuple[WindowBounds, ...] = ()


@dataclass(frozen=True)
class NativeExecutable:
    triple: str
    cpu: str
    # CPU features the code may use (LLVM names: avx2, avx512f, fma, ...).
    features: tuple[str, ...]
    entries: tuple[NativeEntry, ...]
    objects: tuple[bytes, ...]


def _dim(d: Dim) -> Any:
    return {"push": d.index} if isinstance(d, PushDim) else d


def encode_native_executable(exe: NativeExecutable) -> bytes:
    header = {
        "triple": exe.triple, "cpu": exe.cpu, "features": list(exe.features),
        "entries": [{
            "name": e.name, "symbol": e.symbol, "num_bindings": e.num_bindings,
            "num_push_constants": e.num_push_constants,
            "accesses": [{"binding": a.binding, "offset": a.offset, "dtype": a.dtype,
                          "shape": [_dim(d) for d in a.shape], "writes": a.writes}
                         for a in e.accesses],
            "grid": {"extent": _dim(e.grid_extent), "tile": e.grid_tile},
            "windows": [[_dim(w.offset), _dim(w.size), _dim(w.stride), _dim(w.extent)]
                        for w in e.windows],
        } for e in exe.entries],
        "objects": [len(o) for o in exe.objects],
    }
    text = json.dumps(header, separators=(",", ":")).encode()
    return _HEADER.pack(MAGIC, len(text)) + text + b"".join(exe.objects)


def _decode_dim(value: Any, where: str, num_push: int) -> Dim:
    if isinstance(value, dict):
        return PushDim(jf.as_int(jf.field(value, "push", where), f"{where}.push", 0, num_push))
    return jf.as_int(value, where)


def _decode_entry(raw: Any, where: str) -> NativeEntry:
    obj = jf.as_dict(raw, where)
    nb = jf.as_int(jf.field(obj, "num_bindings", where), f"{where}.num_bindings")
    npc = jf.as_int(jf.field(obj, "num_push_constants", where), f"{where}.num_push_constants")
    accesses = []
    for i, a in enumerate(jf.as_list(jf.field(obj, "accesses", where), f"{where}.accesses")):
        w = f"{where}.accesses[{i}]"
        a = jf.as_dict(a, w)
        dtype = jf.as_str(jf.field(a, "dtype", w), f"{w}.dtype")
        if dtype not in DTYPES:
            raise jf.fail(f"{w}.dtype", f"unknown element type '{dtype}'")
        shape = tuple(_decode_dim(d, f"{w}.shape[{j}]", npc)
                      for j, d in enumerate(jf.as_list(jf.field(a, "shape", w), f"{w}.shape")))
        accesses.append(BindingAccess(
            jf.as_int(jf.field(a, "binding", w), f"{w}.binding", 0, nb),
            jf.as_int(jf.field(a, "offset", w), f"{w}.offset"), dtype, shape,
            jf.as_bool(jf.field(a, "writes", w), f"{w}.writes")))
    grid = jf.as_dict(jf.field(obj, "grid", where), f"{where}.grid")
    windows = []
    for i, item in enumerate(jf.as_list(obj.get("windows", []), f"{where}.windows")):
        w = f"{where}.windows[{i}]"
        dims = [_decode_dim(d, f"{w}[{j}]", npc) for j, d in enumerate(jf.as_list(item, w))]
        if len(dims) != 4:
            raise jf.fail(w, f"expected [offset, size, stride, extent], got {len(dims)} entries")
        windows.append(WindowBounds(*dims))
    return NativeEntry(
        jf.as_str(jf.field(obj, "name", where), f"{where}.name"),
        jf.as_str(jf.field(obj, "symbol", where), f"{where}.symbol"), nb, npc, tuple(accesses),
        _decode_dim(jf.field(grid, "extent", f"{where}.grid"), f"{where}.grid.extent", npc),
        jf.as_int(jf.field(grid, "tile", f"{where}.grid"), f"{where}.grid.tile", 1),
        tuple(windows))


def decode_native_executable(payload: memoryview | bytes) -> NativeExecutable:
    data = bytes(payload)
    where = "llvm-cpu executable"
    if len(data) < _HEADER.size:
        raise ModuleFormatError(f"{where}: truncated ({len(data)} bytes)")
    magic, length = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ModuleFormatError(f"{where}: bad magic {magic!r} (expected {MAGIC!r})")
    end = _HEADER.size + length
    if end > len(data):
        raise ModuleFormatError(f"{where}: header of {length} bytes runs past the payload")
    try:
        header = jf.as_dict(json.loads(data[_HEADER.size:end].decode()), where)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModuleFormatError(f"{where}: header is not JSON: {e}") from e
    features = jf.as_list(jf.field(header, "features", where), f"{where}.features")
    sizes = jf.as_int_list(jf.field(header, "objects", where), f"{where}.objects")
    if sum(sizes) != len(data) - end:
        raise ModuleFormatError(f"{where}: the header lists {sum(sizes)} bytes of object code, "
                                f"the payload holds {len(data) - end}")
    objects, at = [], end
    for size in sizes:
        objects.append(data[at:at + size])
        at += size
    return NativeExecutable(
        jf.as_str(jf.field(header, "triple", where), f"{where}.triple"),
        jf.as_str(jf.field(header, "cpu", where), f"{where}.cpu"),
        tuple(jf.as_str(f, f"{where}.features[{i}]") for i, f in enumerate(features)),
        tuple(_decode_entry(e, f"{where}.entries[{i}]") for i, e in
              enumerate(jf.as_list(jf.field(header, "entries", where), f"{where}.entries"))),
        tuple(objects))

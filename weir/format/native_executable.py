"""The `llvm-cpu` payload: object code for one CPU plus what the runtime must know to call it
safely without reading the code: which CPU features it needs, and per entry point its symbol, its
bindings' byte extents (so every access is bounds-checked before native code runs) and how its
iteration space splits into workgroups.

Layout: magic `WNEX`, u32 little-endian header length, a UTF-8 JSON header, then the ELF objects
back to back (their sizes are in the header): the entry points' own code first, then shared
routines such as the GEMM microkernel, compiled once per compilation and linked in at load time.

Every native entry point has the C signature
    int64_t entry(void **bindings, const int64_t *push_constants, int64_t begin, int64_t end,
                  int64_t *fault)
and runs workgroups [begin, end) of its grid. It returns 0, or, when one of its run-time checks
fails (an index out of range, a kept cf.assert), that check's number in `checks` plus one, after
writing four words to `fault`: the same number, then for an index check its dimension, index and
size (zeros otherwise); the runtime turns them into the check's message. The grid has
ceil(extent / tile) workgroups, with `extent` a static size or a push constant
(weir/format/workgroups.py): the host program computes that count from the same grid and passes
it with the dispatch, and the loader checks that the two agree before running them."""

from __future__ import annotations

import hashlib
import json
import re
import struct
from dataclasses import dataclass
from typing import Any

from weir.errors import ModuleFormatError
from weir.format import json_fields as jf
from weir.format.kernel_description import DTYPES, Dim, PushDim, Shape, extract_fault
from weir.format.workgroups import WorkgroupGrid

FORMAT = "llvm-cpu"
MAGIC = b"WNEX"
_HEADER = struct.Struct("<4sI")
# A linker symbol as LLVM names C functions: what get_function_address may be asked for.
_SYMBOL = re.compile(r"[A-Za-z_.$][A-Za-z0-9_.$]*")
_HEADER_KEYS = ("triple", "cpu", "features", "entries", "objects", "digest")
_ENTRY_KEYS = ("name", "symbol", "num_bindings", "num_push_constants", "accesses", "grid",
               "windows", "checks")
_ACCESS_KEYS = ("binding", "offset", "dtype", "shape", "writes")


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
    runtime checks it (`kernel_description.window_error`) before native code runs, as the code
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
    # What each run-time check of the code reports when it fails (an index check's message is
    # completed with `kernel_description.extract_fault`), by the number the entry returns minus one.
    checks: tuple[str, ...] = ()

    @property
    def grid(self) -> WorkgroupGrid:
        return WorkgroupGrid(self.grid_extent, self.grid_tile)

    def fault_message(self, record: tuple[int, int, int, int]) -> str:
        """The message of the failure the entry reported in its fault record."""
        code, dimension, index, size = record
        if not 1 <= code <= len(self.checks):
            return f"llvm-cpu dispatch '{self.name}' failed with unknown check number {code}"
        check = self.checks[code - 1]
        if check.startswith("tensor.extract"):
            return extract_fault(check, dimension, index, size)
        return check


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


def _digest(header: dict[str, Any], objects: bytes) -> str:
    """What ties the descriptor to the code it describes. The runtime cannot read native code,
    so it cannot check that a grid, a symbol or an access list belongs to it; a descriptor
    changed without its code (a damaged or buggy producer) would run the code with a wrong
    grid or symbol: incomplete results, or a jump into the wrong function. The digest of the
    descriptor and the code together, written by the encoder and checked by the decoder, makes
    any such change an error. It authenticates nothing: whoever can write native code into a
    module can write its digest too (docs/threat_model.md)."""
    text = json.dumps({k: v for k, v in header.items() if k != "digest"},
                      separators=(",", ":")).encode()
    return hashlib.sha256(text + objects).hexdigest()


def encode_native_executable(exe: NativeExecutable) -> bytes:
    header: dict[str, Any] = {
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
            "checks": list(e.checks),
        } for e in exe.entries],
        "objects": [len(o) for o in exe.objects],
    }
    header["digest"] = _digest(header, b"".join(exe.objects))
    text = json.dumps(header, separators=(",", ":")).encode()
    return _HEADER.pack(MAGIC, len(text)) + text + b"".join(exe.objects)


def _decode_dim(value: Any, where: str, num_push: int) -> Dim:
    if isinstance(value, dict):
        jf.exact_keys(value, ("push",), where)
        return PushDim(jf.as_int(jf.field(value, "push", where), f"{where}.push", 0, num_push))
    return jf.as_int(value, where)


def _decode_entry(raw: Any, where: str) -> NativeEntry:
    obj = jf.as_dict(raw, where)
    jf.exact_keys(obj, _ENTRY_KEYS, where)
    nb = jf.as_int(jf.field(obj, "num_bindings", where), f"{where}.num_bindings")
    npc = jf.as_int(jf.field(obj, "num_push_constants", where), f"{where}.num_push_constants")
    accesses = []
    for i, a in enumerate(jf.as_list(jf.field(obj, "accesses", where), f"{where}.accesses")):
        w = f"{where}.accesses[{i}]"
        a = jf.as_dict(a, w)
        jf.exact_keys(a, _ACCESS_KEYS, w)
        dtype = jf.as_str(jf.field(a, "dtype", w), f"{w}.dtype")
        if dtype not in DTYPES:
            raise jf.fail(f"{w}.dtype", f"unknown element type {jf.printable(dtype)}")
        shape = tuple(_decode_dim(d, f"{w}.shape[{j}]", npc)
                      for j, d in enumerate(jf.as_list(jf.field(a, "shape", w), f"{w}.shape")))
        accesses.append(BindingAccess(
            jf.as_int(jf.field(a, "binding", w), f"{w}.binding", 0, nb),
            jf.as_int(jf.field(a, "offset", w), f"{w}.offset"), dtype, shape,
            jf.as_bool(jf.field(a, "writes", w), f"{w}.writes")))
    grid = jf.as_dict(jf.field(obj, "grid", where), f"{where}.grid")
    jf.exact_keys(grid, ("extent", "tile"), f"{where}.grid")
    windows = []
    for i, item in enumerate(jf.as_list(obj["windows"], f"{where}.windows")):
        w = f"{where}.windows[{i}]"
        dims = [_decode_dim(d, f"{w}[{j}]", npc) for j, d in enumerate(jf.as_list(item, w))]
        if len(dims) != 4:
            raise jf.fail(w, f"expected [offset, size, stride, extent], got {len(dims)} entries")
        windows.append(WindowBounds(*dims))
    symbol = jf.as_str(obj["symbol"], f"{where}.symbol")
    if not _SYMBOL.fullmatch(symbol):
        raise jf.fail(f"{where}.symbol", f"{jf.printable(symbol)} is not a symbol name")
    return NativeEntry(
        jf.as_str(obj["name"], f"{where}.name"), symbol, nb, npc, tuple(accesses),
        _decode_dim(jf.field(grid, "extent", f"{where}.grid"), f"{where}.grid.extent", npc),
        jf.as_int(jf.field(grid, "tile", f"{where}.grid"), f"{where}.grid.tile", 1),
        tuple(windows), jf.as_str_list(jf.field(obj, "checks", where), f"{where}.checks"))


def object_code_span(payload: memoryview | bytes) -> tuple[int, int]:
    """Where the object code lies in a well-formed payload, as [start, end) byte offsets: what
    tools that inspect or rewrite the descriptor (weir-dump-module, the module fuzzer) must leave
    alone. Raises `ModuleFormatError` like `decode_native_executable` for a malformed header."""
    data = bytes(payload[:_HEADER.size])
    if len(data) < _HEADER.size or data[:4] != MAGIC:
        raise ModuleFormatError("llvm-cpu executable: no WNEX header")
    _, length = _HEADER.unpack(data)
    if _HEADER.size + length > len(payload):
        raise ModuleFormatError(f"llvm-cpu executable: header of {length} bytes runs past the "
                                "payload")
    return _HEADER.size + length, len(payload)


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
    except (ValueError, RecursionError) as e:  # ValueError: bad UTF-8, bad JSON, huge ints
        raise ModuleFormatError(f"{where}: header is not JSON: {e}") from None
    jf.exact_keys(header, _HEADER_KEYS, where)
    features = jf.as_list(jf.field(header, "features", where), f"{where}.features")
    sizes = jf.as_int_list(jf.field(header, "objects", where), f"{where}.objects")
    if sum(sizes) != len(data) - end:
        raise ModuleFormatError(f"{where}: the header lists {sum(sizes)} bytes of object code, "
                                f"the payload holds {len(data) - end}")
    objects, at = [], end
    for size in sizes:
        objects.append(data[at:at + size])
        at += size
    exe = NativeExecutable(
        jf.as_str(jf.field(header, "triple", where), f"{where}.triple"),
        jf.as_str(jf.field(header, "cpu", where), f"{where}.cpu"),
        tuple(jf.as_str(f, f"{where}.features[{i}]") for i, f in enumerate(features)),
        tuple(_decode_entry(e, f"{where}.entries[{i}]") for i, e in
              enumerate(jf.as_list(jf.field(header, "entries", where), f"{where}.entries"))),
        tuple(objects))
    for what, names in (("entry point", [e.name for e in exe.entries]),
                        ("symbol", [e.symbol for e in exe.entries])):
        if len(set(names)) != len(names):
            raise ModuleFormatError(f"{where}: two entries have the same {what}")
    if jf.as_str(header["digest"], f"{where}.digest") != _digest(header, data[end:]):
        raise ModuleFormatError(f"{where}: the descriptor does not match its object code "
                                "(digest mismatch): the payload was changed after it was built")
    return exe

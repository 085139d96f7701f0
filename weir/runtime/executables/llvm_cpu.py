"""Loader of the `llvm-cpu` payload: the object code is linked into this process by LLVM's
in-memory linker (llvmlite's MCJIT; no system linker, no files), and each entry point is called
through ctypes, which releases the GIL, so workgroups on several threads really run in parallel.
An object that defines no entry point is a library (the GEMM kernels, 100 KiB, and the scratch
blocks' take and give, which every executable of a module carries): identical bytes are linked
once per process and shared, so a module of 260 executables (the ONNX LSTM unrolled) loads in
145 MiB of RSS rather than 219, and every executable takes its scratch from one set of blocks.

Native code cannot check its own accesses, so every dispatch first checks each binding's byte
extent (from the payload's access list) against the buffer it was given, refuses to write
read-only buffers, and checks every slice window that depends on push constants. What only the
code can check (an index read from a tensor, a kept cf.assert) it checks itself: a failed check
returns its number and a fault record, which becomes a RuntimeFault with the check's message.
The payload's CPU features are checked against this CPU at load time: a module built for
AVX-512 on a machine without it is a LoadError, not an illegal instruction."""

from __future__ import annotations

import ctypes
import hashlib
import math
from typing import Sequence

import llvmlite.binding as llvm

from weir.errors import LoadError, RuntimeFault
from weir.format.element_types import BY_NAME
from weir.format.native_executable import (
    FORMAT,
    BindingAccess,
    NativeEntry,
    NativeExecutable,
    decode_native_executable,
)
from weir.format.kernel_description import Dim, PushDim, window_error
from weir.format.workgroups import workgroup_total
from weir.runtime.executables.elf_symbols import symbols
from weir.runtime.jit import LLVM_LOCK
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.executable import (
    check_dispatch_arity,
    Executable,
    LoaderInfo,
    NativeCall,
)
from weir.runtime.hal.workgroups import WorkgroupRunner

_ENTRY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                               ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
FaultRecord = ctypes.c_int64 * 4


def _host() -> tuple[str, frozenset[str], llvm.TargetMachine]:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    triple = llvm.get_process_triple()
    features = llvm.get_host_cpu_features().flatten()
    tm = llvm.Target.from_triple(triple).create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=features, opt=0)
    have = frozenset(f[1:] for f in features.split(",") if f.startswith("+"))
    return triple, have, tm


def _check_compatible(exe: NativeExecutable, triple: str, have: frozenset[str]) -> None:
    arch = triple.split("-", 1)[0]
    if exe.triple.split("-", 1)[0] != arch:
        raise LoadError(f"llvm-cpu executable was compiled for {exe.triple}, this machine is "
                        f"{triple}")
    missing = sorted(set(exe.features) - have)
    if missing:
        raise LoadError(f"llvm-cpu executable was compiled for CPU '{exe.cpu}' and needs CPU "
                        f"feature(s) {', '.join(missing)} that this CPU lacks (recompile with "
                        "--iree-llvmcpu-target-cpu=host on this machine, or x86-64 for any "
                        "x86-64 CPU)")


class _Entry:
    """An entry point with what its dispatches check worked out once: each access as (binding,
    end offset when its shape is static else None, whether it writes)."""

    __slots__ = ("meta", "grid", "fn", "address", "sizes", "fast_checks")

    def __init__(self, meta: NativeEntry, address: int) -> None:
        self.meta = meta
        self.grid = meta.grid  # built once, not on every dispatch
        self.fn = _ENTRY_TYPE(address)
        self.address = address
        self.sizes = tuple(BY_NAME[a.dtype].byte_size for a in meta.accesses)
        self.fast_checks = tuple(
            (a.binding, None if any(isinstance(d, PushDim) for d in a.shape)
             else a.offset + math.prod(a.shape) * size, a.writes)  # type: ignore[arg-type]
            for a, size in zip(meta.accesses, self.sizes))

    def check(self, bindings: Sequence[Buffer], constants: Sequence[int]) -> None:
        """Static extents are compared directly; anything dynamic or out of range goes through
        `_check_access`, which computes the extent and names the problem."""
        for (binding, end, writes), access, size in zip(self.fast_checks, self.meta.accesses,
                                                        self.sizes):
            buffer = bindings[binding]
            if end is None or end > buffer.byte_length or (writes and buffer.read_only):
                _check_access(access, size, buffer, constants,
                              f"llvm-cpu dispatch '{self.meta.name}'")
        for w in self.meta.windows:
            problem = window_error(*(_dim(d, constants) for d in (w.offset, w.size, w.stride,
                                                                  w.extent)))
            if problem is not None:
                raise RuntimeFault(f"llvm-cpu dispatch '{self.meta.name}': slice out of bounds: "
                                   f"{problem}")


def _dim(d: Dim, constants: Sequence[int]) -> int:
    return constants[d.index] if isinstance(d, PushDim) else d


def _check_access(a: BindingAccess, itemsize: int, buffer: Buffer, constants: Sequence[int],
                  where: str) -> None:
    dims = [_dim(d, constants) for d in a.shape]
    if any(d < 0 for d in dims):
        raise RuntimeFault(f"{where}: negative dimension in shape {tuple(dims)}")
    length = math.prod(dims) * itemsize
    what = f"{where}: {'store to' if a.writes else 'load from'} binding {a.binding}"
    if a.writes:
        buffer.writable_bytes(a.offset, length, what)
    else:
        buffer.check_range(a.offset, length, what)


def _checked_count(e: _Entry, workgroups: tuple[int, ...], constants: Sequence[int]) -> int:
    """The dispatch's workgroup count, which must be the grid the code was generated for: fewer
    would leave part of the result unwritten, more would run past it."""
    count = workgroup_total(workgroups)
    grid = e.grid.count(constants)
    if count != grid:
        shown = "x".join(str(int(w)) for w in workgroups)
        raise RuntimeFault(f"llvm-cpu dispatch '{e.meta.name}': workgroup count {shown} is not "
                           f"the {grid} workgroups of its grid ({e.grid.describe()})")
    return count


class LoadedNativeExecutable(Executable):
    def __init__(self, exe: NativeExecutable, engine: llvm.ExecutionEngine,
                 entries: list[_Entry]) -> None:
        self._engine = engine  # owns the code the entries point into
        self._entries = entries
        self._names = tuple(e.name for e in exe.entries)

    @property
    def entry_points(self) -> tuple[str, ...]:
        return self._names

    def dispatch(self, entry: int, workgroups: tuple[int, ...], constants: Sequence[int],
                 bindings: Sequence[Buffer], runner: WorkgroupRunner) -> None:
        e = self._entries[entry]
        meta = e.meta
        check_dispatch_arity(meta.name, bindings, constants, meta.num_bindings,
                             meta.num_push_constants)
        consts = [int(c) for c in constants]
        e.check(bindings, consts)
        pointers = (ctypes.c_void_p * max(1, len(bindings)))(*[b.address for b in bindings])
        pushed = (ctypes.c_int64 * max(1, len(consts)))(*consts)
        count = _checked_count(e, workgroups, consts)
        fn = e.fn

        def run(begin: int, end: int) -> None:
            record = FaultRecord()
            if fn(pointers, pushed, begin, end, record):
                raise RuntimeFault(meta.fault_message(tuple(record)))  # type: ignore[arg-type]
        if count == 1:  # nothing to spread: skip the runner
            run(0, 1)
            return
        runner.run(count, run)

    def native_call(self, entry: int, workgroups: tuple[int, ...], constants: Sequence[int],
                    bindings: Sequence[Buffer]) -> NativeCall:
        e = self._entries[entry]
        meta = e.meta
        check_dispatch_arity(meta.name, bindings, constants, meta.num_bindings,
                             meta.num_push_constants)
        consts = tuple(int(c) for c in constants)
        e.check(bindings, consts)
        count = _checked_count(e, workgroups, consts)
        needs = tuple((a.binding, a.offset + math.prod(_dim(d, consts) for d in a.shape) * size,
                       a.writes) for a, size in zip(meta.accesses, e.sizes))
        return NativeCall(e.address, tuple(b.address for b in bindings), consts, count,
                          (self, *bindings), needs, meta.fault_message)


# Defined by the in-memory linker itself while it links (position-independent code refers to it).
_LINKER_SYMBOLS = frozenset({"_GLOBAL_OFFSET_TABLE_"})


class _Library:
    """An object that defines no entry point (the GEMM kernels, the scratch functions), linked
    once per process: the engine that holds its code, and its symbols' addresses."""

    def __init__(self, engine: llvm.ExecutionEngine, addresses: dict[str, int]) -> None:
        self.engine = engine
        self.addresses = addresses


# Libraries by the SHA-256 of their bytes: identical object code is linked once, however many
# executables (of however many modules) carry it. Kept for the life of the process: a handful
# (one per GEMM type combination and CPU, and the scratch functions) in any one process.
_LIBRARIES: dict[bytes, _Library] = {}


def _library(code: bytes, defined: set[str], tm: llvm.TargetMachine) -> _Library:
    """Called with LLVM_LOCK held."""
    key = hashlib.sha256(code).digest()
    found = _LIBRARIES.get(key)
    if found is None:
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        found = _Library(engine, {name: engine.get_function_address(name) for name in defined})
        _LIBRARIES[key] = found
    return found


def _check_symbols(exe: NativeExecutable, tables: list[tuple[set[str], set[str]]]) -> set[str]:
    """Every symbol the objects need must come from one of them or from this process (libc,
    libm); LLVM's linker would leave a missing one at address 0. Every entry point's symbol must
    be defined by the objects themselves: asking LLVM for a name it does not have can abort the
    process, and a symbol of this process (say `abort`) is no entry point. `tables` holds each
    object's (defined, undefined) symbols; returns the symbols the objects define."""
    defined: set[str] = set()
    undefined: set[str] = set()
    for d, u in tables:
        defined |= d
        undefined |= u
    process = ctypes.CDLL(None)
    missing = sorted(name for name in undefined - defined - _LINKER_SYMBOLS
                     if not hasattr(process, name))
    if missing:
        raise LoadError(f"llvm-cpu executable needs symbol(s) {', '.join(missing)} that this "
                        "process does not provide")
    for meta in exe.entries:
        if meta.symbol not in defined:
            raise LoadError(f"llvm-cpu executable: entry point '{meta.name}' has no symbol "
                            f"'{meta.symbol}' in its object code")
    return defined


def load_native_executable(payload: memoryview) -> LoadedNativeExecutable:
    exe = decode_native_executable(payload)
    with LLVM_LOCK:
        triple, have, tm = _host()
    _check_compatible(exe, triple, have)
    tables = [symbols(code) for code in exe.objects]
    defined = _check_symbols(exe, tables)
    entry_symbols = {meta.symbol for meta in exe.entries}
    try:
        with LLVM_LOCK:  # a device thread may be building a replay executor meanwhile
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
            libraries = []
            for code, (own, needs) in zip(exe.objects, tables):
                # A library stands alone: it defines no entry point and needs nothing from
                # the executable's other objects (what it needs, it does not define itself).
                if own and not own & entry_symbols and not needs & defined:
                    libraries.append(_library(code, own, tm))
                else:
                    engine.add_object_file(llvm.ObjectFileRef.from_data(code))
            # This executable's references resolve to its own libraries' code, whatever
            # another module linked under the same names before.
            for library in libraries:
                for name, address in library.addresses.items():
                    llvm.add_symbol(name, address)
            engine.finalize_object()
    except RuntimeError as e:
        raise LoadError(f"llvm-cpu executable: cannot load its object code: {e}") from e
    with LLVM_LOCK:
        addresses = [engine.get_function_address(meta.symbol) for meta in exe.entries]
    entries = []
    for meta, address in zip(exe.entries, addresses):
        if not address:
            raise LoadError(f"llvm-cpu executable: entry point '{meta.name}' has no symbol "
                            f"'{meta.symbol}' in its object code")
        entries.append(_Entry(meta, address))
    return LoadedNativeExecutable(exe, engine, entries)


LLVM_CPU_LOADER = LoaderInfo(FORMAT, load_native_executable,
                             "object code for the host CPU, linked in memory (llvm-cpu)")

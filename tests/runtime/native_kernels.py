"""A small llvm-cpu executable built in the test itself, for runtime tests that need native
dispatches (batched replay, reusable command buffers) without compiling a program."""

from __future__ import annotations

from collections.abc import Callable

import llvmlite.binding as llvm
import llvmlite.ir as ir

from weir.format.native_executable import (
    BindingAccess,
    encode_native_executable,
    NativeEntry,
    NativeExecutable,
)
from weir.format.kernel_description import PushDim
from weir.runtime.executables.llvm_cpu import LoadedNativeExecutable, load_native_executable

I64 = ir.IntType(64)


def entry_point(symbol: str) -> tuple[ir.Module, ir.Function]:
    """A module for this process with one entry point
    `symbol(bindings, consts, begin, end, fault) -> status`, the signature every llvm-cpu entry
    point has."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    m = ir.Module(symbol)
    m.triple = llvm.get_process_triple()
    i8pp = ir.IntType(8).as_pointer().as_pointer()
    fn = ir.Function(m, ir.FunctionType(I64, [i8pp, I64.as_pointer(), I64, I64,
                                              I64.as_pointer()]), symbol)
    return m, fn


def workgroup_entry(symbol: str, body: Callable[[ir.IRBuilder, ir.Function, ir.Value], None]
                    ) -> tuple[ir.Module, ir.Function]:
    """An entry point `symbol` that runs `body(b, fn, i)` for each workgroup i in [begin, end)
    and returns 0. `body` may branch and return; it leaves `b` where the workgroup ends."""
    m, fn = entry_point(symbol)
    begin, end = fn.args[2], fn.args[3]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    head, loop, done = (fn.append_basic_block(n) for n in ("head", "body", "done"))
    entry = b.block
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(begin, entry)
    b.cbranch(b.icmp_signed("<", i, end), loop, done)
    b.position_at_end(loop)
    body(b, fn, i)
    i.add_incoming(b.add(i, I64(1)), b.block)
    b.branch(head)
    b.position_at_end(done)
    b.ret(I64(0))
    return m, fn


def _binding(b: ir.IRBuilder, fn: ir.Function, index: int) -> ir.Value:
    """Binding `index` of the entry point as i64 elements."""
    return b.bitcast(b.load(b.gep(fn.args[0], [I64(index)])), I64.as_pointer())


def fill_entry(symbol: str, value: Callable[[ir.IRBuilder, ir.Value], ir.Value]
               ) -> tuple[ir.Module, ir.Function]:
    """An entry point `symbol` that stores `value(b, i)` to out[i] (binding 0, i64 elements)
    for each workgroup i in [begin, end) and returns 0."""
    return workgroup_entry(symbol, lambda b, fn, i: b.store(
        value(b, i), b.gep(_binding(b, fn, 0), [i])))


def object_code(m: ir.Module) -> tuple[str, bytes]:
    """The module's triple and position-independent object code, as payloads carry it."""
    tm = llvm.Target.from_triple(m.triple).create_target_machine(reloc="pic")
    return m.triple, tm.emit_object(llvm.parse_assembly(str(m)))


def _add_one_object() -> tuple[str, bytes]:
    """`add_one(bindings, consts, begin, end, fault)`: out[i] = in[i] + 1 for i in [begin, end);
    an input of -1 fails the entry's check 0 (fault record: 1, 0, i, -1) and returns 1."""
    def add_one(b: ir.IRBuilder, fn: ir.Function, i: ir.Value) -> None:
        x = b.load(b.gep(_binding(b, fn, 0), [i]))
        failed, ok = fn.append_basic_block("failed"), fn.append_basic_block("ok")
        b.cbranch(b.icmp_signed("==", x, I64(-1)), failed, ok)
        b.position_at_end(failed)
        for k, word in enumerate((I64(1), I64(0), i, x)):
            b.store(word, b.gep(fn.args[4], [I64(k)]))
        b.ret(I64(1))
        b.position_at_end(ok)
        b.store(b.add(x, I64(1)), b.gep(_binding(b, fn, 1), [i]))
    m, _ = workgroup_entry("weir_add_one", add_one)
    return object_code(m)


def add_one_executable() -> LoadedNativeExecutable:
    """One entry point, `add_one`: binding 0 (read) and binding 1 (written) hold push constant 0
    i64 elements; one workgroup per element. Its one check fails on an input of -1."""
    triple, obj = _add_one_object()
    n = PushDim(0)
    entry = NativeEntry("add_one", "weir_add_one", 2, 1,
                        (BindingAccess(0, 0, "i64", (n,), False),
                         BindingAccess(1, 0, "i64", (n,), True)), n, 1, (),
                        ("cf.assert at k.mlir:3:5 failed: input must not be -1",))
    payload = encode_native_executable(NativeExecutable(triple, "x86-64", (), (entry,), (obj,)))
    exe = load_native_executable(memoryview(payload))
    exe.name = "k"
    return exe

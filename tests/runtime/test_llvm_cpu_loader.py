"""The llvm-cpu loader: it links object code in memory and calls entry points per workgroup
range, but first refuses what would make native code misbehave: malformed payloads, CPU
features this machine lacks, missing symbols, and bindings too small or read-only."""

from __future__ import annotations

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest
from native_kernels import fill_entry, object_code

from weir.errors import LoadError, ModuleFormatError, RuntimeFault
from weir.format.native_executable import (
    BindingAccess,
    NativeEntry,
    NativeExecutable,
    decode_native_executable,
    encode_native_executable,
)
from weir.format.kernel_description import PushDim
from weir.runtime.executables.llvm_cpu import load_native_executable
from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.workgroups import InlineWorkgroups, ParallelWorkgroups



def _iota_object() -> tuple[str, bytes]:
    """`iota(bindings, consts, begin, end)`: out[i] = i for i in [begin, end) (tile 1)."""
    m, _ = fill_entry("weir_iota", lambda b, i: i)
    return object_code(m)


def _payload(features: tuple[str, ...] = (), symbol: str = "weir_iota") -> bytes:
    triple, obj = _iota_object()
    entry = NativeEntry("iota", symbol, 1, 1,
                        (BindingAccess(0, 0, "i64", (PushDim(0),), True),), PushDim(0), 1)
    return encode_native_executable(NativeExecutable(triple, "x86-64", features, (entry,), (obj,)))


def test_payload_round_trips() -> None:
    data = _payload(("sse2",))
    exe = decode_native_executable(data)
    assert exe.features == ("sse2",)
    assert exe.entries[0].accesses[0].shape == (PushDim(0),)
    assert encode_native_executable(exe) == data


@pytest.mark.parametrize("runner", [InlineWorkgroups(), ParallelWorkgroups(threads=2)],
                         ids=["inline", "parallel"])
def test_entry_runs_every_workgroup(runner: InlineWorkgroups | ParallelWorkgroups) -> None:
    exe = load_native_executable(memoryview(_payload()))
    out = Allocator().allocate(8 * 100)
    exe.dispatch(0, (100, 1, 1), [100], [out], runner)
    np.testing.assert_array_equal(out.data.view(np.int64), np.arange(100))


@pytest.mark.parametrize("workgroups", [(1, 1, 1), (99, 1, 1), (50, 2, 2), (0, 1, 1)])
def test_a_workgroup_count_other_than_the_grid_is_a_fault_not_a_partial_result(
        workgroups: tuple[int, int, int]) -> None:
    """The host program's count must be the grid the code was generated for: fewer
    workgroups would leave elements unwritten, more would run past the data."""
    exe = load_native_executable(memoryview(_payload()))
    out = Allocator().allocate(8 * 100)
    out.data.view(np.int64)[:] = -7
    shown = "x".join(map(str, workgroups))
    with pytest.raises(RuntimeFault, match=rf"'iota': workgroup count {shown} is not the 100 "
                                           r"workgroups of its grid \(push constant 0\)"):
        exe.dispatch(0, workgroups, [100], [out], InlineWorkgroups())
    with pytest.raises(RuntimeFault, match="workgroup count"):
        exe.native_call(0, workgroups, [100], [out])
    assert (out.data.view(np.int64) == -7).all()  # nothing ran


@pytest.mark.parametrize("mutate, message", [
    (lambda d: b"XXXX" + d[4:], "bad magic"),
    (lambda d: d[:6], "truncated"),
    (lambda d: d[:8] + b"{" * (len(d) - 8), "not JSON"),
    (lambda d: d.replace(b'"binding":0', b'"binding":3'), "out of range"),
    (lambda d: d.replace(b'"tile":1', b'"tile":0'), "below 1"),
    (lambda d: d.replace(b'"dtype":"i64"', b'"dtype":"q64"'), "unknown element type"),
    (lambda d: d[:-1], "lists .* bytes of object code"),
])
def test_malformed_payloads_are_format_errors(mutate: object, message: str) -> None:
    with pytest.raises(ModuleFormatError, match=message):
        decode_native_executable(mutate(_payload()))  # type: ignore[operator]


def test_missing_cpu_features_are_a_load_error_not_an_illegal_instruction() -> None:
    with pytest.raises(LoadError, match="needs CPU feature.*weir-test-only-feature"):
        load_native_executable(memoryview(_payload(("sse2", "weir-test-only-feature"))))


def test_missing_symbol_is_a_load_error() -> None:
    with pytest.raises(LoadError, match="no symbol 'weir_nothing'"):
        load_native_executable(memoryview(_payload(symbol="weir_nothing")))


def test_bindings_are_checked_before_native_code_runs() -> None:
    exe = load_native_executable(memoryview(_payload()))
    small = Allocator().allocate(8 * 10)
    with pytest.raises(RuntimeFault, match="store to binding 0.*outside the buffer of 80 bytes"):
        exe.dispatch(0, (1, 1, 1), [11], [small], InlineWorkgroups())
    readonly = Buffer.wrap_readonly(bytes(800))
    with pytest.raises(RuntimeFault, match="read-only"):
        exe.dispatch(0, (1, 1, 1), [100], [readonly], InlineWorkgroups())
    with pytest.raises(RuntimeFault, match="0 push constant.*takes 1"):
        exe.dispatch(0, (1, 1, 1), [], [small], InlineWorkgroups())


def test_a_symbol_the_process_lacks_is_a_load_error_not_a_jump_to_zero() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    triple = llvm.get_process_triple()
    m = ir.Module("needs")
    m.triple = triple
    missing = ir.Function(m, ir.FunctionType(ir.VoidType(), []), "weir_test_no_such_symbol")
    caller = ir.Function(m, ir.FunctionType(ir.VoidType(), []), "weir_caller")
    b = ir.IRBuilder(caller.append_basic_block("entry"))
    b.call(missing, [])
    b.ret_void()
    tm = llvm.Target.from_triple(triple).create_target_machine(reloc="pic")
    extra = tm.emit_object(llvm.parse_assembly(str(m)))
    exe = decode_native_executable(_payload())
    payload = encode_native_executable(NativeExecutable(
        exe.triple, exe.cpu, exe.features, exe.entries, exe.objects + (extra,)))
    with pytest.raises(LoadError, match="needs symbol\\(s\\) weir_test_no_such_symbol"):
        load_native_executable(memoryview(payload))


# Regressions found by the module fuzzer (tests/reliability): the descriptor is bound to its
# object code, and what LLVM is asked to look up is checked first.


@pytest.mark.parametrize("mutate, message", [
    # A grid changed without the code used to run too few workgroups: results left unwritten.
    (lambda d: d.replace(b'"tile":1', b'"tile":2'), "digest mismatch"),
    (lambda d: d.replace(b'"extent":{"push":0}', b'"extent":0'), "digest mismatch"),
    # An empty symbol used to abort the process inside LLVM's name mangler.
    (lambda d: d.replace(b'"symbol":"weir_iota"', b'"symbol":""'), "is not a symbol name"),
    (lambda d: d.replace(b'"symbol":"weir_iota"', b'"symbol":"a b"'), "is not a symbol name"),
    (lambda d: d.replace(b'"windows":[]', b'"windows":[],"spare":1'), "unknown field 'spare'"),
])
def test_descriptor_defects_are_format_errors(mutate: object, message: str) -> None:
    data = _payload()
    bad = mutate(data)  # type: ignore[operator]
    assert bad != data
    header_length = int.from_bytes(data[4:8], "little") + len(bad) - len(data)
    bad = bad[:4] + header_length.to_bytes(4, "little") + bad[8:]
    with pytest.raises(ModuleFormatError, match=message):
        decode_native_executable(bad)


def test_an_entry_symbol_must_be_defined_by_the_objects() -> None:
    """`abort` exists in this process; it is still no entry point of this executable."""
    with pytest.raises(LoadError, match="no symbol 'abort' in its object code"):
        load_native_executable(memoryview(_payload(symbol="abort")))


def test_deep_nesting_and_huge_integers_are_format_errors() -> None:
    for text in (b"[" * 100_000 + b"]" * 100_000, b'{"triple": ' + b"7" * 5000 + b"}"):
        with pytest.raises(ModuleFormatError, match="not JSON"):
            decode_native_executable(b"WNEX" + len(text).to_bytes(4, "little") + text)

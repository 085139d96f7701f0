"""Library objects of the llvm-cpu loader: an object that defines no entry point (the GEMM
kernels each executable of a module carries) is linked once per process and shared by every
executable that carries the same bytes, while each executable still calls the code of its own
libraries when another module's libraries use the same names."""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np
from native_kernels import entry_point, fill_entry, I64, object_code

from weir.format.kernel_description import PushDim
from weir.format.native_executable import (
    BindingAccess,
    encode_native_executable,
    NativeEntry,
    NativeExecutable,
)
from weir.runtime.executables import llvm_cpu
from weir.runtime.executables.llvm_cpu import load_native_executable
from weir.runtime.hal.buffer import Allocator
from weir.runtime.hal.workgroups import InlineWorkgroups

_LIBRARY_SYMBOL = "weir_test_library_value"


def _library_object(value: int) -> bytes:
    """`weir_test_library_value() -> value`: the same name whatever the value."""
    _, fn = entry_point("unused")
    m = fn.module
    lib = ir.Function(m, ir.FunctionType(I64, []), _LIBRARY_SYMBOL)
    ir.IRBuilder(lib.append_basic_block("entry")).ret(I64(value))
    m.globals.pop("unused")
    return object_code(m)[1]


def _payload(value: int) -> bytes:
    """One entry point, `fill`: out[i] = weir_test_library_value() over its workgroups, the
    function coming from a library object of this payload that returns `value`."""
    def call_library(b: ir.IRBuilder, i: ir.Value) -> ir.Value:
        return b.call(ir.Function(b.module, ir.FunctionType(I64, []), _LIBRARY_SYMBOL), [])
    m, _ = fill_entry("weir_fill", call_library)
    triple, caller = object_code(m)
    meta = NativeEntry("fill", "weir_fill", 1, 1,
                       (BindingAccess(0, 0, "i64", (PushDim(0),), True),), PushDim(0), 1)
    return encode_native_executable(NativeExecutable(triple, "x86-64", (), (meta,),
                                                     (caller, _library_object(value))))


def _run(exe: llvm_cpu.LoadedNativeExecutable) -> np.ndarray:
    out = Allocator().allocate(8 * 4)
    exe.dispatch(0, (4, 1, 1), [4], [out], InlineWorkgroups())
    return out.data.view(np.int64).copy()


def test_executables_carrying_the_same_library_link_it_once() -> None:
    before = len(llvm_cpu._LIBRARIES)  # pyright: ignore[reportPrivateUsage]
    first = load_native_executable(memoryview(_payload(41)))
    second = load_native_executable(memoryview(_payload(41)))
    assert len(llvm_cpu._LIBRARIES) == before + 1  # pyright: ignore[reportPrivateUsage]
    np.testing.assert_array_equal(_run(first), [41] * 4)
    np.testing.assert_array_equal(_run(second), [41] * 4)


def test_each_executable_calls_its_own_library_under_a_shared_name() -> None:
    one = load_native_executable(memoryview(_payload(1)))
    two = load_native_executable(memoryview(_payload(2)))
    one_again = load_native_executable(memoryview(_payload(1)))  # after two took the name
    np.testing.assert_array_equal(_run(one), [1] * 4)
    np.testing.assert_array_equal(_run(two), [2] * 4)
    np.testing.assert_array_equal(_run(one_again), [1] * 4)

"""The llvm-cpu target's slices: windows that depend on push constants are listed in the payload
for the runtime to check before native code runs; static windows are checked by the compiler."""

from __future__ import annotations

import pytest

import weir.api as weir
from weir.errors import CompileError
from weir.format.module_file import deserialize
from weir.format.native_executable import WindowBounds, decode_native_executable
from weir.format.kernel_description import PushDim

OPTIONS = weir.CompilerOptions(target_backends=("llvm-cpu",))


def _windows(src: str) -> tuple[WindowBounds, ...]:
    image = deserialize(weir.compile_string(src, "slices.mlir", OPTIONS))
    variant = image.executables[0].variants[0]
    (entry,) = decode_native_executable(image.segments[variant.segment]).entries
    return entry.windows


def test_dynamic_offset_window_is_listed() -> None:
    windows = _windows("""
    func.func @f(%x: tensor<8x9xf32>, %i: index) -> tensor<2x3xf32> {
      %0 = tensor.extract_slice %x[1, %i] [2, 3] [1, 2] : tensor<8x9xf32> to tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    }""")
    assert windows == (WindowBounds(PushDim(0), 3, 2, 9),)


def test_insert_into_a_dynamic_destination_is_listed() -> None:
    windows = _windows("""
    func.func @f(%d: tensor<?xi32>, %s: tensor<4xi32>) -> tensor<?xi32> {
      %0 = tensor.insert_slice %s into %d[2] [4] [1] : tensor<4xi32> into tensor<?xi32>
      return %0 : tensor<?xi32>
    }""")
    assert len(windows) == 1 and (windows[0].offset, windows[0].size) == (2, 4)
    assert isinstance(windows[0].extent, PushDim)


def test_static_windows_need_no_check() -> None:
    assert _windows("""
    func.func @f(%x: tensor<8xf32>) -> tensor<3xf32> {
      %0 = tensor.extract_slice %x[5] [3] [1] : tensor<8xf32> to tensor<3xf32>
      return %0 : tensor<3xf32>
    }""") == ()


def test_static_window_out_of_bounds_is_a_compile_error() -> None:
    src = """func.func @f(%x: tensor<8xf32>) -> tensor<3xf32> {
  %0 = tensor.extract_slice %x[6] [3] [1] : tensor<8xf32> to tensor<3xf32>
  return %0 : tensor<3xf32>
}"""
    with pytest.raises(CompileError, match=r"slices\.mlir:2:3: error: 'tensor\.extract_slice' op "
                                           r"the slice of dimension 0 is out of bounds"):
        weir.compile_string(src, "slices.mlir", OPTIONS)

"""A matmul into a fill with +0 (or an empty tensor) on llvm-cpu calls the microkernel's
from-zero variant, which overwrites its block of the output, and emits no pass that fills the
output first; other inits (another constant, -0, an argument) keep the fill and the
accumulating kernel. The results of all of them are checked in tests/e2e/test_matmul_inits.py."""

from __future__ import annotations

import pytest

import weir.api as weir
from weir.format.module_file import deserialize
from weir.format.native_executable import NativeExecutable, decode_native_executable

OPTIONS = weir.CompilerOptions(target_backends=("llvm-cpu",))
TY = "tensor<96x128xf32>"


def _executable(init: str) -> NativeExecutable:
    src = f"""func.func @f(%x: tensor<96x64xf32>, %w: tensor<64x128xf32>, %c: {TY}) -> {TY} {{
  %e = tensor.empty() : {TY}
  {init}
  %r = linalg.matmul ins(%x, %w : tensor<96x64xf32>, tensor<64x128xf32>) outs(%acc : {TY}) -> {TY}
  return %r : {TY}
}}"""
    image = deserialize(weir.compile_string(src, "init.mlir", OPTIONS))
    (executable,) = image.executables
    return decode_native_executable(image.segments[executable.variants[0].segment])


def _fill(value: str) -> str:
    return f"""%v = arith.constant {value} : f32
  %acc = linalg.fill ins(%v : f32) outs(%e : {TY}) -> {TY}"""


@pytest.mark.parametrize("init", [_fill("0.0"), f"%acc = tensor.empty() : {TY}"],
                         ids=["fill-zero", "empty"])
def test_products_into_zeros_overwrite_their_block(init: str) -> None:
    entry_object, *kernels = _executable(init).objects
    assert b"weir_gemm_f32_f32_f32_from_zero" in entry_object
    assert b"memset" not in entry_object
    assert any(b"weir_gemm_f32_f32_f32_from_zero" in kernel for kernel in kernels)


@pytest.mark.parametrize("init", [_fill("1.0"), _fill("-0.0"), f"%acc = arith.addf %c, %c : {TY}"],
                         ids=["fill-one", "fill-minus-zero", "argument"])
def test_other_inits_are_accumulated_into(init: str) -> None:
    entry_object = _executable(init).objects[0]
    assert b"weir_gemm_f32_f32_f32_from_zero" not in entry_object
    assert b"weir_gemm_f32_f32_f32" in entry_object

"""Programs compiled and run end to end on the reference target, compared with numpy."""

from __future__ import annotations

import numpy as np
import pytest

import weir.api as weir
from weir.errors import CompileError


def run(source: str, function: str, *args: np.ndarray) -> object:
    ctx = weir.load([weir.compile_string(source, "test.mlir")])
    return ctx.lookup_function(function)(*args)


RNG = np.random.default_rng(7)


def test_elementwise_chain_of_four_is_one_dispatch_and_correct() -> None:
    src = """
    func.func @chain(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
      %0 = math.absf %a : tensor<64xf32>
      %1 = arith.mulf %0, %b : tensor<64xf32>
      %2 = arith.addf %1, %a : tensor<64xf32>
      %3 = math.exp %2 : tensor<64xf32>
      return %3 : tensor<64xf32>
    }"""
    flow = weir.compile_to_phase(src, "chain.mlir", weir.CompilerOptions(), "flow")
    assert flow.count('"flow.dispatch"(') == 1
    a = RNG.standard_normal(64).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    np.testing.assert_allclose(run(src, "chain", a, b), np.exp(np.abs(a) * b + a), rtol=1e-6)


def test_matmul_with_fill() -> None:
    src = """
    func.func @mm(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>) -> tensor<3x4xf32> {
      %zero = arith.constant 0.0 : f32
      %init = tensor.empty() : tensor<3x4xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<3x4xf32>) -> tensor<3x4xf32>
      %0 = linalg.matmul ins(%a, %b : tensor<3x5xf32>, tensor<5x4xf32>) outs(%acc : tensor<3x4xf32>) -> tensor<3x4xf32>
      return %0 : tensor<3x4xf32>
    }"""
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    b = RNG.standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(run(src, "mm", a, b), a @ b, rtol=1e-5, atol=1e-6)


def test_generic_row_sum_reduction() -> None:
    src = """
    func.func @rows(%a: tensor<4x8xf32>) -> tensor<4xf32> {
      %zero = arith.constant 0.0 : f32
      %init = tensor.empty() : tensor<4xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<4xf32>) -> tensor<4xf32>
      %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                           iterator_types = ["parallel", "reduction"]}
          ins(%a : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
      ^bb0(%x: f32, %s: f32):
        %y = arith.addf %x, %s : f32
        linalg.yield %y : f32
      } -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    a = RNG.standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_allclose(run(src, "rows", a), a.sum(axis=1), rtol=1e-5, atol=1e-6)


def test_transpose() -> None:
    src = """
    func.func @t(%a: tensor<2x3xi32>) -> tensor<3x2xi32> {
      %init = tensor.empty() : tensor<3x2xi32>
      %0 = linalg.transpose ins(%a : tensor<2x3xi32>) outs(%init : tensor<3x2xi32>) permutation = [1, 0]
      return %0 : tensor<3x2xi32>
    }"""
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(run(src, "t", a), a.T)


def test_broadcast_then_add() -> None:
    src = """
    func.func @b(%row: tensor<3xf32>, %m: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %init = tensor.empty() : tensor<2x3xf32>
      %0 = linalg.broadcast ins(%row : tensor<3xf32>) outs(%init : tensor<2x3xf32>) dimensions = [0]
      %1 = arith.addf %0, %m : tensor<2x3xf32>
      return %1 : tensor<2x3xf32>
    }"""
    row = np.array([1, 2, 3], np.float32)
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(run(src, "b", row, m), m + row)


def test_reduce_max() -> None:
    src = """
    func.func @r(%a: tensor<4x6xf32>) -> tensor<6xf32> {
      %ninf = arith.constant 0xFF800000 : f32
      %init = tensor.empty() : tensor<6xf32>
      %acc = linalg.fill ins(%ninf : f32) outs(%init : tensor<6xf32>) -> tensor<6xf32>
      %0 = linalg.reduce ins(%a : tensor<4x6xf32>) outs(%acc : tensor<6xf32>) dimensions = [0]
        (%x: f32, %m: f32) {
          %y = arith.maximumf %x, %m : f32
          linalg.yield %y : f32
        }
      return %0 : tensor<6xf32>
    }"""
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    np.testing.assert_allclose(run(src, "r", a), a.max(axis=0))


def test_integer_elementwise_keeps_dtype() -> None:
    src = """
    func.func @sq(%a: tensor<5xi32>) -> tensor<5xi32> {
      %0 = arith.muli %a, %a : tensor<5xi32>
      return %0 : tensor<5xi32>
    }"""
    a = np.array([1, 2, 3, 4, 5], np.int32)
    result = run(src, "sq", a)
    assert isinstance(result, np.ndarray) and result.dtype == np.int32
    np.testing.assert_array_equal(result, a * a)


def test_dense_constant_operand() -> None:
    src = """
    func.func @addc(%a: tensor<4xf32>) -> tensor<4xf32> {
      %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %0 = arith.addf %a, %c : tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    a = np.ones(4, np.float32)
    np.testing.assert_allclose(run(src, "addc", a), a + np.array([1, 2, 3, 4], np.float32))


def test_dynamic_shape_elementwise() -> None:
    src = """
    func.func @dyn(%a: tensor<?xi32>) -> tensor<?xi32> {
      %0 = arith.muli %a, %a : tensor<?xi32>
      return %0 : tensor<?xi32>
    }"""
    for n in (1, 5, 17):
        a = np.arange(n, dtype=np.int32)
        np.testing.assert_array_equal(run(src, "dyn", a), a * a)


def test_syntax_error_is_located() -> None:
    with pytest.raises(CompileError) as info:
        weir.compile_string("func.func @f( {", "bad.mlir")
    assert str(info.value).startswith("bad.mlir:1:")


def test_dense_resource_constant_comes_from_the_files_own_resources() -> None:
    src = """
    func.func @addr(%a: tensor<2xf32>) -> tensor<2xf32> {
      %c = arith.constant dense_resource<weights> : tensor<2xf32>
      %0 = arith.addf %a, %c : tensor<2xf32>
      return %0 : tensor<2xf32>
    }
    {-#
      dialect_resources: { builtin: { weights: "0x040000000000803F00000040" } }
    #-}"""
    np.testing.assert_allclose(run(src, "addr", np.array([10, 20], np.float32)), [11, 22])


def test_bf16_constant_operand() -> None:
    import ml_dtypes

    src = """
    func.func @addb(%a: tensor<3xbf16>) -> tensor<3xbf16> {
      %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xbf16>
      %0 = arith.addf %a, %c : tensor<3xbf16>
      return %0 : tensor<3xbf16>
    }"""
    a = np.array([0.5, 0.25, 4.0], ml_dtypes.bfloat16)
    result = run(src, "addb", a)
    assert isinstance(result, np.ndarray) and result.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(result.astype(np.float32), [1.5, 2.25, 7.0])

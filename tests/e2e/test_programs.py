"""Programs compiled and run end to end on every host target (the `run` fixture), compared
with numpy."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir
from weir.errors import CompileError

Runner = Callable[..., object]  # the `run` fixture (conftest.py)


RNG = np.random.default_rng(7)


def test_elementwise_chain_of_four_is_one_dispatch_and_correct(run: Runner) -> None:
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


def test_matmul_with_fill(run: Runner) -> None:
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


def test_generic_row_sum_reduction(run: Runner) -> None:
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


def test_transpose(run: Runner) -> None:
    src = """
    func.func @t(%a: tensor<2x3xi32>) -> tensor<3x2xi32> {
      %init = tensor.empty() : tensor<3x2xi32>
      %0 = linalg.transpose ins(%a : tensor<2x3xi32>) outs(%init : tensor<3x2xi32>) permutation = [1, 0]
      return %0 : tensor<3x2xi32>
    }"""
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(run(src, "t", a), a.T)


def test_broadcast_then_add(run: Runner) -> None:
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


def test_reduce_max(run: Runner) -> None:
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


def test_integer_elementwise_keeps_dtype(run: Runner) -> None:
    src = """
    func.func @sq(%a: tensor<5xi32>) -> tensor<5xi32> {
      %0 = arith.muli %a, %a : tensor<5xi32>
      return %0 : tensor<5xi32>
    }"""
    a = np.array([1, 2, 3, 4, 5], np.int32)
    result = run(src, "sq", a)
    assert isinstance(result, np.ndarray) and result.dtype == np.int32
    np.testing.assert_array_equal(result, a * a)


def test_dense_constant_operand(run: Runner) -> None:
    src = """
    func.func @addc(%a: tensor<4xf32>) -> tensor<4xf32> {
      %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %0 = arith.addf %a, %c : tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    a = np.ones(4, np.float32)
    np.testing.assert_allclose(run(src, "addc", a), a + np.array([1, 2, 3, 4], np.float32))


def test_dynamic_shape_elementwise(run: Runner) -> None:
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


def test_dense_resource_constant_comes_from_the_files_own_resources(run: Runner) -> None:
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


def test_bf16_constant_operand(run: Runner) -> None:
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


def test_integer_division_by_zero_gives_zero_on_every_target(run: Runner) -> None:
    src = """
    func.func @div(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
      %0 = arith.divsi %a, %b : tensor<4xi32>
      %1 = arith.remsi %a, %b : tensor<4xi32>
      return %0, %1 : tensor<4xi32>, tensor<4xi32>
    }"""
    a = np.array([7, -7, 5, -2147483648], np.int32)
    b = np.array([2, 2, 0, -1], np.int32)
    q, r = run(src, "div", a, b)  # type: ignore[misc]
    np.testing.assert_array_equal(q, [3, -3, 0, -2147483648])
    np.testing.assert_array_equal(r, [1, -1, 0, 0])


def test_generic_with_two_results_and_index(run: Runner) -> None:
    src = """
    func.func @two(%a: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>) {
      %e0 = tensor.empty() : tensor<3x4xf32>
      %e1 = tensor.empty() : tensor<3x4xi64>
      %0:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                             iterator_types = ["parallel", "parallel"]}
          ins(%a : tensor<3x4xf32>) outs(%e0, %e1 : tensor<3x4xf32>, tensor<3x4xi64>) {
      ^bb0(%x: f32, %o0: f32, %o1: i64):
        %i = linalg.index 0 : index
        %j = linalg.index 1 : index
        %c4 = arith.constant 4 : index
        %r = arith.muli %i, %c4 : index
        %k = arith.addi %r, %j : index
        %ki = arith.index_cast %k : index to i64
        %kf = arith.sitofp %ki : i64 to f32
        %y = arith.addf %x, %kf : f32
        linalg.yield %y, %ki : f32, i64
      } -> tensor<3x4xf32>, tensor<3x4xi64>
      return %0#0, %0#1 : tensor<3x4xf32>, tensor<3x4xi64>
    }"""
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    y, k = run(src, "two", a)  # type: ignore[misc]
    iota = np.arange(12).reshape(3, 4)
    np.testing.assert_allclose(y, a + iota, rtol=1e-6)
    np.testing.assert_array_equal(k, iota)


def test_column_sums_and_dynamic_rows(run: Runner) -> None:
    src = """
    func.func @cols(%a: tensor<?x8xf32>) -> tensor<8xf32> {
      %zero = arith.constant 0.0 : f32
      %init = tensor.empty() : tensor<8xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<8xf32>) -> tensor<8xf32>
      %0 = linalg.reduce ins(%a : tensor<?x8xf32>) outs(%acc : tensor<8xf32>) dimensions = [0]
        (%x: f32, %s: f32) {
          %y = arith.addf %x, %s : f32
          linalg.yield %y : f32
        }
      return %0 : tensor<8xf32>
    }"""
    for rows in (1, 3, 100):
        a = RNG.standard_normal((rows, 8)).astype(np.float32)
        np.testing.assert_allclose(run(src, "cols", a), a.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_f16_elementwise_rounds_like_numpy(run: Runner) -> None:
    src = """
    func.func @h(%a: tensor<6xf16>, %b: tensor<6xf16>) -> tensor<6xf16> {
      %0 = arith.mulf %a, %b : tensor<6xf16>
      %1 = arith.addf %0, %a : tensor<6xf16>
      return %1 : tensor<6xf16>
    }"""
    a = np.array([0.1, 1.5, -2.25, 1000, 3e-5, 7], np.float16)
    b = np.array([3, -0.5, 4, 70, 2, 0.125], np.float16)
    # 1000 * 70 overflows f16 to inf on every target, as it does in numpy.
    with np.errstate(over="ignore"):
        expected = (a.astype(np.float32) * b.astype(np.float32) + a.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(run(src, "h", a, b), expected, rtol=2e-3)  # type: ignore[arg-type]


def test_matmul_of_an_elementwise_producer(run: Runner) -> None:
    src = """
    func.func @mm(%a: tensor<33x17xf32>, %b: tensor<17x9xf32>) -> tensor<33x9xf32> {
      %zero = arith.constant 0.0 : f32
      %r = arith.maximumf %a, %a : tensor<33x17xf32>
      %e = math.absf %r : tensor<33x17xf32>
      %init = tensor.empty() : tensor<33x9xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<33x9xf32>) -> tensor<33x9xf32>
      %0 = linalg.matmul ins(%e, %b : tensor<33x17xf32>, tensor<17x9xf32>) outs(%acc : tensor<33x9xf32>) -> tensor<33x9xf32>
      return %0 : tensor<33x9xf32>
    }"""
    a = RNG.standard_normal((33, 17)).astype(np.float32)
    b = RNG.standard_normal((17, 9)).astype(np.float32)
    np.testing.assert_allclose(run(src, "mm", a, b), np.abs(a) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ty, dtype, rtol", [("f32", np.float32, 1e-4), ("f16", np.float16, 2e-2)])
def test_short_wide_matmul_split_by_columns(run: Runner, ty: str, dtype: type, rtol: float) -> None:
    """Few rows, many columns: llvm-cpu splits the columns over workgroups (f16 results
    accumulate in f32 scratch and are rounded once)."""
    src = f"""
    func.func @mm(%a: tensor<8x300x{ty}>, %b: tensor<300x700x{ty}>, %c: tensor<8x700x{ty}>) -> tensor<8x700x{ty}> {{
      %0 = linalg.matmul ins(%a, %b : tensor<8x300x{ty}>, tensor<300x700x{ty}>) outs(%c : tensor<8x700x{ty}>) -> tensor<8x700x{ty}>
      return %0 : tensor<8x700x{ty}>
    }}"""
    a = RNG.standard_normal((8, 300)).astype(dtype)
    b = RNG.standard_normal((300, 700)).astype(dtype)
    c = RNG.standard_normal((8, 700)).astype(dtype)
    expected = c.astype(np.float32) + a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(np.asarray(run(src, "mm", a, b, c), np.float32), expected,
                               rtol=rtol, atol=rtol * 20)

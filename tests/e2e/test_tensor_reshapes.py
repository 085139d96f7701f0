"""tensor.collapse_shape, tensor.expand_shape, tensor.reshape and tensor.cast compiled and run on
every host target (the `run` fixture). They are metadata on the host (the result aliases its
source's buffer with a new shape), so these check that results come back with the right shape and
contents, static and dynamic, between dispatches and straight from arguments; and that
tensor.empty works as a destination, a reshaped value and a result."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir
from weir.errors import CompileError, RuntimeFault

Runner = Callable[..., object]  # the `run` fixture (conftest.py)
RNG = np.random.default_rng(31)


def _ints(*shape: int) -> np.ndarray:
    return RNG.integers(-1000, 1000, shape).astype(np.int32)


def _floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _result(run: Runner, *args: object) -> np.ndarray:
    out = run(*args)
    assert isinstance(out, np.ndarray)
    return out


def test_collapse_an_argument(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<2x3x4xi32>) -> tensor<6x4xi32> {
      %0 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xi32> into tensor<6x4xi32>
      return %0 : tensor<6x4xi32>
    }"""
    x = _ints(2, 3, 4)
    out = _result(run, src, "f", x)
    assert out.shape == (6, 4)
    np.testing.assert_array_equal(out, x.reshape(6, 4))


def test_expand_a_computed_vector(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<24xi32>) -> tensor<2x3x4xi32> {
      %y = arith.addi %x, %x : tensor<24xi32>
      %0 = tensor.expand_shape %y [[0, 1, 2]] output_shape [2, 3, 4] : tensor<24xi32> into tensor<2x3x4xi32>
      return %0 : tensor<2x3x4xi32>
    }"""
    x = _ints(24)
    np.testing.assert_array_equal(_result(run, src, "f", x), (2 * x).reshape(2, 3, 4))


def test_round_trip_around_elementwise_math(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      %0 = tensor.collapse_shape %x [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
      %1 = math.tanh %0 : tensor<24xf32>
      %2 = tensor.expand_shape %1 [[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
      %3 = arith.addf %2, %x : tensor<4x6xf32>
      return %3 : tensor<4x6xf32>
    }"""
    x = _floats(4, 6)
    np.testing.assert_allclose(_result(run, src, "f", x), np.tanh(x) + x, rtol=1e-6, atol=1e-6)


def test_reshape_by_a_constant_shape(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<4x6xf32>) -> tensor<3x8xf32> {
      %shape = arith.constant dense<[3, 8]> : tensor<2xi64>
      %0 = tensor.reshape %x(%shape) : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<3x8xf32>
      %1 = arith.mulf %0, %0 : tensor<3x8xf32>
      return %1 : tensor<3x8xf32>
    }"""
    x = _floats(4, 6)
    np.testing.assert_allclose(_result(run, src, "f", x), (x * x).reshape(3, 8), rtol=1e-6)


def test_reshape_to_a_dynamic_shape_from_a_constant(run: Runner) -> None:
    """(xDSL 0.74's verifier compares element counts with -1 for each dynamic dim, so the types
    here keep those products equal.)"""
    src = """
    func.func @f(%x: tensor<?x4xi32>) -> tensor<4x?xi32> {
      %shape = arith.constant dense<[4, 3]> : tensor<2xindex>
      %0 = tensor.reshape %x(%shape) : (tensor<?x4xi32>, tensor<2xindex>) -> tensor<4x?xi32>
      return %0 : tensor<4x?xi32>
    }"""
    x = _ints(3, 4)
    np.testing.assert_array_equal(_result(run, src, "f", x), x.reshape(4, 3))


def test_cast_static_to_dynamic_and_back(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<?x5xf32>) -> tensor<3x5xf32> {
      %0 = tensor.cast %x : tensor<?x5xf32> to tensor<3x5xf32>
      %1 = tensor.cast %0 : tensor<3x5xf32> to tensor<?x?xf32>
      %2 = math.absf %1 : tensor<?x?xf32>
      %3 = tensor.cast %2 : tensor<?x?xf32> to tensor<3x5xf32>
      return %3 : tensor<3x5xf32>
    }"""
    x = _floats(3, 5)
    np.testing.assert_array_equal(_result(run, src, "f", x), np.abs(x))


def test_dynamic_collapse_and_expand(run: Runner) -> None:
    """The collapsed size is a product computed on the host; the expansion splits it again."""
    src = """
    func.func @f(%x: tensor<?x4xi32>) -> tensor<?x2x2xi32> {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?x4xi32>
      %0 = tensor.collapse_shape %x [[0, 1]] : tensor<?x4xi32> into tensor<?xi32>
      %1 = arith.muli %0, %0 : tensor<?xi32>
      %2 = tensor.expand_shape %1 [[0, 1, 2]] output_shape [%n, 2, 2] : tensor<?xi32> into tensor<?x2x2xi32>
      return %2 : tensor<?x2x2xi32>
    }"""
    for rows in (3, 1):
        x = _ints(rows, 4)
        out = _result(run, src, "f", x)
        assert out.shape == (rows, 2, 2)
        np.testing.assert_array_equal(out, (x * x).reshape(rows, 2, 2))


def test_matmul_result_collapsed_into_a_reduction(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<5xf32> {
      %zero = arith.constant 0.0 : f32
      %a2 = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
      %e = tensor.empty() : tensor<6x5xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
      %m = linalg.matmul ins(%a2, %b : tensor<6x4xf32>, tensor<4x5xf32>) outs(%acc : tensor<6x5xf32>) -> tensor<6x5xf32>
      %m3 = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
      %flat = tensor.collapse_shape %m3 [[0, 1, 2]] : tensor<2x3x5xf32> into tensor<30xf32>
      %r = tensor.expand_shape %flat [[0, 1]] output_shape [6, 5] : tensor<30xf32> into tensor<6x5xf32>
      %e2 = tensor.empty() : tensor<5xf32>
      %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<5xf32>) -> tensor<5xf32>
      %s = linalg.reduce ins(%r : tensor<6x5xf32>) outs(%acc2 : tensor<5xf32>) dimensions = [0]
        (%v: f32, %t: f32) {
          %y = arith.addf %v, %t : f32
          linalg.yield %y : f32
        }
      return %s : tensor<5xf32>
    }"""
    a, b = _floats(2, 3, 4), _floats(4, 5)
    np.testing.assert_allclose(_result(run, src, "f", a, b), (a.reshape(6, 4) @ b).sum(axis=0),
                               rtol=1e-5, atol=1e-5)


def test_collapse_of_a_slice_and_a_padded_expand(run: Runner) -> None:
    """Reshapes between data-movement dispatches: slice, collapse, pad, expand."""
    src = """
    func.func @f(%x: tensor<4x5xi32>) -> tensor<2x7xi32> {
      %c = arith.constant 0 : i32
      %s = tensor.extract_slice %x[1, 1] [3, 4] [1, 1] : tensor<4x5xi32> to tensor<3x4xi32>
      %v = tensor.collapse_shape %s [[0, 1]] : tensor<3x4xi32> into tensor<12xi32>
      %p = tensor.pad %v low[1] high[1] {
      ^bb0(%i: index):
        tensor.yield %c : i32
      } : tensor<12xi32> to tensor<14xi32>
      %0 = tensor.expand_shape %p [[0, 1]] output_shape [2, 7] : tensor<14xi32> into tensor<2x7xi32>
      return %0 : tensor<2x7xi32>
    }"""
    x = _ints(4, 5)
    np.testing.assert_array_equal(_result(run, src, "f", x),
                                  np.pad(x[1:, 1:].reshape(12), 1).reshape(2, 7))


def test_empty_reshaped_then_filled(run: Runner) -> None:
    src = """
    func.func @f(%n: index) -> tensor<?xf32> {
      %c = arith.constant 0.25 : f32
      %e = tensor.empty(%n) : tensor<?x4xf32>
      %v = tensor.collapse_shape %e [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
      %0 = linalg.fill ins(%c : f32) outs(%v : tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }"""
    np.testing.assert_array_equal(_result(run, src, "f", 3), np.full(12, 0.25, np.float32))


def test_empty_result_has_its_shape(run: Runner) -> None:
    """An empty tensor returned as it is: its contents are undefined, its shape is not."""
    src = """
    func.func @f(%n: index) -> tensor<?x3xi32> {
      %e = tensor.empty(%n) : tensor<?x3xi32>
      return %e : tensor<?x3xi32>
    }"""
    assert _result(run, src, "f", 5).shape == (5, 3)


def test_reshape_by_a_computed_shape_to_a_dynamic_type_is_a_compile_error() -> None:
    src = """func.func @f(%x: tensor<?x4xi32>, %s: tensor<2xindex>) -> tensor<4x?xi32> {
  %0 = tensor.reshape %x(%s) : (tensor<?x4xi32>, tensor<2xindex>) -> tensor<4x?xi32>
  return %0 : tensor<4x?xi32>
}"""
    with pytest.raises(CompileError, match=r"shape\.mlir:2:3: error: tensor\.reshape to a dynamic "
                                           r"shape given by a non-constant shape tensor is not "
                                           r"supported"):
        weir.compile_string(src, "shape.mlir")


def test_reshape_and_cast_from_dynamic_shapes_are_checked_at_run_time(run: Runner) -> None:
    src = """
    func.func @flat(%a: tensor<?x4xf32>) -> tensor<8xf32> {
      %s = arith.constant dense<[8]> : tensor<1xindex>
      %0 = tensor.reshape %a(%s) : (tensor<?x4xf32>, tensor<1xindex>) -> tensor<8xf32>
      return %0 : tensor<8xf32>
    }
    func.func @pin(%a: tensor<?x4xf32>) -> tensor<2x4xf32> {
      %0 = tensor.cast %a : tensor<?x4xf32> to tensor<2x4xf32>
      return %0 : tensor<2x4xf32>
    }"""
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(run(src, "flat", a), a.reshape(8))
    np.testing.assert_array_equal(run(src, "pin", a), a)
    wrong = np.zeros((3, 4), np.float32)
    with pytest.raises(RuntimeFault, match=r"test.mlir:4:\d+: 'tensor.reshape' in @flat: the "
                                             r"element count of operand 0 \(%a\) differs from the "
                                             r"result's: 12 vs 8$"):
        run(src, "flat", wrong)
    with pytest.raises(RuntimeFault, match=r"'tensor.cast' in @pin: dimension 0 of operand 0 "
                                             r"\(%a\) differs from dimension 0 of the result type: "
                                             r"3 vs 2$"):
        run(src, "pin", wrong)

"""tensor.extract_slice and tensor.insert_slice compiled and run on every host target (the `run`
fixture), against numpy slicing: static, strided, rank-reducing and dynamic windows, slices fused
into elementwise math, and windows out of bounds refused at run time by both targets."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir
from weir.errors import RuntimeFault

Runner = Callable[..., object]  # the `run` fixture (conftest.py)
RNG = np.random.default_rng(23)


def _ints(*shape: int) -> np.ndarray:
    return RNG.integers(-100, 100, shape).astype(np.int32)


def _floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _dispatches(src: str) -> int:
    return weir.compile_to_phase(src, "slices.mlir", weir.CompilerOptions(), "flow").count(
        '"flow.dispatch"(')


def test_static_slice(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<6x8xi32>) -> tensor<3x4xi32> {
      %0 = tensor.extract_slice %x[2, 3] [3, 4] [1, 1] : tensor<6x8xi32> to tensor<3x4xi32>
      return %0 : tensor<3x4xi32>
    }"""
    x = _ints(6, 8)
    np.testing.assert_array_equal(run(src, "f", x), x[2:5, 3:7])


def test_strided_slice(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<7x10xf32>) -> tensor<3x3xf32> {
      %0 = tensor.extract_slice %x[0, 1] [3, 3] [3, 4] : tensor<7x10xf32> to tensor<3x3xf32>
      return %0 : tensor<3x3xf32>
    }"""
    x = _floats(7, 10)
    np.testing.assert_array_equal(run(src, "f", x), x[0:7:3, 1:10:4])


def test_rank_reducing_slice_takes_a_column(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<5x4x3xi32>) -> tensor<5x3xi32> {
      %0 = tensor.extract_slice %x[0, 2, 0] [5, 1, 3] [1, 1, 1] : tensor<5x4x3xi32> to tensor<5x3xi32>
      return %0 : tensor<5x3xi32>
    }"""
    x = _ints(5, 4, 3)
    np.testing.assert_array_equal(run(src, "f", x), x[:, 2, :])


def test_slice_to_a_scalar_tensor(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<3x4xf32>) -> tensor<f32> {
      %0 = tensor.extract_slice %x[2, 1] [1, 1] [1, 1] : tensor<3x4xf32> to tensor<f32>
      return %0 : tensor<f32>
    }"""
    x = _floats(3, 4)
    np.testing.assert_array_equal(run(src, "f", x), x[2, 1])


def test_dynamic_offsets_from_arguments(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<8x9xf32>, %i: index, %j: index) -> tensor<2x5xf32> {
      %0 = tensor.extract_slice %x[%i, %j] [2, 5] [1, 1] : tensor<8x9xf32> to tensor<2x5xf32>
      return %0 : tensor<2x5xf32>
    }"""
    x = _floats(8, 9)
    for i, j in ((0, 0), (6, 4), (3, 2)):
        np.testing.assert_array_equal(run(src, "f", x, i, j), x[i:i + 2, j:j + 5])


def test_dynamic_offset_and_stride(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<20xi32>, %o: index, %s: index) -> tensor<4xi32> {
      %0 = tensor.extract_slice %x[%o] [4] [%s] : tensor<20xi32> to tensor<4xi32>
      return %0 : tensor<4xi32>
    }"""
    x = _ints(20)
    np.testing.assert_array_equal(run(src, "f", x, 1, 5), x[1:20:5])
    np.testing.assert_array_equal(run(src, "f", x, 10, 2), x[10:18:2])


def test_last_three_of_a_dynamic_vector(run: Runner) -> None:
    """The offset is computed on the host from the argument's size."""
    src = """
    func.func @f(%x: tensor<?xi32>) -> tensor<3xi32> {
      %c0 = arith.constant 0 : index
      %c3 = arith.constant 3 : index
      %n = tensor.dim %x, %c0 : tensor<?xi32>
      %o = arith.subi %n, %c3 : index
      %0 = tensor.extract_slice %x[%o] [3] [1] : tensor<?xi32> to tensor<3xi32>
      return %0 : tensor<3xi32>
    }"""
    for n in (3, 11):
        x = _ints(n)
        np.testing.assert_array_equal(run(src, "f", x), x[-3:])


def test_dynamic_size_slice_of_3d(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<2x9x3xf32>, %o: index, %n: index) -> tensor<2x?x3xf32> {
      %0 = tensor.extract_slice %x[0, %o, 0] [2, %n, 3] [1, 1, 1] : tensor<2x9x3xf32> to tensor<2x?x3xf32>
      return %0 : tensor<2x?x3xf32>
    }"""
    x = _floats(2, 9, 3)
    np.testing.assert_array_equal(run(src, "f", x, 2, 5), x[:, 2:7, :])
    assert np.asarray(run(src, "f", x, 9, 0)).shape == (2, 0, 3)


def test_slices_fuse_into_elementwise_math(run: Runner) -> None:
    """A difference of neighbours: two shifted windows of one input, one dispatch."""
    src = """
    func.func @f(%x: tensor<33xf32>) -> tensor<32xf32> {
      %a = tensor.extract_slice %x[1] [32] [1] : tensor<33xf32> to tensor<32xf32>
      %b = tensor.extract_slice %x[0] [32] [1] : tensor<33xf32> to tensor<32xf32>
      %d = arith.subf %a, %b : tensor<32xf32>
      %e = math.absf %d : tensor<32xf32>
      return %e : tensor<32xf32>
    }"""
    assert _dispatches(src) == 1
    x = _floats(33)
    np.testing.assert_allclose(run(src, "f", x), np.abs(x[1:] - x[:-1]), rtol=1e-6)


def test_slice_of_elementwise_with_dynamic_offset_is_one_dispatch(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<4x16xi32>, %y: tensor<4x16xi32>, %o: index) -> tensor<4x8xi32> {
      %s = arith.muli %x, %y : tensor<4x16xi32>
      %0 = tensor.extract_slice %s[0, %o] [4, 8] [1, 1] : tensor<4x16xi32> to tensor<4x8xi32>
      %1 = arith.addi %0, %0 : tensor<4x8xi32>
      return %1 : tensor<4x8xi32>
    }"""
    assert _dispatches(src) == 1
    x, y = _ints(4, 16), _ints(4, 16)
    np.testing.assert_array_equal(run(src, "f", x, y, 5), 2 * (x * y)[:, 5:13])


def test_slices_of_a_matmul_feed_another_matmul(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<6x5xf32>, %b: tensor<5x6xf32>) -> tensor<3x2xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<6x6xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<6x6xf32>) -> tensor<6x6xf32>
      %m = linalg.matmul ins(%a, %b : tensor<6x5xf32>, tensor<5x6xf32>) outs(%acc : tensor<6x6xf32>) -> tensor<6x6xf32>
      %l = tensor.extract_slice %m[0, 0] [3, 4] [2, 1] : tensor<6x6xf32> to tensor<3x4xf32>
      %r = tensor.extract_slice %b[1, 2] [4, 2] [1, 2] : tensor<5x6xf32> to tensor<4x2xf32>
      %e2 = tensor.empty() : tensor<3x2xf32>
      %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x2xf32>) -> tensor<3x2xf32>
      %0 = linalg.matmul ins(%l, %r : tensor<3x4xf32>, tensor<4x2xf32>) outs(%acc2 : tensor<3x2xf32>) -> tensor<3x2xf32>
      return %0 : tensor<3x2xf32>
    }"""
    a, b = _floats(6, 5), _floats(5, 6)
    m = a @ b
    np.testing.assert_allclose(run(src, "f", a, b), m[0:6:2, 0:4] @ b[1:5, 2:6:2],
                               rtol=1e-5, atol=1e-5)


def test_insert_slice_into_an_argument(run: Runner) -> None:
    src = """
    func.func @f(%d: tensor<5x6xi32>, %s: tensor<2x3xi32>) -> tensor<5x6xi32> {
      %0 = tensor.insert_slice %s into %d[3, 2] [2, 3] [1, 1] : tensor<2x3xi32> into tensor<5x6xi32>
      return %0 : tensor<5x6xi32>
    }"""
    d, s = _ints(5, 6), _ints(2, 3)
    before = d.copy()
    expected = d.copy()
    expected[3:5, 2:5] = s
    np.testing.assert_array_equal(run(src, "f", d, s), expected)
    np.testing.assert_array_equal(d, before)  # the argument itself is unchanged


def test_strided_insert_into_a_fill(run: Runner) -> None:
    src = """
    func.func @f(%s: tensor<4xf32>) -> tensor<9xf32> {
      %c = arith.constant -1.5 : f32
      %e = tensor.empty() : tensor<9xf32>
      %f = linalg.fill ins(%c : f32) outs(%e : tensor<9xf32>) -> tensor<9xf32>
      %0 = tensor.insert_slice %s into %f[1] [4] [2] : tensor<4xf32> into tensor<9xf32>
      return %0 : tensor<9xf32>
    }"""
    s = _floats(4)
    expected = np.full(9, -1.5, np.float32)
    expected[1:9:2] = s
    np.testing.assert_array_equal(run(src, "f", s), expected)


def test_insert_at_dynamic_offsets(run: Runner) -> None:
    src = """
    func.func @f(%d: tensor<6x7xf32>, %s: tensor<2x2xf32>, %i: index, %j: index) -> tensor<6x7xf32> {
      %0 = tensor.insert_slice %s into %d[%i, %j] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<6x7xf32>
      %1 = arith.mulf %0, %0 : tensor<6x7xf32>
      return %1 : tensor<6x7xf32>
    }"""
    d, s = _floats(6, 7), _floats(2, 2)
    for i, j in ((0, 0), (4, 5), (2, 3)):
        expected = d.copy()
        expected[i:i + 2, j:j + 2] = s
        np.testing.assert_allclose(run(src, "f", d, s, i, j), expected * expected, rtol=1e-6)


def test_rank_reducing_insert_writes_a_row(run: Runner) -> None:
    src = """
    func.func @f(%d: tensor<4x5xi32>, %row: tensor<5xi32>) -> tensor<4x5xi32> {
      %0 = tensor.insert_slice %row into %d[2, 0] [1, 5] [1, 1] : tensor<5xi32> into tensor<4x5xi32>
      return %0 : tensor<4x5xi32>
    }"""
    d, row = _ints(4, 5), _ints(5)
    expected = d.copy()
    expected[2] = row
    np.testing.assert_array_equal(run(src, "f", d, row), expected)


def test_inserts_into_empty_that_cover_it(run: Runner) -> None:
    """An empty destination whose every element is written: the two halves swapped."""
    src = """
    func.func @f(%x: tensor<8xi32>) -> tensor<8xi32> {
      %lo = tensor.extract_slice %x[0] [4] [1] : tensor<8xi32> to tensor<4xi32>
      %hi = tensor.extract_slice %x[4] [4] [1] : tensor<8xi32> to tensor<4xi32>
      %e = tensor.empty() : tensor<8xi32>
      %0 = tensor.insert_slice %hi into %e[0] [4] [1] : tensor<4xi32> into tensor<8xi32>
      %1 = tensor.insert_slice %lo into %0[4] [4] [1] : tensor<4xi32> into tensor<8xi32>
      return %1 : tensor<8xi32>
    }"""
    x = _ints(8)
    np.testing.assert_array_equal(run(src, "f", x), np.concatenate([x[4:], x[:4]]))


def test_out_of_bounds_dynamic_slice_is_refused(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<10xf32>, %o: index) -> tensor<4xf32> {
      %0 = tensor.extract_slice %x[%o] [4] [1] : tensor<10xf32> to tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    x = _floats(10)
    np.testing.assert_array_equal(run(src, "f", x, 6), x[6:])
    with pytest.raises(RuntimeFault, match="past the dimension's size 10"):
        run(src, "f", x, 7)


def test_out_of_bounds_dynamic_insert_is_refused(run: Runner) -> None:
    src = """
    func.func @f(%d: tensor<3x3xi32>, %s: tensor<2x2xi32>, %o: index) -> tensor<3x3xi32> {
      %0 = tensor.insert_slice %s into %d[1, %o] [2, 2] [1, 1] : tensor<2x2xi32> into tensor<3x3xi32>
      return %0 : tensor<3x3xi32>
    }"""
    with pytest.raises(RuntimeFault, match="past the dimension's size 3"):
        run(src, "f", _ints(3, 3), _ints(2, 2), 2)


def test_loop_reads_rows_at_its_induction_variable(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<5x4xf32>) -> tensor<4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c5 = arith.constant 5 : index
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4xf32>
      %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %init) -> (tensor<4xf32>) {
        %row = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] : tensor<5x4xf32> to tensor<4xf32>
        %s = arith.addf %acc, %row : tensor<4xf32>
        scf.yield %s : tensor<4xf32>
      }
      return %r : tensor<4xf32>
    }"""
    x = _floats(5, 4)
    np.testing.assert_allclose(run(src, "f", x), x.sum(axis=0), rtol=1e-5, atol=1e-6)


def test_loop_writes_rows_at_its_induction_variable(run: Runner) -> None:
    """Row i of the result is row i of the input times i, inserted one row per iteration."""
    src = """
    func.func @f(%x: tensor<3x4xi32>) -> tensor<3x4xi32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %zero = arith.constant 0 : i32
      %e = tensor.empty() : tensor<3x4xi32>
      %init = linalg.fill ins(%zero : i32) outs(%e : tensor<3x4xi32>) -> tensor<3x4xi32>
      %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %init) -> (tensor<3x4xi32>) {
        %row = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] : tensor<3x4xi32> to tensor<1x4xi32>
        %k = arith.index_cast %i : index to i32
        %ke = tensor.empty() : tensor<1x4xi32>
        %kt = linalg.fill ins(%k : i32) outs(%ke : tensor<1x4xi32>) -> tensor<1x4xi32>
        %scaled = arith.muli %row, %kt : tensor<1x4xi32>
        %next = tensor.insert_slice %scaled into %acc[%i, 0] [1, 4] [1, 1] : tensor<1x4xi32> into tensor<3x4xi32>
        scf.yield %next : tensor<3x4xi32>
      }
      return %r : tensor<3x4xi32>
    }"""
    x = _ints(3, 4)
    np.testing.assert_array_equal(run(src, "f", x), x * np.arange(3, dtype=np.int32)[:, None])

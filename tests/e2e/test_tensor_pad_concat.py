"""tensor.pad and tensor.concat (both made of fills and inserts in the flow phase) compiled and
run on every host target (the `run` fixture), against numpy.pad / numpy.concatenate: static and
dynamic padding, pads feeding a convolution and a matmul, concats of several inputs."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir
from weir.errors import CompileError

Runner = Callable[..., object]  # the `run` fixture (conftest.py)
RNG = np.random.default_rng(29)


def _floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _ints(*shape: int) -> np.ndarray:
    return RNG.integers(-50, 50, shape).astype(np.int32)


@pytest.mark.parametrize("dtype, value, text", [
    ("f32", 0.0, "0.0"), ("i32", -7, "-7"), ("i8", 3, "3"), ("f64", 2.5, "2.5")])
def test_static_pad(run: Runner, dtype: str, value: float, text: str) -> None:
    src = f"""
    func.func @f(%x: tensor<3x4x{dtype}>) -> tensor<6x5x{dtype}> {{
      %c = arith.constant {text} : {dtype}
      %0 = tensor.pad %x low[1, 0] high[2, 1] {{
      ^bb0(%i: index, %j: index):
        tensor.yield %c : {dtype}
      }} : tensor<3x4x{dtype}> to tensor<6x5x{dtype}>
      return %0 : tensor<6x5x{dtype}>
    }}"""
    x = (RNG.standard_normal((3, 4)) * 20).astype({"f32": np.float32, "i32": np.int32,
                                                   "i8": np.int8, "f64": np.float64}[dtype])
    expected = np.pad(x, ((1, 2), (0, 1)), constant_values=value)
    result = run(src, "f", x)
    assert isinstance(result, np.ndarray) and result.dtype == x.dtype
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("shape, low, high", [
    ((256, 1024), (3, 0), (2, 0)), ((1, 56, 56, 64), (0, 2, 1, 0), (0, 1, 3, 0))],
    ids=["rows", "nhwc"])
def test_pad_split_along_the_padded_dimension(run: Runner, shape: tuple[int, ...],
                                              low: tuple[int, ...], high: tuple[int, ...]) -> None:
    """Large enough that llvm-cpu splits the pad into workgroups along its outermost padded
    dimension: each fills its rows and copies the source rows that land in them, some rows
    all padding, some copied, the boundaries anywhere."""
    out = tuple(d + lo + hi for d, lo, hi in zip(shape, low, high))
    t_in, t_out = ("tensor<" + "x".join(map(str, s)) + "xf32>" for s in (shape, out))
    args = ", ".join(f"%i{k}: index" for k in range(len(shape)))
    src = f"""
    func.func @f(%x: {t_in}) -> {t_out} {{
      %c = arith.constant -1.5 : f32
      %0 = tensor.pad %x low{list(low)} high{list(high)} {{
      ^bb0({args}):
        tensor.yield %c : f32
      }} : {t_in} to {t_out}
      return %0 : {t_out}
    }}"""
    x = _floats(*shape)
    expected = np.pad(x, list(zip(low, high)), constant_values=-1.5)
    np.testing.assert_array_equal(run(src, "f", x), expected)


def test_pad_value_defined_in_the_body(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<5xf32>) -> tensor<8xf32> {
      %0 = tensor.pad %x low[2] high[1] {
      ^bb0(%i: index):
        %c = arith.constant 0xFF800000 : f32
        tensor.yield %c : f32
      } : tensor<5xf32> to tensor<8xf32>
      return %0 : tensor<8xf32>
    }"""
    x = _floats(5)
    np.testing.assert_array_equal(run(src, "f", x), np.pad(x, (2, 1), constant_values=-np.inf))


def test_dynamic_low_and_high(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<2x3xi32>, %lo: index, %hi: index) -> tensor<?x3xi32> {
      %c = arith.constant 9 : i32
      %0 = tensor.pad %x low[%lo, 0] high[%hi, 0] {
      ^bb0(%i: index, %j: index):
        tensor.yield %c : i32
      } : tensor<2x3xi32> to tensor<?x3xi32>
      return %0 : tensor<?x3xi32>
    }"""
    x = _ints(2, 3)
    for lo, hi in ((0, 0), (3, 1), (0, 4)):
        np.testing.assert_array_equal(run(src, "f", x, lo, hi),
                                      np.pad(x, ((lo, hi), (0, 0)), constant_values=9))


def test_pad_of_a_dynamic_shape_then_elementwise(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
      %c = arith.constant 1.0 : f32
      %0 = tensor.pad %x low[1, 2] high[1, 0] {
      ^bb0(%i: index, %j: index):
        tensor.yield %c : f32
      } : tensor<?x?xf32> to tensor<?x?xf32>
      %1 = math.exp %0 : tensor<?x?xf32>
      return %1 : tensor<?x?xf32>
    }"""
    for shape in ((3, 4), (1, 7)):
        x = _floats(*shape)
        np.testing.assert_allclose(run(src, "f", x),
                                   np.exp(np.pad(x, ((1, 1), (2, 0)), constant_values=1.0)),
                                   rtol=1e-6)


def test_pad_feeding_a_convolution(run: Runner) -> None:
    """A 'same' 3x3 convolution: the input padded by one on each side of H and W."""
    src = """
    func.func @f(%x: tensor<1x6x5x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x6x5x4xf32> {
      %zero = arith.constant 0.0 : f32
      %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
      ^bb0(%n: index, %h: index, %ww: index, %c: index):
        tensor.yield %zero : f32
      } : tensor<1x6x5x3xf32> to tensor<1x8x7x3xf32>
      %e = tensor.empty() : tensor<1x6x5x4xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x5x4xf32>) -> tensor<1x6x5x4xf32>
      %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x8x7x3xf32>, tensor<3x3x3x4xf32>) outs(%acc : tensor<1x6x5x4xf32>) -> tensor<1x6x5x4xf32>
      return %0 : tensor<1x6x5x4xf32>
    }"""
    x, w = _floats(1, 6, 5, 3), _floats(3, 3, 3, 4)
    p = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    expected = np.zeros((1, 6, 5, 4), np.float32)
    for i in range(3):
        for j in range(3):
            expected += np.einsum("nhwc,cf->nhwf", p[:, i:i + 6, j:j + 5, :], w[i, j])
    np.testing.assert_allclose(run(src, "f", x, w), expected, rtol=1e-4, atol=1e-5)


def test_pad_feeding_a_matmul(run: Runner) -> None:
    """K padded from 5 to 8 with zeros on both operands leaves the product unchanged; M padded
    with ones adds a row of column sums."""
    src = """
    func.func @f(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>) -> tensor<4x4xf32> {
      %zero = arith.constant 0.0 : f32
      %one = arith.constant 1.0 : f32
      %a0 = tensor.pad %a low[0, 0] high[0, 3] {
      ^bb0(%i: index, %j: index):
        tensor.yield %zero : f32
      } : tensor<3x5xf32> to tensor<3x8xf32>
      %a1 = tensor.pad %a0 low[0, 0] high[1, 0] {
      ^bb0(%i: index, %j: index):
        tensor.yield %one : f32
      } : tensor<3x8xf32> to tensor<4x8xf32>
      %bp = tensor.pad %b low[2, 0] high[1, 0] {
      ^bb0(%i: index, %j: index):
        tensor.yield %zero : f32
      } : tensor<5x4xf32> to tensor<8x4xf32>
      %e = tensor.empty() : tensor<4x4xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
      %0 = linalg.matmul ins(%a1, %bp : tensor<4x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
      return %0 : tensor<4x4xf32>
    }"""
    a, b = _floats(3, 5), _floats(5, 4)
    a1 = np.pad(np.pad(a, ((0, 0), (0, 3))), ((0, 1), (0, 0)), constant_values=1.0)
    bp = np.pad(b, ((2, 1), (0, 0)))
    np.testing.assert_allclose(run(src, "f", a, b), a1 @ bp, rtol=1e-5, atol=1e-5)


def test_concat_of_three_along_a_middle_dim(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x1x4xf32>, %c: tensor<2x5x4xf32>) -> tensor<2x9x4xf32> {
      %0 = tensor.concat dim(1) %a, %b, %c : (tensor<2x3x4xf32>, tensor<2x1x4xf32>, tensor<2x5x4xf32>) -> tensor<2x9x4xf32>
      return %0 : tensor<2x9x4xf32>
    }"""
    a, b, c = _floats(2, 3, 4), _floats(2, 1, 4), _floats(2, 5, 4)
    assert weir.compile_to_phase(src, "concat.mlir", weir.CompilerOptions(), "flow").count(
        '"flow.dispatch"(') == 1
    np.testing.assert_array_equal(run(src, "f", a, b, c), np.concatenate([a, b, c], axis=1))


@pytest.mark.parametrize("dim, sizes", [(3, (64, 32, 40)), (1, (20, 3, 33)), (0, (2, 3, 1))],
                         ids=["channels", "rows", "images"])
def test_concat_split_along_the_outermost_dimension(run: Runner, dim: int,
                                                    sizes: tuple[int, int, int]) -> None:
    """Large enough that llvm-cpu splits the concat's chain of inserts into workgroups along
    the outermost dimension larger than one: each copies the part of every piece that lands
    in its range; the concat's own dimension too (rows, images), where a range holds parts
    of several pieces or of none."""
    base = [1, 31, 29, 16] if dim != 0 else [2, 31, 29, 16]
    shapes = [tuple(s if d == dim else base[d] for d in range(4)) for s in sizes]
    out = tuple(sum(sizes) if d == dim else base[d] for d in range(4))
    types = ["tensor<" + "x".join(map(str, s)) + "xf32>" for s in shapes]
    t_out = "tensor<" + "x".join(map(str, out)) + "xf32>"
    src = f"""
    func.func @f(%a: {types[0]}, %b: {types[1]}, %c: {types[2]}) -> {t_out} {{
      %0 = tensor.concat dim({dim}) %a, %b, %c : ({", ".join(types)}) -> {t_out}
      return %0 : {t_out}
    }}"""
    pieces = [_floats(*s) for s in shapes]
    np.testing.assert_array_equal(np.asarray(run(src, "f", *pieces)),
                                  np.concatenate(pieces, axis=dim))


def test_concat_of_dynamic_shapes(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<?x3xi32>, %b: tensor<?x3xi32>) -> tensor<?x3xi32> {
      %0 = tensor.concat dim(0) %a, %b, %a : (tensor<?x3xi32>, tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
      return %0 : tensor<?x3xi32>
    }"""
    for m, n in ((2, 4), (0, 1)):
        a, b = _ints(m, 3), _ints(n, 3)
        np.testing.assert_array_equal(run(src, "f", a, b), np.concatenate([a, b, a]))


def test_concat_of_computed_pieces_then_math(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) -> tensor<4x5xf32> {
      %x = math.absf %a : tensor<4x2xf32>
      %y = arith.mulf %b, %b : tensor<4x3xf32>
      %0 = tensor.concat dim(1) %x, %y : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
      %1 = arith.addf %0, %0 : tensor<4x5xf32>
      return %1 : tensor<4x5xf32>
    }"""
    a, b = _floats(4, 2), _floats(4, 3)
    np.testing.assert_allclose(run(src, "f", a, b),
                               2 * np.concatenate([np.abs(a), b * b], axis=1), rtol=1e-6)


def test_pad_computed_from_indices_is_a_compile_error() -> None:
    src = """func.func @f(%x: tensor<4xf32>) -> tensor<6xf32> {
  %0 = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    %v = arith.index_cast %i : index to i32
    %f = arith.sitofp %v : i32 to f32
    tensor.yield %f : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %0 : tensor<6xf32>
}"""
    with pytest.raises(CompileError, match=r"pad\.mlir:2:3: error: tensor\.pad whose body "
                                           r"computes its padding value is not supported"):
        weir.compile_string(src, "pad.mlir")

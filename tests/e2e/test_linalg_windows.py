"""Convolution and pooling layouts beyond NHWC/HWCF and NCHW max pooling, compiled and run on
every host target (the `run` fixture), against numpy references over sliding windows:
conv_2d_nchw_fchw, conv_2d_nhwc_fhwc, depthwise_conv_2d_nhwc_hwc/nchw_chw, pooling_nhwc_max/sum
and pooling_nchw_sum, with strides and dilations. Floats to 1e-5 relative, integers exactly."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
Pair = tuple[int, int]
RNG = np.random.default_rng(23)
DTYPES = {"f32": "float32", "f64": "float64", "i32": "int32", "i8": "int8"}


def windows(x: np.ndarray, window: Pair, strides: Pair, dilations: Pair,
            axes: Pair) -> np.ndarray:
    """x with two trailing axes (kh, kw) added: every element each output position reads."""
    span = tuple(d * (k - 1) + 1 for k, d in zip(window, dilations))
    views = sliding_window_view(x, span, axis=axes)
    index = [slice(None)] * x.ndim + [slice(None, None, dilations[0]),
                                      slice(None, None, dilations[1])]
    index[axes[0]], index[axes[1]] = slice(None, None, strides[0]), slice(None, None, strides[1])
    return views[tuple(index)]


def out_size(size: int, k: int, stride: int, dilation: int) -> int:
    return (size - dilation * (k - 1) - 1) // stride + 1


def tensor(shape: tuple[int, ...], ty: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{ty}>"


def random(shape: tuple[int, ...], ty: str) -> np.ndarray:
    if ty.startswith("f"):
        return RNG.standard_normal(shape).astype(DTYPES[ty])
    return RNG.integers(-20, 20, shape).astype(DTYPES[ty])


def window_program(op: str, x: tuple[int, ...], w: tuple[int, ...], out: tuple[int, ...],
                   in_ty: str, out_ty: str, strides: Pair, dilations: Pair,
                   window_is_operand: bool = True) -> str:
    """@f(%x[, %w], %init): `op` over x and the filter (or a tensor.empty window) into init."""
    attrs = (f"{{dilations = dense<[{dilations[0]}, {dilations[1]}]> : tensor<2xi64>, "
             f"strides = dense<[{strides[0]}, {strides[1]}]> : tensor<2xi64>}}")
    w_arg = f"%w: {tensor(w, in_ty)}, " if window_is_operand else ""
    w_def = "" if window_is_operand else f"%w = tensor.empty() : {tensor(w, in_ty)}\n      "
    return f"""
    func.func @f(%x: {tensor(x, in_ty)}, {w_arg}%init: {tensor(out, out_ty)}) -> {tensor(out, out_ty)} {{
      {w_def}%0 = linalg.{op} {attrs} ins(%x, %w : {tensor(x, in_ty)}, {tensor(w, in_ty)}) outs(%init : {tensor(out, out_ty)}) -> {tensor(out, out_ty)}
      return %0 : {tensor(out, out_ty)}
    }}"""


def check(got: object, expected: np.ndarray, ty: str) -> None:
    got = np.asarray(got)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if ty.startswith("i"):
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


CASES = [  # n, (h, w), c, (kh, kw), f, strides, dilations, type
    (1, (7, 8), 3, (3, 3), 4, (1, 1), (1, 1), "f32"),
    (2, (9, 11), 3, (3, 2), 5, (2, 1), (1, 2), "f32"),
    (2, (10, 9), 2, (2, 3), 3, (1, 2), (2, 1), "i32"),
    (1, (6, 7), 4, (1, 1), 2, (3, 2), (1, 1), "f64"),
]
IDS = ["unit", "stride-dilation", "i32-mixed", "1x1-f64"]


@pytest.mark.parametrize("n, hw, c, khw, f, strides, dilations, ty", CASES, ids=IDS)
def test_conv_nchw_fchw(run: Runner, n: int, hw: Pair, c: int, khw: Pair, f: int,
                        strides: Pair, dilations: Pair, ty: str) -> None:
    oh, ow = (out_size(s, k, st, d) for s, k, st, d in zip(hw, khw, strides, dilations))
    xs, ws, os = (n, c, *hw), (f, c, *khw), (n, f, oh, ow)
    x, w, init = random(xs, ty), random(ws, ty), random(os, ty)
    src = window_program("conv_2d_nchw_fchw", xs, ws, os, ty, ty, strides, dilations)
    patches = windows(x, khw, strides, dilations, (2, 3))  # n, c, oh, ow, kh, kw
    expected = init + np.einsum("nchwij,fcij->nfhw", patches, w).astype(init.dtype)
    check(run(src, "f", x, w, init), expected, ty)


@pytest.mark.parametrize("n, hw, c, khw, f, strides, dilations, ty", CASES, ids=IDS)
def test_conv_nhwc_fhwc(run: Runner, n: int, hw: Pair, c: int, khw: Pair, f: int,
                        strides: Pair, dilations: Pair, ty: str) -> None:
    oh, ow = (out_size(s, k, st, d) for s, k, st, d in zip(hw, khw, strides, dilations))
    xs, ws, os = (n, *hw, c), (f, *khw, c), (n, oh, ow, f)
    x, w, init = random(xs, ty), random(ws, ty), random(os, ty)
    src = window_program("conv_2d_nhwc_fhwc", xs, ws, os, ty, ty, strides, dilations)
    patches = windows(x, khw, strides, dilations, (1, 2))  # n, oh, ow, c, kh, kw
    expected = init + np.einsum("nhwcij,fijc->nhwf", patches, w).astype(init.dtype)
    check(run(src, "f", x, w, init), expected, ty)


@pytest.mark.parametrize("n, hw, c, khw, strides, dilations, in_ty, out_ty", [
    (1, (7, 8), 3, (3, 3), (1, 1), (1, 1), "f32", "f32"),
    (2, (11, 9), 5, (3, 2), (2, 2), (1, 2), "f32", "f32"),
    (2, (9, 9), 4, (2, 2), (1, 3), (2, 1), "i32", "i32"),
    (1, (8, 8), 6, (3, 3), (2, 1), (1, 1), "i8", "i32"),
], ids=["unit", "stride-dilation", "i32", "i8-into-i32"])
def test_depthwise_conv_nhwc_hwc(run: Runner, n: int, hw: Pair, c: int, khw: Pair,
                                 strides: Pair, dilations: Pair, in_ty: str, out_ty: str) -> None:
    oh, ow = (out_size(s, k, st, d) for s, k, st, d in zip(hw, khw, strides, dilations))
    xs, ws, os = (n, *hw, c), (*khw, c), (n, oh, ow, c)
    x, w, init = random(xs, in_ty), random(ws, in_ty), random(os, out_ty)
    src = window_program("depthwise_conv_2d_nhwc_hwc", xs, ws, os, in_ty, out_ty, strides,
                         dilations)
    patches = windows(x, khw, strides, dilations, (1, 2)).astype(init.dtype)
    expected = init + np.einsum("nhwcij,ijc->nhwc", patches, w.astype(init.dtype))
    check(run(src, "f", x, w, init), expected, out_ty)


@pytest.mark.parametrize("n, hw, c, khw, strides, dilations, ty", [
    (1, (7, 8), 3, (3, 3), (1, 1), (1, 1), "f32"),
    (2, (11, 9), 5, (3, 2), (2, 2), (1, 2), "f32"),
], ids=["unit", "stride-dilation"])
def test_depthwise_conv_nchw_chw(run: Runner, n: int, hw: Pair, c: int, khw: Pair,
                                 strides: Pair, dilations: Pair, ty: str) -> None:
    """The channels-first form torch-mlir writes for a grouped convolution with one group per
    channel (MobileNet's depthwise layers)."""
    oh, ow = (out_size(s, k, st, d) for s, k, st, d in zip(hw, khw, strides, dilations))
    xs, ws, os = (n, c, *hw), (c, *khw), (n, c, oh, ow)
    x, w, init = random(xs, ty), random(ws, ty), random(os, ty)
    src = window_program("depthwise_conv_2d_nchw_chw", xs, ws, os, ty, ty, strides, dilations)
    patches = windows(x, khw, strides, dilations, (2, 3))  # n, c, oh, ow, kh, kw
    expected = init + np.einsum("nchwij,cij->nchw", patches, w).astype(init.dtype)
    check(run(src, "f", x, w, init), expected, ty)


POOLS = [  # n, (h, w), c, window, strides, dilations, type
    (1, (8, 8), 3, (2, 2), (2, 2), (1, 1), "f32"),
    (2, (9, 10), 4, (3, 2), (1, 2), (2, 1), "f32"),
    (2, (7, 9), 2, (3, 3), (2, 1), (1, 2), "i32"),
]
POOL_IDS = ["2x2-stride2", "stride-dilation", "i32"]


@pytest.mark.parametrize("kind", ["max", "sum"])
@pytest.mark.parametrize("n, hw, c, khw, strides, dilations, ty", POOLS, ids=POOL_IDS)
def test_pooling_nhwc(run: Runner, kind: str, n: int, hw: Pair, c: int, khw: Pair,
                      strides: Pair, dilations: Pair, ty: str) -> None:
    oh, ow = (out_size(s, k, st, d) for s, k, st, d in zip(hw, khw, strides, dilations))
    xs, os = (n, *hw, c), (n, oh, ow, c)
    x, init = random(xs, ty), random(os, ty)
    src = window_program(f"pooling_nhwc_{kind}", xs, khw, os, ty, ty, strides, dilations,
                         window_is_operand=False)
    patches = windows(x, khw, strides, dilations, (1, 2))
    if kind == "max":
        expected = np.maximum(init, patches.max(axis=(4, 5)))
    else:
        expected = init + patches.sum(axis=(4, 5)).astype(init.dtype)
    check(run(src, "f", x, init), expected, ty)


@pytest.mark.parametrize("n, hw, c, khw, strides, dilations, ty", POOLS, ids=POOL_IDS)
def test_pooling_nchw_sum(run: Runner, n: int, hw: Pair, c: int, khw: Pair, strides: Pair,
                          dilations: Pair, ty: str) -> None:
    oh, ow = (out_size(s, k, st, d) for s, k, st, d in zip(hw, khw, strides, dilations))
    xs, os = (n, c, *hw), (n, c, oh, ow)
    x, init = random(xs, ty), random(os, ty)
    src = window_program("pooling_nchw_sum", xs, khw, os, ty, ty, strides, dilations,
                         window_is_operand=False)
    expected = init + windows(x, khw, strides, dilations, (2, 3)).sum(axis=(4, 5)).astype(init.dtype)
    check(run(src, "f", x, init), expected, ty)


def test_average_pool_as_sum_pool_then_divide(run: Runner) -> None:
    """A zero-filled NHWC sum pool followed by an elementwise divide: the usual average pool."""
    src = """
    func.func @avg(%x: tensor<1x6x6x8xf32>) -> tensor<1x3x3x8xf32> {
      %zero = arith.constant 0.0 : f32
      %four = arith.constant dense<4.0> : tensor<1x3x3x8xf32>
      %win = tensor.empty() : tensor<2x2xf32>
      %e = tensor.empty() : tensor<1x3x3x8xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
      %sum = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x6x6x8xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
      %avg = arith.divf %sum, %four : tensor<1x3x3x8xf32>
      return %avg : tensor<1x3x3x8xf32>
    }"""
    x = random((1, 6, 6, 8), "f32")
    expected = windows(x, (2, 2), (2, 2), (1, 1), (1, 2)).mean(axis=(4, 5))
    check(run(src, "avg", x), expected.astype(np.float32), "f32")

"""linalg.conv_2d_nhwc_hwcf and linalg.pooling_nchw_max compiled and run on every host target,
against numpy references written as einsum/max over sliding windows; then the layouts and pooling
kinds of the Conv2D/Pool2D kernel descriptions that no input op produces yet, run directly."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import weir.api as weir
from weir.errors import RuntimeFault
from weir.format.kernel_codec import encode_reference_executable
from weir.format.kernel_description import (
    Conv2D,
    EntryPoint,
    KernelOp,
    Load,
    Pool2D,
    ReferenceExecutable,
    Store,
)
from weir.runtime.executables.reference import load_reference_executable
from weir.runtime.hal.buffer import Allocator
from weir.runtime.hal.workgroups import InlineWorkgroups

RNG = np.random.default_rng(11)
Pair = tuple[int, int]


Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target


def taps(x: np.ndarray, window: Pair, strides: Pair, dilations: Pair, axes: Pair) -> np.ndarray:
    """x with two more trailing axes (kh, kw): every element each window position reads."""
    span = tuple(d * (k - 1) + 1 for k, d in zip(window, dilations))
    views = sliding_window_view(x, span, axis=axes)
    index = [slice(None)] * x.ndim + [slice(None, None, dilations[0]), slice(None, None, dilations[1])]
    index[axes[0]], index[axes[1]] = slice(None, None, strides[0]), slice(None, None, strides[1])
    return views[tuple(index)]


def conv_reference(x: np.ndarray, w: np.ndarray, init: np.ndarray, strides: Pair,
                   dilations: Pair) -> np.ndarray:
    """NHWC input, HWCF filter."""
    patches = taps(x, w.shape[:2], strides, dilations, (1, 2))  # n, oh, ow, c, kh, kw
    return init + np.einsum("nhwcij,ijcf->nhwf", patches, w)


def max_pool_reference(x: np.ndarray, window: Pair, init: np.ndarray, strides: Pair,
                       dilations: Pair) -> np.ndarray:
    """NCHW input and output."""
    return np.maximum(init, taps(x, window, strides, dilations, (2, 3)).max(axis=(4, 5)))


def out_size(size: int, k: int, stride: int, dilation: int) -> int:
    return (size - dilation * (k - 1) - 1) // stride + 1


def conv_program(x: tuple[int, ...], w: tuple[int, ...], out: tuple[int, ...], ty: str,
                 strides: Pair, dilations: Pair) -> str:
    """@conv(%x, %w): the convolution into a zero-filled init."""
    t = lambda shape: f"tensor<{'x'.join(map(str, shape))}x{ty}>"  # noqa: E731
    zero = "0.0" if ty.startswith("f") else "0"
    return f"""
    func.func @conv(%x: {t(x)}, %w: {t(w)}) -> {t(out)} {{
      %zero = arith.constant {zero} : {ty}
      %init = tensor.empty() : {t(out)}
      %acc = linalg.fill ins(%zero : {ty}) outs(%init : {t(out)}) -> {t(out)}
      %0 = linalg.conv_2d_nhwc_hwcf {{dilations = dense<[{dilations[0]}, {dilations[1]}]> : tensor<2xi64>, strides = dense<[{strides[0]}, {strides[1]}]> : tensor<2xi64>}} ins(%x, %w : {t(x)}, {t(w)}) outs(%acc : {t(out)}) -> {t(out)}
      return %0 : {t(out)}
    }}"""


def random(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype.startswith("f"):
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(-20, 20, shape).astype(dtype)


@pytest.mark.parametrize("n, hw, c, khw, f, strides, dilations, ty", [
    (1, (8, 8), 3, (3, 3), 4, (1, 1), (1, 1), "f32"),
    (2, (9, 11), 3, (3, 2), 5, (2, 2), (1, 1), "f32"),
    (3, (10, 9), 2, (3, 3), 4, (1, 1), (2, 2), "i32"),
    (2, (12, 13), 4, (2, 3), 3, (2, 1), (1, 2), "i32"),
    (1, (7, 8), 2, (1, 1), 3, (3, 3), (1, 1), "f64"),
], ids=["unit", "stride2-batch2", "dilation2-batch3-i32", "mixed-i32", "1x1-stride3-f64"])
def test_conv_matches_numpy(run: Runner, n: int, hw: Pair, c: int, khw: Pair, f: int, strides: Pair,
                            dilations: Pair, ty: str) -> None:
    oh, ow = (out_size(s, k, st, d) for s, k, st, d in zip(hw, khw, strides, dilations))
    xs, ws, os = (n, *hw, c), (*khw, c, f), (n, oh, ow, f)
    dtype = {"f32": "float32", "f64": "float64", "i32": "int32"}[ty]
    x, w = random(xs, dtype), random(ws, dtype)
    got = np.asarray(run(conv_program(xs, ws, os, ty, strides, dilations), "conv", x, w))
    expected = conv_reference(x, w, np.zeros(os, dtype), strides, dilations)
    assert got.dtype == np.dtype(dtype) and got.shape == os
    if ty == "i32":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_conv_with_fill_is_one_dispatch_and_defaults_to_unit_strides(run: Runner) -> None:
    src = """
    func.func @conv(%x: tensor<1x56x56x64xf32>, %w: tensor<3x3x64x64xf32>) -> tensor<1x54x54x64xf32> {
      %zero = arith.constant 0.0 : f32
      %init = tensor.empty() : tensor<1x54x54x64xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x54x54x64xf32>) -> tensor<1x54x54x64xf32>
      %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x56x56x64xf32>, tensor<3x3x64x64xf32>) outs(%acc : tensor<1x54x54x64xf32>) -> tensor<1x54x54x64xf32>
      return %0 : tensor<1x54x54x64xf32>
    }"""
    flow = weir.compile_to_phase(src, "conv.mlir", weir.CompilerOptions(), "flow")
    assert flow.count('"flow.dispatch"(') == 1
    x, w = random((1, 56, 56, 64), "float32"), random((3, 3, 64, 64), "float32")
    expected = conv_reference(x, w, np.zeros((1, 54, 54, 64), np.float32), (1, 1), (1, 1))
    np.testing.assert_allclose(np.asarray(run(src, "conv", x, w)), expected, rtol=1e-4, atol=1e-4)


def test_conv_accumulates_into_its_init(run: Runner) -> None:
    src = """
    func.func @conv(%x: tensor<2x6x6x3xi32>, %w: tensor<3x3x3x2xi32>, %o: tensor<2x2x2x2xi32>) -> tensor<2x2x2x2xi32> {
      %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x6x6x3xi32>, tensor<3x3x3x2xi32>) outs(%o : tensor<2x2x2x2xi32>) -> tensor<2x2x2x2xi32>
      return %0 : tensor<2x2x2x2xi32>
    }"""
    x, w, init = random((2, 6, 6, 3), "int32"), random((3, 3, 3, 2), "int32"), random((2, 2, 2, 2), "int32")
    np.testing.assert_array_equal(np.asarray(run(src, "conv", x, w, init)),
                                  conv_reference(x, w, init, (2, 2), (1, 1)))


def test_conv_f16_accumulates_in_f32(run: Runner) -> None:
    src = """
    func.func @conv(%x: tensor<1x6x6x8xf16>, %w: tensor<3x3x8x2xf16>, %o: tensor<1x4x4x2xf16>) -> tensor<1x4x4x2xf16> {
      %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x6x6x8xf16>, tensor<3x3x8x2xf16>) outs(%o : tensor<1x4x4x2xf16>) -> tensor<1x4x4x2xf16>
      return %0 : tensor<1x4x4x2xf16>
    }"""
    x, w = random((1, 6, 6, 8), "float16"), random((3, 3, 8, 2), "float16")
    init = np.zeros((1, 4, 4, 2), np.float16)
    got = np.asarray(run(src, "conv", x, w, init))
    expected = conv_reference(x.astype(np.float32), w.astype(np.float32), init.astype(np.float32),
                              (1, 1), (1, 1))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), expected, rtol=2e-3, atol=2e-3)


def test_conv_i8_sign_extends_into_an_i32_init(run: Runner) -> None:
    src = """
    func.func @conv(%x: tensor<1x6x6x8xi8>, %w: tensor<3x3x8x2xi8>, %o: tensor<1x4x4x2xi32>) -> tensor<1x4x4x2xi32> {
      %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x6x6x8xi8>, tensor<3x3x8x2xi8>) outs(%o : tensor<1x4x4x2xi32>) -> tensor<1x4x4x2xi32>
      return %0 : tensor<1x4x4x2xi32>
    }"""
    x, w = np.full((1, 6, 6, 8), -100, np.int8), np.full((3, 3, 8, 2), 100, np.int8)
    got = np.asarray(run(src, "conv", x, w, np.zeros((1, 4, 4, 2), np.int32)))
    np.testing.assert_array_equal(got, np.full((1, 4, 4, 2), -100 * 100 * 72, np.int32))


@pytest.mark.parametrize("ty, dtype, lowest, lowest_value", [
    ("f32", "float32", "0xFF800000", -np.inf),
    ("i32", "int32", "-2147483648", np.iinfo(np.int32).min),
])
def test_max_pool_matches_numpy(run: Runner, ty: str, dtype: str, lowest: str, lowest_value: float) -> None:
    src = f"""
    func.func @pool(%x: tensor<2x3x11x10x{ty}>) -> tensor<2x3x4x3x{ty}> {{
      %lowest = arith.constant {lowest} : {ty}
      %init = tensor.empty() : tensor<2x3x4x3x{ty}>
      %acc = linalg.fill ins(%lowest : {ty}) outs(%init : tensor<2x3x4x3x{ty}>) -> tensor<2x3x4x3x{ty}>
      %win = tensor.empty() : tensor<3x2x{ty}>
      %0 = linalg.pooling_nchw_max {{dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>}} ins(%x, %win : tensor<2x3x11x10x{ty}>, tensor<3x2x{ty}>) outs(%acc : tensor<2x3x4x3x{ty}>) -> tensor<2x3x4x3x{ty}>
      return %0 : tensor<2x3x4x3x{ty}>
    }}"""
    x = random((2, 3, 11, 10), dtype)
    init = np.full((2, 3, 4, 3), lowest_value, dtype)
    np.testing.assert_array_equal(np.asarray(run(src, "pool", x)),
                                  max_pool_reference(x, (3, 2), init, (2, 3), (2, 1)))


# --- kernel descriptions no input op produces yet ----------------------------------------------


ELEMENT_TYPES = {"float32": "f32", "int32": "i32"}


def run_kernel(op: KernelOp, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> np.ndarray:
    """Runs [loads..., op, store] with the last input as the init; the result has its dtype."""
    dtype = inputs[-1].dtype
    ops = [Load(i, ELEMENT_TYPES[a.dtype.name], a.shape) for i, a in enumerate(inputs)] + [op, Store(len(inputs), len(inputs))]
    exe = load_reference_executable(memoryview(encode_reference_executable(
        ReferenceExecutable((EntryPoint("k", len(inputs) + 1, 0, tuple(ops)),)))))
    alloc = Allocator()
    bindings = []
    for a in inputs:
        b = alloc.allocate(a.nbytes)
        b.data.view(a.dtype)[...] = a.ravel()
        bindings.append(b)
    bindings.append(alloc.allocate(int(np.prod(out_shape)) * dtype.itemsize))
    exe.dispatch(0, (1, 1, 1), (), bindings, InlineWorkgroups())
    return bindings[-1].data.view(dtype).reshape(out_shape).copy()


def test_conv2d_kernel_in_nchw_fchw_layouts() -> None:
    x, w = random((2, 3, 9, 8), "float32"), random((4, 3, 3, 2), "float32")  # NCHW, FCHW
    init = random((2, 4, 4, 7), "float32")  # NFHW
    op = Conv2D(0, 1, 2, (2, 1), (1, 1), "NCHW", "FCHW")
    expected = conv_reference(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0),
                              init.transpose(0, 2, 3, 1), (2, 1), (1, 1)).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(run_kernel(op, [x, w, init], init.shape), expected, rtol=1e-5, atol=1e-5)


def test_pool2d_kernel_sum_in_nhwc() -> None:
    x, init = random((2, 9, 9, 3), "int32"), random((2, 3, 4, 3), "int32")
    op = Pool2D(0, 1, "sum", "NHWC", (3, 2), (3, 2), (1, 1))
    window_sums = taps(x, (3, 2), (3, 2), (1, 1), (1, 2)).sum(axis=(4, 5))
    np.testing.assert_array_equal(run_kernel(op, [x, init], init.shape), init + window_sums)


def test_conv2d_kernel_with_a_mismatched_init_is_a_runtime_fault() -> None:
    # 6 rows hold at most 4 positions of a 3-row window: 5 reads past the input (fewer, 3, is
    # a valid output that leaves the last rows unread).
    x, w, init = random((1, 6, 6, 2), "float32"), random((3, 3, 2, 2), "float32"), random((1, 4, 5, 2), "float32")
    with pytest.raises(RuntimeFault, match=r"conv2d of \(1, 6, 6, 2\) by \(3, 3, 2, 2\) into \(1, 4, 5, 2\)"):
        run_kernel(Conv2D(0, 1, 2, (1, 1), (1, 1), "NHWC", "HWCF"), [x, w, init], init.shape)

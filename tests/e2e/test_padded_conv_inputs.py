"""A convolution whose input is a tensor.pad: the pad joins the convolution's dispatch and the
llvm-cpu kernels read the image through the window's bounds (the direct kernel's scratch rows,
the depthwise kernel's checked border taps), on every host target against numpy. Pads of
either side, wider than the window reaches (output rows and columns all padding), of any
constant, with strides and dilations, channel counts off the vector width, several images; and
pads that are not images' (of N or C), which the kernels read per element."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import weir.api as weir

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
Pair = tuple[int, int]
Pads = tuple[int, int, int, int]  # H low, H high, W low, W high
RNG = np.random.default_rng(41)


def _tensor(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _out(size: int, k: int, stride: int, dilation: int) -> int:
    return (size - dilation * (k - 1) - 1) // stride + 1


def _program(op: str, xs: tuple[int, ...], ws: tuple[int, ...], low: tuple[int, ...],
             high: tuple[int, ...], value: float, strides: Pair,
             dilations: Pair) -> tuple[str, tuple[int, ...]]:
    """@f(%x, %w, %bias): the pad of %x, then the convolution onto the bias per channel."""
    ps = tuple(d + lo + hi for d, lo, hi in zip(xs, low, high))
    depthwise = op.startswith("depthwise")
    feats = ps[3] if depthwise else ws[3]
    os = (ps[0], _out(ps[1], ws[0], strides[0], dilations[0]),
          _out(ps[2], ws[1], strides[1], dilations[1]), feats)
    names = ", ".join(f"%i{k}: index" for k in range(4))
    src = f"""
    func.func @f(%x: {_tensor(xs)}, %w: {_tensor(ws)}, %bias: tensor<{feats}xf32>) -> {_tensor(os)} {{
      %v = arith.constant {value!r} : f32
      %p = tensor.pad %x low[{', '.join(map(str, low))}] high[{', '.join(map(str, high))}] {{
      ^bb0({names}):
        tensor.yield %v : f32
      }} : {_tensor(xs)} to {_tensor(ps)}
      %e = tensor.empty() : {_tensor(os)}
      %init = linalg.broadcast ins(%bias : tensor<{feats}xf32>) outs(%e : {_tensor(os)}) dimensions = [0, 1, 2]
      %0 = linalg.{op} {{dilations = dense<[{dilations[0]}, {dilations[1]}]> : tensor<2xi64>, strides = dense<[{strides[0]}, {strides[1]}]> : tensor<2xi64>}} ins(%p, %w : {_tensor(ps)}, {_tensor(ws)}) outs(%init : {_tensor(os)}) -> {_tensor(os)}
      return %0 : {_tensor(os)}
    }}"""
    return src, os


def _reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray, low: tuple[int, ...],
               high: tuple[int, ...], value: float, strides: Pair,
               dilations: Pair) -> np.ndarray:
    padded = np.pad(x.astype(np.float64), tuple(zip(low, high)), constant_values=value)
    span = tuple(d * (k - 1) + 1 for k, d in zip(w.shape[:2], dilations))
    views = sliding_window_view(padded, span, axis=(1, 2))
    patches = views[:, ::strides[0], ::strides[1], :, ::dilations[0], ::dilations[1]]
    spec = "nhwcij,ijcf->nhwf" if w.ndim == 4 else "nhwcij,ijc->nhwc"
    return bias + np.einsum(spec, patches, w.astype(np.float64))


def _check(run: Runner, op: str, xs: tuple[int, ...], ws: tuple[int, ...],
           low: tuple[int, ...], high: tuple[int, ...], value: float, strides: Pair,
           dilations: Pair) -> None:
    src, os = _program(op, xs, ws, low, high, value, strides, dilations)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    bias = RNG.standard_normal(os[3]).astype(np.float32)
    got = np.asarray(run(src, "f", x, w, bias))
    expected = _reference(x, w, bias, low, high, value, strides, dilations)
    assert got.shape == expected.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)


IMAGE_CASES = [  # n, (h, w), c, (kh, kw), pads, value, strides, dilations
    (1, (10, 9), 16, (3, 3), (1, 1, 1, 1), 0.0, (1, 1), (1, 1)),    # 'same'
    (2, (11, 12), 19, (3, 3), (0, 1, 0, 1), 0.0, (2, 2), (1, 1)),   # TF's stride-2 'same'
    (1, (9, 10), 24, (3, 3), (3, 0, 0, 4), -1.5, (1, 1), (1, 1)),   # rows and columns all pad
    (1, (12, 13), 32, (3, 3), (2, 2, 2, 2), 0.5, (1, 1), (2, 2)),   # dilated
    (1, (8, 16), 40, (5, 5), (2, 2, 2, 2), 0.0, (2, 1), (1, 1)),    # MobileNet's 5 x 5
    (1, (6, 7), 5, (7, 7), (3, 3, 3, 3), 0.0, (2, 2), (1, 1)),      # a stem: the window > image
]
IMAGE_IDS = ["same", "tf-stride2", "all-pad-edges", "dilated", "5x5", "stem"]


@pytest.mark.parametrize("n, hw, c, khw, pads, value, strides, dilations", IMAGE_CASES,
                         ids=IMAGE_IDS)
@pytest.mark.parametrize("op", ["conv_2d_nhwc_hwcf", "depthwise_conv_2d_nhwc_hwc"])
def test_padded_image(run: Runner, op: str, n: int, hw: Pair, c: int, khw: Pair, pads: Pads,
                      value: float, strides: Pair, dilations: Pair) -> None:
    ws = (*khw, c) if op.startswith("depthwise") else (*khw, c, 12)
    _check(run, op, (n, *hw, c), ws, (0, pads[0], pads[2], 0), (0, pads[1], pads[3], 0), value,
           strides, dilations)


@pytest.mark.parametrize("low, high", [((1, 1, 1, 0), (0, 1, 1, 0)),
                                       ((0, 1, 1, 2), (0, 1, 1, 1))], ids=["images", "channels"])
@pytest.mark.parametrize("op", ["conv_2d_nhwc_hwcf", "depthwise_conv_2d_nhwc_hwc"])
def test_pad_of_images_or_channels(run: Runner, op: str, low: tuple[int, ...],
                                   high: tuple[int, ...]) -> None:
    """Not an image's pad: read element by element (a padded image or channel of -2s)."""
    c = 6
    ws = (3, 3, c + low[3] + high[3]) if op.startswith("depthwise") else \
        (3, 3, c + low[3] + high[3], 8)
    _check(run, op, (2, 7, 8, c), ws, low, high, -2.0, (1, 1), (1, 1))


def test_pad_joins_the_convolutions_dispatch() -> None:
    """One dispatch: the pad is not a dispatch writing the padded copy."""
    src, _ = _program("depthwise_conv_2d_nhwc_hwc", (1, 8, 8, 16), (3, 3, 16), (0, 1, 1, 0),
                      (0, 1, 1, 0), 0.0, (1, 1), (1, 1))
    flow = weir.compile_to_phase(src, "test.mlir", weir.CompilerOptions(
        target_backends=("llvm-cpu",)), "flow")
    assert flow.count("flow.executable.export") == 1
    assert "tensor.insert_slice" in flow and "linalg.depthwise_conv_2d_nhwc_hwc" in flow

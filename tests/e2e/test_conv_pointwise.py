"""1x1 convolutions of channels-first f32 images as GEMMs straight into the NCHW output
(weir/compiler/targets/llvm_cpu/pointwise_conv.py), on every host target (the `run` fixture),
against numpy: few output channels over many pixels (workgroups split whole output rows, the
last range partial, several images), many output channels over few pixels (workgroups split
the channels), tiny sizes, dynamic image sizes (one workgroup), a bias broadcast as the init and
a ReLU fused after it."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(11)


def program(n: int, c: int, h: int, w: int, f: int, dynamic: bool) -> str:
    """@f(%x, %w, %bias): relu(bias + conv1x1(x, w)), NCHW/FCHW, `dynamic`: N, H, W unknown."""
    xs = f"tensor<?x{c}x?x?xf32>" if dynamic else f"tensor<{n}x{c}x{h}x{w}xf32>"
    os = f"tensor<?x{f}x?x?xf32>" if dynamic else f"tensor<{n}x{f}x{h}x{w}xf32>"
    if dynamic:
        empty = "\n      ".join([
            "%c0 = arith.constant 0 : index", "%c2 = arith.constant 2 : index",
            "%c3 = arith.constant 3 : index", f"%d0 = tensor.dim %x, %c0 : {xs}",
            f"%d2 = tensor.dim %x, %c2 : {xs}", f"%d3 = tensor.dim %x, %c3 : {xs}",
            f"%e = tensor.empty(%d0, %d2, %d3) : {os}"])
    else:
        empty = f"%e = tensor.empty() : {os}"
    ws, bs = f"tensor<{f}x{c}x1x1xf32>", f"tensor<{f}xf32>"
    maps = "[affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>]"
    return f"""
    func.func @f(%x: {xs}, %w: {ws}, %bias: {bs}) -> {os} {{
      {empty}
      %b = linalg.broadcast ins(%bias : {bs}) outs(%e : {os}) dimensions = [0, 2, 3]
      %c = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%x, %w : {xs}, {ws}) outs(%b : {os}) -> {os}
      %r = linalg.generic {{indexing_maps = {maps}, iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%c : {os}) outs(%e : {os}) {{
      ^bb0(%in: f32, %out: f32):
        %zero = arith.constant 0.0 : f32
        %m = arith.maximumf %in, %zero : f32
        linalg.yield %m : f32
      }} -> {os}
      return %r : {os}
    }}"""


@pytest.mark.parametrize("n, c, h, w, f, dynamic", [
    (3, 16, 30, 30, 24, False),
    (2, 320, 7, 7, 1280, False),
    (1, 5, 3, 3, 7, False),
    (2, 16, 14, 14, 24, True),
], ids=["split-rows", "split-channels", "tiny", "dynamic"])
def test_pointwise_conv_nchw(layout_run: Runner, n: int, c: int, h: int, w: int, f: int,
                             dynamic: bool) -> None:
    x = RNG.standard_normal((n, c, h, w)).astype(np.float32)
    weight = RNG.standard_normal((f, c, 1, 1)).astype(np.float32)
    bias = RNG.standard_normal((f,)).astype(np.float32)
    expected = np.maximum(np.einsum("nchw,fc->nfhw", x.astype(np.float64),
                                    weight[:, :, 0, 0].astype(np.float64))
                          + bias[None, :, None, None], 0.0)
    got = np.asarray(layout_run(program(n, c, h, w, f, dynamic), "f", x, weight, bias))
    assert got.shape == expected.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)


def prologue_program(n: int, c: int, h: int, w: int, f: int) -> str:
    """@f(%x, %w, %scale): conv1x1(relu(x * scale), w), the input an expression (DenseNet's
    batch norm and ReLU before each convolution), fused into the convolution's dispatch."""
    xs, os = f"tensor<{n}x{c}x{h}x{w}xf32>", f"tensor<{n}x{f}x{h}x{w}xf32>"
    ws, ss = f"tensor<{f}x{c}x1x1xf32>", f"tensor<{c}xf32>"
    ident = "affine_map<(a, b, c, d) -> (a, b, c, d)>"
    chan = "affine_map<(a, b, c, d) -> (b)>"
    return f"""
    func.func @f(%x: {xs}, %w: {ws}, %scale: {ss}) -> {os} {{
      %ex = tensor.empty() : {xs}
      %a = linalg.generic {{indexing_maps = [{ident}, {chan}, {ident}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%x, %scale : {xs}, {ss}) outs(%ex : {xs}) {{
      ^bb0(%in: f32, %s: f32, %out: f32):
        %zero = arith.constant 0.0 : f32
        %p = arith.mulf %in, %s : f32
        %m = arith.maximumf %p, %zero : f32
        linalg.yield %m : f32
      }} -> {xs}
      %e = tensor.empty() : {os}
      %zero = arith.constant 0.0 : f32
      %z = linalg.fill ins(%zero : f32) outs(%e : {os}) -> {os}
      %c = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%a, %w : {xs}, {ws}) outs(%z : {os}) -> {os}
      return %c : {os}
    }}"""


@pytest.mark.parametrize("n, c, h, w, f", [(3, 16, 30, 30, 24), (2, 320, 7, 7, 1280)],
                         ids=["split-rows", "split-channels"])
def test_pointwise_conv_of_an_expression(layout_run: Runner, n: int, c: int, h: int, w: int,
                                         f: int) -> None:
    """The input evaluated into scratch: for a split over rows, each workgroup only its rows'
    pixels (the last range partial, several images); for a split over channels, all of it."""
    x = RNG.standard_normal((n, c, h, w)).astype(np.float32)
    weight = RNG.standard_normal((f, c, 1, 1)).astype(np.float32)
    scale = RNG.standard_normal((c,)).astype(np.float32)
    activated = np.maximum(x.astype(np.float64) * scale[None, :, None, None], 0.0)
    expected = np.einsum("nchw,fc->nfhw", activated, weight[:, :, 0, 0].astype(np.float64))
    got = np.asarray(layout_run(prologue_program(n, c, h, w, f), "f", x, weight, scale))
    assert got.shape == expected.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)

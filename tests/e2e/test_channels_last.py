"""A small NCHW network as exporters write it (pads, a 3 x 3 convolution with a bias and a ReLU,
a 1 x 1 convolution with a residual add, a depthwise convolution, max pooling, a concat along
the channels, a per-channel scale, a global mean), which global-optimization runs channels-last
on llvm-cpu (convert-conv-to-channels-last, propagate-transposes, its 1 x 1 convolutions then
GEMMs of pixels by filters), against numpy on every host target and driver; and, on llvm-cpu, that the network keeps NHWC
between its convolutions: the only transposes left are the input's and the result's."""

from __future__ import annotations

from typing import Callable

import numpy as np

import weir.api as weir

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(5)
W3 = RNG.standard_normal((16, 8, 3, 3)).astype(np.float32) / 8
B3 = RNG.standard_normal(16).astype(np.float32)
W1 = RNG.standard_normal((16, 16, 1, 1)).astype(np.float32) / 16
WD = RNG.standard_normal((16, 3, 3)).astype(np.float32)
WC = RNG.standard_normal((8, 16, 1, 1)).astype(np.float32) / 16
SCALE = RNG.standard_normal((24, 1, 1)).astype(np.float32)
ID4 = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
PAR4 = '["parallel", "parallel", "parallel", "parallel"]'


def _blob(a: np.ndarray) -> str:
    return "0x04000000" + a.tobytes().hex().upper()


def _pad(name: str, value: str, src: str, shape: str, to: str) -> str:
    return f"""%{name} = tensor.pad %{src} low[0, 0, 1, 1] high[0, 0, 1, 1] {{
      ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
        tensor.yield %{value} : f32
      }} : tensor<{shape}xf32> to tensor<{to}xf32>"""


def _binary(name: str, op: str, a: str, b: str, shape: str, b_map: str = ID4) -> str:
    return f"""%{name} = linalg.generic {{indexing_maps = [{ID4}, {b_map}, {ID4}], iterator_types = {PAR4}}} ins(%{a}, %{b} : tensor<{shape}xf32>, tensor<{_of(b, shape)}xf32>) outs(%e{shape.replace('x', '_')} : tensor<{shape}xf32>) {{
      ^bb0(%in: f32, %in2: f32, %out: f32):
        %v = {op} %in, %in2 : f32
        linalg.yield %v : f32
      }} -> tensor<{shape}xf32>"""


def _of(value: str, shape: str) -> str:
    return "24x1x1" if value == "scale" else shape


CONV = "{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}"
PROGRAM = f"""
func.func @net(%x: tensor<1x8x12x12xf32>) -> (tensor<1x24x6x6xf32>, tensor<1x24xf32>) {{
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %w3 = arith.constant dense_resource<w3> : tensor<16x8x3x3xf32>
  %b3 = arith.constant dense_resource<b3> : tensor<16xf32>
  %w1 = arith.constant dense_resource<w1> : tensor<16x16x1x1xf32>
  %wd = arith.constant dense_resource<wd> : tensor<16x3x3xf32>
  %wc = arith.constant dense_resource<wc> : tensor<8x16x1x1xf32>
  %scale = arith.constant dense_resource<scale> : tensor<24x1x1xf32>
  %e1_16_12_12 = tensor.empty() : tensor<1x16x12x12xf32>
  %e1_24_6_6 = tensor.empty() : tensor<1x24x6x6xf32>
  {_pad("p0", "zero", "x", "1x8x12x12", "1x8x14x14")}
  %bias = linalg.broadcast ins(%b3 : tensor<16xf32>) outs(%e1_16_12_12 : tensor<1x16x12x12xf32>) dimensions = [0, 2, 3]
  %c3 = linalg.conv_2d_nchw_fchw {CONV} ins(%p0, %w3 : tensor<1x8x14x14xf32>, tensor<16x8x3x3xf32>) outs(%bias : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e1_16_12_12 : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  {_binary("a", "arith.maximumf", "c3", "zeros", "1x16x12x12")}
  %c1 = linalg.conv_2d_nchw_fchw {CONV} ins(%a, %w1 : tensor<1x16x12x12xf32>, tensor<16x16x1x1xf32>) outs(%zeros : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  {_binary("s", "arith.addf", "c1", "a", "1x16x12x12")}
  {_pad("p1", "zero", "s", "1x16x12x12", "1x16x14x14")}
  %d = linalg.depthwise_conv_2d_nchw_chw {CONV} ins(%p1, %wd : tensor<1x16x14x14xf32>, tensor<16x3x3xf32>) outs(%zeros : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  %e6 = tensor.empty() : tensor<1x16x6x6xf32>
  %lowest = linalg.fill ins(%ninf : f32) outs(%e6 : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %m = linalg.pooling_nchw_max {{dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}} ins(%d, %window : tensor<1x16x12x12xf32>, tensor<2x2xf32>) outs(%lowest : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %e8 = tensor.empty() : tensor<1x8x6x6xf32>
  %zeros8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %cc = linalg.conv_2d_nchw_fchw {CONV} ins(%m, %wc : tensor<1x16x6x6xf32>, tensor<8x16x1x1xf32>) outs(%zeros8 : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %cat = tensor.concat dim(1) %m, %cc : (tensor<1x16x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x24x6x6xf32>
  {_binary("y", "arith.mulf", "cat", "scale", "1x24x6x6", "affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>")}
  %e2 = tensor.empty() : tensor<1x24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x24xf32>) -> tensor<1x24xf32>
  %sum = linalg.generic {{indexing_maps = [{ID4}, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}} ins(%y : tensor<1x24x6x6xf32>) outs(%acc : tensor<1x24xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  }} -> tensor<1x24xf32>
  return %y, %sum : tensor<1x24x6x6xf32>, tensor<1x24xf32>
}}
{{-#
  dialect_resources: {{ builtin: {{ w3: "{_blob(W3)}", b3: "{_blob(B3)}", w1: "{_blob(W1)}",
    wd: "{_blob(WD)}", wc: "{_blob(WC)}", scale: "{_blob(SCALE)}" }} }}
#-}}
"""


def _conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """NCHW x FCHW, stride 1, no padding, in float64."""
    f, _, kh, kw = w.shape
    n, _, h, wd = x.shape
    out = np.zeros((n, f, h - kh + 1, wd - kw + 1))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,fc->nfhw", x[:, :, i:i + out.shape[2], j:j + out.shape[3]],
                             w[:, :, i, j].astype(np.float64))
    return out


def _padded(x: np.ndarray) -> np.ndarray:
    return np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))


def reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.maximum(_conv(_padded(x), W3) + B3.reshape(1, 16, 1, 1), 0.0)
    s = _conv(a, W1) + a
    p = _padded(s)
    d = sum(p[:, :, i:i + 12, j:j + 12] * WD[:, i, j].reshape(1, 16, 1, 1)
            for i in range(3) for j in range(3))
    m = d.reshape(1, 16, 6, 2, 6, 2).max(axis=(3, 5))
    y = np.concatenate([m, _conv(m, WC)], axis=1) * SCALE.reshape(1, 24, 1, 1)
    return y, y.sum(axis=(2, 3))


def test_network_matches_numpy(run: Runner) -> None:
    x = RNG.standard_normal((1, 8, 12, 12)).astype(np.float32)
    y, total = run(PROGRAM, "net", x)  # type: ignore[misc]
    want_y, want_total = reference(x)
    np.testing.assert_allclose(y, want_y, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(total, want_total, rtol=1e-4, atol=1e-3)


def test_llvm_cpu_stays_channels_last() -> None:
    """After global-optimization the convolutions are NHWC and two
    layout transposes are left: the input's to NHWC, and the scaled concat's back to NCHW,
    which the function returns and the global mean reads."""
    options = weir.CompilerOptions(target_backends=("llvm-cpu",))
    text = weir.compile_to_phase(PROGRAM, "net.mlir", options, "global-optimization")
    assert "conv_2d_nchw" not in text and "depthwise_conv_2d_nchw" not in text
    assert text.count("linalg.conv_2d_nhwc_hwcf") == 3
    assert "linalg.pooling_nhwc_max" in text and "linalg.depthwise_conv_2d_nhwc_hwc" in text
    layout = [line for line in text.splitlines() if "linalg.transpose" in line and
              ("permutation = [0, 2, 3, 1]" in line or "permutation = [0, 3, 1, 2]" in line)]
    assert len(layout) == 2, layout

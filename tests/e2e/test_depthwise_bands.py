"""NHWC depthwise convolutions run in bands of rows, each block of channels over the band's rows
before the next (depthwise.py, band_rows): images of several bands with a short last one,
split over workgroups (local-task), channels past the last whole vector, and each way the
sums start: from zero (an init of zeros, never written first), from a bias (with a ReLU
after), from an init that is neither; padded and read in place; on llvm-cpu's host CPU and
the generic x86-64 one, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import dense_f32

import weir.api as weir
from weir.compiler.targets.llvm_cpu import depthwise

RNG = np.random.default_rng(23)


def _program(shape: tuple[int, int, int, int], pad: bool, start: str,
             w: np.ndarray, bias: np.ndarray) -> str:
    n, h, wd, c = shape
    inner = (h + 2, wd + 2) if pad else (h, wd)
    out = f"{n}x{inner[0] - 2}x{inner[1] - 2}x{c}"
    xs, ps = f"{n}x{h}x{wd}x{c}", f"{n}x{inner[0]}x{inner[1]}x{c}"
    padded = f"""%p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {{
      ^bb0(%a: index, %b: index, %cc: index, %d: index):
        tensor.yield %z : f32
      }} : tensor<{xs}xf32> to tensor<{ps}xf32>""" if pad else ""
    init = {
        "zero": f"%init = linalg.fill ins(%z : f32) outs(%e : tensor<{out}xf32>) -> tensor<{out}xf32>",
        "bias": f"%init = linalg.broadcast ins(%bias : tensor<{c}xf32>) outs(%e : tensor<{out}xf32>) dimensions = [0, 1, 2]",
        "fill": f"%init = linalg.fill ins(%half : f32) outs(%e : tensor<{out}xf32>) -> tensor<{out}xf32>",
    }[start]
    relu = f"""%r = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%dw : tensor<{out}xf32>) outs(%e : tensor<{out}xf32>) {{
      ^bb0(%in: f32, %o: f32):
        %m = arith.maximumf %in, %z : f32
        linalg.yield %m : f32
      }} -> tensor<{out}xf32>
      return %r : tensor<{out}xf32>""" if start == "bias" else f"return %dw : tensor<{out}xf32>"
    return f"""
    func.func @f(%x: tensor<{xs}xf32>) -> tensor<{out}xf32> {{
      %z = arith.constant 0.0 : f32
      %half = arith.constant 0.5 : f32
      %w = arith.constant {dense_f32(w)} : tensor<3x3x{c}xf32>
      %bias = arith.constant {dense_f32(bias)} : tensor<{c}xf32>
      {padded}
      %e = tensor.empty() : tensor<{out}xf32>
      {init}
      %dw = linalg.depthwise_conv_2d_nhwc_hwc {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
          ins({"%p" if pad else "%x"}, %w : tensor<{ps}xf32>, tensor<3x3x{c}xf32>)
          outs(%init : tensor<{out}xf32>) -> tensor<{out}xf32>
      {relu}
    }}"""


def _expected(x: np.ndarray, w: np.ndarray, bias: np.ndarray, pad: bool,
              start: str) -> np.ndarray:
    if pad:
        x = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    h, wd = x.shape[1] - 2, x.shape[2] - 2
    acc = np.zeros((x.shape[0], h, wd, x.shape[3]))
    for kh in range(3):
        for kw in range(3):
            acc += x[:, kh:kh + h, kw:kw + wd, :].astype(np.float64) * w[kh, kw]
    if start == "bias":
        return np.maximum(acc + bias, 0.0)
    return acc + (0.5 if start == "fill" else 0.0)


CASES = [  # shape (N, H, W, C), padded, how the sums start
    ((1, 61, 70, 19), True, "zero"),   # bands of 24 rows: 24, 24, 13; 19 = 16 + 3 channels
    ((2, 40, 70, 19), True, "bias"),   # bands cross images; a bias, a ReLU after
    ((1, 63, 72, 35), False, "fill"),  # bands of 13 rows; an init of 0.5, filled first
]
IDS = ["zero", "bias-relu", "fill"]


@pytest.mark.parametrize("cpu", ["host", "x86-64"])
@pytest.mark.parametrize("shape, pad, start", CASES, ids=IDS)
def test_banded_depthwise(cpu: str, shape: tuple[int, int, int, int], pad: bool,
                          start: str) -> None:
    n, h, wd, c = shape
    out_w = wd if pad else wd - 2
    assert depthwise.band_rows(c, out_w, wd + 2 if pad else wd) < h  # several bands
    w = RNG.standard_normal((3, 3, c)).astype(np.float32)
    bias = RNG.standard_normal(c).astype(np.float32)
    module = weir.compile_string(_program(shape, pad, start, w, bias), "dw.mlir",
                                 weir.CompilerOptions(target_backends=("llvm-cpu",),
                                                      llvmcpu_target_cpu=cpu))
    x = RNG.standard_normal(shape).astype(np.float32)
    expected = _expected(x, w, bias, pad, start)
    for driver in ("local-sync", "local-task"):
        got = np.asarray(weir.load([module], device=driver).lookup_function("f")(x))
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)

"""Convolutions on images larger than what a band keeps in L2 (direct_conv.py, BAND_BYTES) run
band by band, each band's input rows, kernel and epilogue together: padded (the band's rows
copied with their pad), read in place, strided, batched (bands never cross images), with a
bias and a ReLU after them, on llvm-cpu's host CPU and the generic x86-64 one, both drivers,
against numpy. The filters are constants, as in exported networks: bands need the filter
packed at compile time (a filter packed per call would be packed again per band)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import dense_f32
from numpy.lib.stride_tricks import sliding_window_view

import weir.api as weir
from weir.compiler.targets.llvm_cpu import direct_conv

RNG = np.random.default_rng(17)


def _program(n: int, size: int, chans: int, feats: int, stride: int, pad: bool,
             w: np.ndarray, bias: np.ndarray) -> tuple[str, tuple[int, ...]]:
    """relu(bias + conv(x, w)), 3 x 3, NHWC; with `pad` the exporters' tensor.pad of 1."""
    inner = size + 2 if pad else size
    out = (inner - 3) // stride + 1
    xs, ps, os = f"{n}x{size}x{size}x{chans}", f"{n}x{inner}x{inner}x{chans}", \
        f"{n}x{out}x{out}x{feats}"
    padded = f"""%p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {{
      ^bb0(%a: index, %b: index, %c: index, %d: index):
        tensor.yield %z : f32
      }} : tensor<{xs}xf32> to tensor<{ps}xf32>""" if pad else ""
    source = "%p" if pad else "%x"
    return f"""
    func.func @f(%x: tensor<{xs}xf32>) -> tensor<{os}xf32> {{
      %z = arith.constant 0.0 : f32
      %w = arith.constant {dense_f32(w)} : tensor<3x3x{chans}x{feats}xf32>
      %bias = arith.constant {dense_f32(bias)} : tensor<{feats}xf32>
      {padded}
      %e = tensor.empty() : tensor<{os}xf32>
      %init = linalg.broadcast ins(%bias : tensor<{feats}xf32>) outs(%e : tensor<{os}xf32>) dimensions = [0, 1, 2]
      %c = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}}
          ins({source}, %w : tensor<{ps}xf32>, tensor<3x3x{chans}x{feats}xf32>)
          outs(%init : tensor<{os}xf32>) -> tensor<{os}xf32>
      %r = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%c : tensor<{os}xf32>) outs(%e : tensor<{os}xf32>) {{
      ^bb0(%in: f32, %o: f32):
        %m = arith.maximumf %in, %z : f32
        linalg.yield %m : f32
      }} -> tensor<{os}xf32>
      return %r : tensor<{os}xf32>
    }}""", (n, size, size, chans)


def _expected(x: np.ndarray, w: np.ndarray, bias: np.ndarray, stride: int,
              pad: bool) -> np.ndarray:
    if pad:
        x = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    views = sliding_window_view(x.astype(np.float64), (3, 3), axis=(1, 2))[:, ::stride, ::stride]
    return np.maximum(bias + np.einsum("nhwcij,ijcf->nhwf", views, w.astype(np.float64)), 0.0)


CASES = [  # n, size, chans, feats, stride, pad
    (1, 140, 16, 32, 1, True),    # 1.25 MB image: bands of its padded rows
    (2, 100, 16, 32, 1, True),    # two images, bands in each, none across
    (1, 142, 16, 32, 1, False),   # read in place, bands for the epilogue's sake
    (1, 199, 16, 32, 2, True),    # strided: a band's input rows are 2 per output row
]
IDS = ["padded", "two-images", "in-place", "strided"]


@pytest.mark.parametrize("cpu", ["host", "x86-64"])
@pytest.mark.parametrize("n, size, chans, feats, stride, pad", CASES, ids=IDS)
def test_banded_convolution(cpu: str, n: int, size: int, chans: int, feats: int, stride: int,
                            pad: bool) -> None:
    w = RNG.standard_normal((3, 3, chans, feats)).astype(np.float32) * 0.2
    bias = RNG.standard_normal(feats).astype(np.float32)
    src, xs = _program(n, size, chans, feats, stride, pad, w, bias)
    assert n * size * size * chans * 4 > direct_conv.BAND_BYTES  # large enough to be banded
    module = weir.compile_string(src, "bands.mlir", weir.CompilerOptions(
        target_backends=("llvm-cpu",), llvmcpu_target_cpu=cpu))
    x = RNG.standard_normal(xs).astype(np.float32)
    expected = _expected(x, w, bias, stride, pad)
    for driver in ("local-sync", "local-task"):
        got = np.asarray(weir.load([module], device=driver).lookup_function("f")(x))
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)


def test_bands_are_taken_only_for_large_images(monkeypatch: pytest.MonkeyPatch) -> None:
    """A band size is chosen for the large image and none for a small one (its tiles may span
    rows and images, which bands would cut)."""
    chosen: list[object] = []
    real = direct_conv._band_rows
    monkeypatch.setattr(direct_conv, "_band_rows",
                        lambda *args: chosen.append(real(*args)) or chosen[-1])
    for size in (140, 20):
        w = np.ones((3, 3, 16, 32), np.float32)
        src, _ = _program(1, size, 16, 32, 1, True, w, np.zeros(32, np.float32))
        weir.compile_string(src, "bands.mlir", weir.CompilerOptions(target_backends=("llvm-cpu",)))
    assert len(chosen) == 2 and chosen[1] is None
    per, slab = chosen[0]  # type: ignore[misc]
    assert 1 <= per < 140 and slab is not None

"""A pooling of a channel concatenation (SqueezeNet's max pool after a fire module) runs as one
pooling per piece (global_opt/split_pools_over_concats.py), and the 1 x 1 convolution reading the
pooled concatenation as one convolution per piece after it: no concatenation dispatch is left,
and the result is the same bit for bit as the program compiled without the split, for a max and
a sum pooling and a ceil-mode max pooling (a pad of the rows and columns by -inf between, as
torch-mlir states it), on both drivers; and it matches numpy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import dense_f32

import weir.api as weir
from weir.compiler.api import compile_to_phase

RNG = np.random.default_rng(61)
PIECES = (24, 40)
H, W, F = 11, 13, 16
# The pooling, the value its init is filled with, and the rows and columns padded after the
# image (by that value) before it.
KIND = {"max": ("linalg.pooling_nhwc_max", "0xFF800000", 0),
        "sum": ("linalg.pooling_nhwc_sum", "0.0", 0),
        "max-ceil": ("linalg.pooling_nhwc_max", "0xFF800000", 1)}


def _program(kind: str, w: np.ndarray) -> str:
    op, start, pad = KIND[kind]
    c = sum(PIECES)
    ph, pw = H + pad, W + pad
    oh, ow = (ph - 3) // 2 + 1, (pw - 3) // 2 + 1
    t = lambda *s: f"tensor<{'x'.join(map(str, s))}xf32>"  # noqa: E731
    padding = f"""%padded = tensor.pad %cat low[0, 0, 0, 0] high[0, {pad}, {pad}, 0] {{
      ^bb0(%i: index, %j: index, %k: index, %l: index):
        tensor.yield %start : f32
      }} : {t(1, H, W, c)} to {t(1, ph, pw, c)}""" if pad else ""
    source = "%padded" if pad else "%cat"
    args = ", ".join(f"%p{i}: {t(1, H, W, p)}" for i, p in enumerate(PIECES))
    names = ", ".join(f"%p{i}" for i in range(len(PIECES)))
    types = ", ".join(t(1, H, W, p) for p in PIECES)
    return f"""
    func.func @f({args}) -> {t(1, oh, ow, F)} {{
      %cat = tensor.concat dim(3) {names} : ({types}) -> {t(1, H, W, c)}
      %start = arith.constant {start} : f32
      {padding}
      %pe = tensor.empty() : {t(1, oh, ow, c)}
      %pf = linalg.fill ins(%start : f32) outs(%pe : {t(1, oh, ow, c)}) -> {t(1, oh, ow, c)}
      %win = tensor.empty() : tensor<3x3xf32>
      %pool = {op} {{dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}}
          ins({source}, %win : {t(1, ph, pw, c)}, tensor<3x3xf32>) outs(%pf : {t(1, oh, ow, c)}) -> {t(1, oh, ow, c)}
      %w = arith.constant {dense_f32(w)} : {t(1, 1, c, F)}
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : {t(1, oh, ow, F)}
      %init = linalg.fill ins(%z : f32) outs(%e : {t(1, oh, ow, F)}) -> {t(1, oh, ow, F)}
      %cv = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
          ins(%pool, %w : {t(1, oh, ow, c)}, {t(1, 1, c, F)}) outs(%init : {t(1, oh, ow, F)}) -> {t(1, oh, ow, F)}
      return %cv : {t(1, oh, ow, F)}
    }}"""


def _pooled(x: np.ndarray, kind: str) -> np.ndarray:
    """3 x 3 windows at stride 2 of NHWC `x` (padded after the image as KIND says), their max
    or sum."""
    _, start, pad = KIND[kind]
    x = np.pad(x, ((0, 0), (0, pad), (0, pad), (0, 0)), constant_values=-np.inf if pad else 0.0)
    oh, ow = (x.shape[1] - 3) // 2 + 1, (x.shape[2] - 3) // 2 + 1
    windows = np.stack([x[:, i:i + 2 * oh - 1:2, j:j + 2 * ow - 1:2, :]
                        for i in range(3) for j in range(3)])
    return windows.sum(axis=0) if kind == "sum" else windows.max(axis=0)


@pytest.mark.parametrize("kind", sorted(KIND))
def test_split_matches_the_concatenation_bit_for_bit(kind: str) -> None:
    c = sum(PIECES)
    w = (RNG.standard_normal((1, 1, c, F)) / np.sqrt(c)).astype(np.float32)
    src = _program(kind, w)
    on = weir.CompilerOptions(target_backends=("llvm-cpu",))
    off = weir.CompilerOptions(target_backends=("llvm-cpu",),
                               disabled_passes=frozenset({"split-pools-over-concats"}))
    # Neither concatenation is written: the poolings read the pieces, the convolutions the
    # pooled pieces. Without the pass the first one (and its pad) is a tensor of the flow IR.
    _, _, pad = KIND[kind]
    whole_types = {f"tensor<1x{H + pad}x{W + pad}x{c}xf32>", f"tensor<1x{H}x{W}x{c}xf32>"}
    split_flow = compile_to_phase(src, "pool.mlir", on, "flow")
    assert not any(t in split_flow for t in whole_types)
    oh, ow = (H + pad - 3) // 2 + 1, (W + pad - 3) // 2 + 1
    assert f"tensor<1x{oh}x{ow}x{c}xf32>" not in split_flow  # the pooled concatenation
    assert all(t in compile_to_phase(src, "pool.mlir", off, "flow") for t in whole_types)
    split = weir.compile_string(src, "pool.mlir", on)
    whole = weir.compile_string(src, "pool.mlir", off)
    args = [RNG.standard_normal((1, H, W, p)).astype(np.float32) for p in PIECES]
    pooled = _pooled(np.concatenate(args, axis=3).astype(np.float64), kind)
    expected = np.einsum("nhwc,cf->nhwf", pooled, w[0, 0].astype(np.float64))
    for driver in ("local-sync", "local-task"):
        got = np.asarray(weir.load([split], device=driver).lookup_function("f")(*args))
        reference = np.asarray(weir.load([whole], device=driver).lookup_function("f")(*args))
        np.testing.assert_array_equal(got, reference)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)

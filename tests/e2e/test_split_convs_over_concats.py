"""A 1 x 1 convolution of a channel concatenation (a SqueezeNet fire module's expansions read by
the next squeeze) runs as one convolution per piece, each from the last one's result
(global_opt/split_convs_over_concats.py): no concatenation dispatch is left, and the result is
the same bit for bit as the program compiled without the split, for a squeeze of 16 channels
(the direct kernel) and of 48 (the GEMM), with its bias and ReLU, on both drivers; and it
matches numpy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import dense_f32

import weir.api as weir
from weir.compiler.api import compile_to_phase

RNG = np.random.default_rng(53)


def _program(xs: tuple[int, ...], pieces: tuple[int, ...], f: int, w: np.ndarray,
             b: np.ndarray) -> str:
    n, h, wd, c = xs
    t = lambda *s: f"tensor<{'x'.join(map(str, s))}xf32>"  # noqa: E731
    args = ", ".join(f"%p{i}: {t(n, h, wd, p)}" for i, p in enumerate(pieces))
    names = ", ".join(f"%p{i}" for i in range(len(pieces)))
    types = ", ".join(t(n, h, wd, p) for p in pieces)
    ident = "affine_map<(a, b, c, d) -> (a, b, c, d)>"
    return f"""
    func.func @f({args}) -> {t(n, h, wd, f)} {{
      %cat = tensor.concat dim(3) {names} : ({types}) -> {t(n, h, wd, c)}
      %w = arith.constant {dense_f32(w)} : {t(1, 1, c, f)}
      %b = arith.constant {dense_f32(b)} : {t(f)}
      %e = tensor.empty() : {t(n, h, wd, f)}
      %init = linalg.broadcast ins(%b : {t(f)}) outs(%e : {t(n, h, wd, f)}) dimensions = [0, 1, 2]
      %cv = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
          ins(%cat, %w : {t(n, h, wd, c)}, {t(1, 1, c, f)}) outs(%init : {t(n, h, wd, f)}) -> {t(n, h, wd, f)}
      %r = linalg.generic {{indexing_maps = [{ident}, {ident}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%cv : {t(n, h, wd, f)}) outs(%e : {t(n, h, wd, f)}) {{
      ^bb0(%in: f32, %o: f32):
        %zero = arith.constant 0.0 : f32
        %gt = arith.cmpf ugt, %in, %zero : f32
        %s = arith.select %gt, %in, %zero : f32
        linalg.yield %s : f32
      }} -> {t(n, h, wd, f)}
      return %r : {t(n, h, wd, f)}
    }}"""


@pytest.mark.parametrize("f", [16, 48], ids=["direct", "gemm"])
def test_split_matches_the_concatenation_bit_for_bit(f: int) -> None:
    pieces = (64, 64)
    xs = (1, 11, 13, sum(pieces))
    w = (RNG.standard_normal((1, 1, xs[3], f)) / np.sqrt(xs[3])).astype(np.float32)
    b = RNG.standard_normal(f).astype(np.float32)
    src = _program(xs, pieces, f, w, b)
    on = weir.CompilerOptions(target_backends=("llvm-cpu",))
    off = weir.CompilerOptions(target_backends=("llvm-cpu",),
                               disabled_passes=frozenset({"split-convs-over-concats"}))
    # The concatenation's dispatch (an insert_slice per piece) is gone.
    assert "tensor.insert_slice" not in compile_to_phase(src, "fire.mlir", on, "flow")
    assert "tensor.insert_slice" in compile_to_phase(src, "fire.mlir", off, "flow")
    split = weir.compile_string(src, "fire.mlir", on)
    whole = weir.compile_string(src, "fire.mlir", off)
    args = [RNG.standard_normal((*xs[:3], p)).astype(np.float32) for p in pieces]
    expected = np.maximum(np.einsum("nhwc,cf->nhwf", np.concatenate(args, axis=3).astype(
        np.float64), w[0, 0].astype(np.float64)) + b, 0.0)
    for driver in ("local-sync", "local-task"):
        got = np.asarray(weir.load([split], device=driver).lookup_function("f")(*args))
        reference = np.asarray(weir.load([whole], device=driver).lookup_function("f")(*args))
        np.testing.assert_array_equal(got, reference)
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)

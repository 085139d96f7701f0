"""Products of one input by several constant weights, fused side by side by global-optimization
(`fuse-horizontal-matmuls`), give what the separate products give, on every host target: an
LSTM-like step whose three gates read their column slices of the one product (each slice
feeding an elementwise consumer), with widths that are not whole GEMM panels, against numpy."""

from __future__ import annotations

from typing import Callable

import numpy as np
from conftest import dense_f32

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(11)
ROWS, DEPTH, WIDTHS = 8, 48, (40, 40, 24)


def _map(rank: int) -> str:
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({dims}) -> ({dims})>"


def test_gates_read_their_slices(run: Runner) -> None:
    weights = [(RNG.standard_normal((DEPTH, n)) * 0.2).astype(np.float32) for n in WIDTHS]
    ta, tc = f"tensor<{ROWS}x{WIDTHS[0]}xf32>", f"tensor<{ROWS}x{WIDTHS[2]}xf32>"
    tx = f"tensor<{ROWS}x{DEPTH}xf32>"
    maps = ", ".join([_map(2)] * 3)
    src = f"""
    func.func @step(%x: {tx}) -> ({ta}, {tc}) {{
      %zero = arith.constant 0.0 : f32
      %wi = arith.constant {dense_f32(weights[0])} : tensor<{DEPTH}x{WIDTHS[0]}xf32>
      %wf = arith.constant {dense_f32(weights[1])} : tensor<{DEPTH}x{WIDTHS[1]}xf32>
      %wo = arith.constant {dense_f32(weights[2])} : tensor<{DEPTH}x{WIDTHS[2]}xf32>
      %e = tensor.empty() : {ta}
      %z = linalg.fill ins(%zero : f32) outs(%e : {ta}) -> {ta}
      %i = linalg.matmul ins(%x, %wi : {tx}, tensor<{DEPTH}x{WIDTHS[0]}xf32>) outs(%z : {ta}) -> {ta}
      %f = linalg.matmul ins(%x, %wf : {tx}, tensor<{DEPTH}x{WIDTHS[1]}xf32>) outs(%z : {ta}) -> {ta}
      %g = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel", "parallel"]}} ins(%i, %f : {ta}, {ta}) outs(%e : {ta}) {{
      ^bb0(%a: f32, %b: f32, %o: f32):
        %n = arith.negf %a : f32
        %x1 = math.exp %n : f32
        %one = arith.constant 1.0 : f32
        %d = arith.addf %x1, %one : f32
        %s = arith.divf %b, %d : f32
        linalg.yield %s : f32
      }} -> {ta}
      %ec = tensor.empty() : {tc}
      %zc = linalg.fill ins(%zero : f32) outs(%ec : {tc}) -> {tc}
      %c = linalg.matmul ins(%x, %wo : {tx}, tensor<{DEPTH}x{WIDTHS[2]}xf32>) outs(%zc : {tc}) -> {tc}
      return %g, %c : {ta}, {tc}
    }}"""
    x = RNG.standard_normal((ROWS, DEPTH)).astype(np.float32)
    i, f, c = (x.astype(np.float64) @ w for w in weights)
    got = run(src, "step", x)
    assert isinstance(got, (tuple, list)) and len(got) == 2
    np.testing.assert_allclose(np.asarray(got[0]), f / (1.0 + np.exp(-i)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(got[1]), c, rtol=1e-5, atol=1e-5)

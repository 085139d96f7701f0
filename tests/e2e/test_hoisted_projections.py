"""A loop's products of each step's input slice by constant weights, hoisted by
global-optimization (`hoist-sliced-matmuls`) into one product before the loop, give what the
loop gives, on every host target: a small recurrence (h = tanh(x_t W + h R)) whose input
projection is hoisted and whose recurrent product stays in the loop, against numpy."""

from __future__ import annotations

from typing import Callable

import numpy as np
from conftest import dense_f32

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(23)
STEPS, ROWS, DEPTH, WIDTH = 5, 4, 24, 40


def test_recurrence_with_hoisted_input_projection(run: Runner) -> None:
    w = (RNG.standard_normal((DEPTH, WIDTH)) * 0.2).astype(np.float32)
    r = (RNG.standard_normal((WIDTH, WIDTH)) * 0.2).astype(np.float32)
    tx, th = f"tensor<{STEPS}x{ROWS}x{DEPTH}xf32>", f"tensor<{ROWS}x{WIDTH}xf32>"
    ts, tw, tr = f"tensor<1x{ROWS}x{DEPTH}xf32>", f"tensor<{DEPTH}x{WIDTH}xf32>", \
        f"tensor<{WIDTH}x{WIDTH}xf32>"
    src = f"""
    func.func @rnn(%x: {tx}) -> {th} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %steps = arith.constant {STEPS} : index
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : {th}
      %h0 = linalg.fill ins(%zero : f32) outs(%e : {th}) -> {th}
      %w = arith.constant {dense_f32(w)} : {tw}
      %r = arith.constant {dense_f32(r)} : {tr}
      %h = scf.for %i = %c0 to %steps step %c1 iter_args(%hi = %h0) -> ({th}) {{
        %s = tensor.extract_slice %x[%i, 0, 0] [1, {ROWS}, {DEPTH}] [1, 1, 1] : {tx} to {ts}
        %xi = tensor.collapse_shape %s [[0, 1], [2]] : {ts} into tensor<{ROWS}x{DEPTH}xf32>
        %z = linalg.fill ins(%zero : f32) outs(%e : {th}) -> {th}
        %a = linalg.matmul ins(%xi, %w : tensor<{ROWS}x{DEPTH}xf32>, {tw}) outs(%z : {th}) -> {th}
        %b = linalg.matmul ins(%hi, %r : {th}, {tr}) outs(%z : {th}) -> {th}
        %sum = arith.addf %a, %b : {th}
        %n = math.tanh %sum : {th}
        scf.yield %n : {th}
      }}
      return %h : {th}
    }}"""
    x = RNG.standard_normal((STEPS, ROWS, DEPTH)).astype(np.float32)
    h = np.zeros((ROWS, WIDTH))
    for t in range(STEPS):
        h = np.tanh(x[t].astype(np.float64) @ w + h @ r)
    np.testing.assert_allclose(np.asarray(run(src, "rnn", x)), h, rtol=1e-5, atol=1e-5)

"""An elementwise chain of exponentials, divisions and tanh over 8 x 256 elements (an LSTM
step's gates), which llvm-cpu cuts into several workgroups by the work of an element
(elementwise.py), against numpy on every host target."""

from __future__ import annotations

from typing import Callable

import numpy as np

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target

SOURCE = """
func.func @f(%x: tensor<8x256xf32>, %y: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %e = tensor.empty() : tensor<8x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<8x256xf32>, tensor<8x256xf32>) outs(%e : tensor<8x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %a : f32
    %e1 = math.exp %n : f32
    %d = arith.addf %e1, %one : f32
    %s = arith.divf %one, %d : f32
    %t = math.tanh %b : f32
    %v = arith.mulf %s, %t : f32
    linalg.yield %v : f32
  } -> tensor<8x256xf32>
  return %r : tensor<8x256xf32>
}"""


def test_gates_split_over_workgroups(run: Runner) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 256)).astype(np.float32) * 4
    y = rng.standard_normal((8, 256)).astype(np.float32) * 4
    expected = np.tanh(y.astype(np.float64)) / (1.0 + np.exp(-x.astype(np.float64)))
    got = np.asarray(run(SOURCE, "f", x, y))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)

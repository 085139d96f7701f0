"""Whole-program rewrites that take per-call work out of exported models, compiled and run on
every host target against numpy: a linear layer's transposed constant weight (evaluated at
compile time: no transpose left to dispatch), a batch_matmul of weights broadcast over the batch
(one matmul, no broadcast copy), and a recurrence whose every step is also an output (each step
materialised once, not recomputed from the first step by each consumer)."""

from __future__ import annotations

from typing import Callable

import numpy as np

import weir.api as weir

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(29)


def flow_of(src: str) -> str:
    return weir.compile_to_phase(src, "global_opt.mlir", weir.CompilerOptions(), "flow")


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_linear_layer_with_a_constant_weight(run: Runner) -> None:
    w = normal(3, 4)  # nn.Linear's (out, in) layout
    rows = ", ".join("[" + ", ".join(f"{v:.6e}" for v in row) + "]" for row in w)
    src = f"""
    func.func @f(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {{
      %zero = arith.constant 0.0 : f32
      %w = arith.constant dense<[{rows}]> : tensor<3x4xf32>
      %e = tensor.empty() : tensor<4x3xf32>
      %wt = linalg.transpose ins(%w : tensor<3x4xf32>) outs(%e : tensor<4x3xf32>) permutation = [1, 0]
      %o = tensor.empty() : tensor<2x3xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<2x3xf32>) -> tensor<2x3xf32>
      %y = linalg.matmul ins(%x, %wt : tensor<2x4xf32>, tensor<4x3xf32>) outs(%acc : tensor<2x3xf32>) -> tensor<2x3xf32>
      return %y : tensor<2x3xf32>
    }}"""
    flow = flow_of(src)
    assert "linalg.transpose" not in flow
    assert flow.count('"flow.dispatch"(') == 1
    x = normal(2, 4)
    np.testing.assert_allclose(np.asarray(run(src, "f", x)), x @ w.T, rtol=1e-5, atol=1e-5)


def test_batch_matmul_of_broadcast_weights(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<4x8x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x8x32xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4x16x32xf32>
      %bw = linalg.broadcast ins(%w : tensor<16x32xf32>) outs(%e : tensor<4x16x32xf32>) dimensions = [0]
      %o = tensor.empty() : tensor<4x8x32xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
      %y = linalg.batch_matmul ins(%x, %bw : tensor<4x8x16xf32>, tensor<4x16x32xf32>) outs(%acc : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
      return %y : tensor<4x8x32xf32>
    }"""
    flow = flow_of(src)
    assert "linalg.batch_matmul" not in flow and "linalg.broadcast" not in flow
    assert flow.count('"flow.dispatch"(') == 1
    x, w = normal(4, 8, 16), normal(16, 32)
    np.testing.assert_allclose(np.asarray(run(src, "f", x, w)), x @ w, rtol=1e-4, atol=1e-4)


def _recurrence(steps: int) -> str:
    """c[t+1] = c[t] * a + x[t] (elementwise, as an LSTM's cell state), and y[t] = tanh(c[t+1])
    @ w for every step, stacked: each step's matmul reads the cell state's whole history."""
    lines = ["func.func @f(%x: tensor<STEPSx8xf32>, %a: tensor<8xf32>, %w: tensor<8x4xf32>) -> tensor<STEPSx4xf32> {",
             "  %zero = arith.constant 0.0 : f32",
             "  %c0 = arith.constant dense<0.0> : tensor<8xf32>",
             "  %stack0 = tensor.empty() : tensor<STEPSx4xf32>",
             "  %o = tensor.empty() : tensor<1x4xf32>",
             "  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<1x4xf32>) -> tensor<1x4xf32>"]
    for t in range(steps):
        lines += [
            f"  %x{t} = tensor.extract_slice %x[{t}, 0] [1, 8] [1, 1] : tensor<STEPSx8xf32> to tensor<8xf32>",
            f"  %m{t} = arith.mulf %c{t}, %a : tensor<8xf32>",
            f"  %c{t + 1} = arith.addf %m{t}, %x{t} : tensor<8xf32>",
            f"  %h{t} = math.tanh %c{t + 1} : tensor<8xf32>",
            f"  %e{t} = tensor.expand_shape %h{t} [[0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>",
            f"  %y{t} = linalg.matmul ins(%e{t}, %w : tensor<1x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<1x4xf32>) -> tensor<1x4xf32>",
            f"  %stack{t + 1} = tensor.insert_slice %y{t} into %stack{t}[{t}, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<STEPSx4xf32>",
        ]
    lines += [f"  return %stack{steps} : tensor<STEPSx4xf32>", "}"]
    return "\n".join(lines).replace("STEPS", str(steps))


def test_recurrence_steps_are_materialised_once(run: Runner) -> None:
    steps = 24
    src = _recurrence(steps)
    # Recomputing the cell state's history in each step's matmul would take about steps^2 / 2
    # multiplies by a; a step is cloned into a consumer only while its history is short.
    assert flow_of(src).count("arith.mulf") < 4 * steps
    x, a, w = normal(steps, 8), normal(8), normal(8, 4)
    c = np.zeros(8, np.float32)
    expected = []
    for t in range(steps):
        c = c * a + x[t]
        expected.append(np.tanh(c) @ w)
    got = run(src, "f", x, a, w)
    np.testing.assert_allclose(np.asarray(got), np.stack(expected), rtol=1e-4, atol=1e-5)


def test_softmax_through_a_maximum_with_index(run: Runner) -> None:
    """torch's max.dim yields the row maximum and its index; a softmax reads only the maximum, so
    the index is never computed or stored: no i64 tensor is left in the program."""
    src = """
    func.func @f(%x: tensor<3x10xf32>) -> tensor<3x10xf32> {
      %c0 = arith.constant 0 : i64
      %ninf = arith.constant 0xFF800000 : f32
      %zero = arith.constant 0.0 : f32
      %ei = tensor.empty() : tensor<3xi64>
      %fi = linalg.fill ins(%c0 : i64) outs(%ei : tensor<3xi64>) -> tensor<3xi64>
      %ef = tensor.empty() : tensor<3xf32>
      %ff = linalg.fill ins(%ninf : f32) outs(%ef : tensor<3xf32>) -> tensor<3xf32>
      %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<3x10xf32>) outs(%ff, %fi : tensor<3xf32>, tensor<3xi64>) {
      ^bb0(%in: f32, %acc: f32, %idx: i64):
        %i = linalg.index 1 : index
        %ii = arith.index_cast %i : index to i64
        %m = arith.maximumf %in, %acc : f32
        %gt = arith.cmpf ogt, %in, %acc : f32
        %sel = arith.select %gt, %ii, %idx : i64
        linalg.yield %m, %sel : f32, i64
      } -> (tensor<3xf32>, tensor<3xi64>)
      %e = tensor.empty() : tensor<3x10xf32>
      %ex = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %r#0 : tensor<3x10xf32>, tensor<3xf32>) outs(%e : tensor<3x10xf32>) {
      ^bb0(%in: f32, %mx: f32, %out: f32):
        %d = arith.subf %in, %mx : f32
        %v = math.exp %d : f32
        linalg.yield %v : f32
      } -> tensor<3x10xf32>
      %fs = linalg.fill ins(%zero : f32) outs(%ef : tensor<3xf32>) -> tensor<3xf32>
      %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%ex : tensor<3x10xf32>) outs(%fs : tensor<3xf32>) {
      ^bb0(%in: f32, %acc: f32):
        %a = arith.addf %in, %acc : f32
        linalg.yield %a : f32
      } -> tensor<3xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ex, %s : tensor<3x10xf32>, tensor<3xf32>) outs(%e : tensor<3x10xf32>) {
      ^bb0(%in: f32, %sum: f32, %out: f32):
        %q = arith.divf %in, %sum : f32
        linalg.yield %q : f32
      } -> tensor<3x10xf32>
      return %y : tensor<3x10xf32>
    }"""
    assert "i64>" not in flow_of(src)
    x = normal(3, 10)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(np.asarray(run(src, "f", x)), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-6)

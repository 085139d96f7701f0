"""Whole-program rewrites that take per-call work out of exported models, compiled and run on
every host target against numpy: a linear layer's transposed constant weight (evaluated at
compile time: no transpose left to dispatch), a batch_matmul of weights broadcast over the batch
(one matmul, no broadcast copy), a convolution's inference-mode batch norm (folded into its
filter and bias: nothing of it left to compute per element), and a recurrence whose every step is also an output (each step
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


def _dense(a: np.ndarray) -> str:
    if a.ndim == 0:
        return f"{float(a):.9e}"
    return "[" + ", ".join(_dense(x) for x in a) + "]"


_BN_MAPS = """
#v = affine_map<(d0) -> (d0)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
"""


def _batch_norm(name: str, x: str, channels: int, out: str, bn: dict[str, np.ndarray]) -> str:
    """torch-mlir's eval-mode batch norm of `x` (1 x channels x H x W, type `out`)."""
    vec = f"tensor<{channels}xf32>"
    col = f"tensor<{channels}x1x1xf32>"
    lines = [f"  %{name}_{k} = arith.constant dense<{_dense(v)}> : {vec}" for k, v in bn.items()]
    lines.append(f"  %{name}_ev = tensor.empty() : {vec}")
    for i, body in enumerate([
            "%t = arith.truncf %eps : f64 to f32\n    %r = arith.addf %in, %t : f32",
            "%r = math.sqrt %in : f32",
            "%nz = arith.cmpf one, %in, %zero : f32\n    cf.assert %nz, \"zero\"\n"
            "    %r = arith.divf %one, %in : f32"]):
        source = f"%{name}_var" if i == 0 else f"%{name}_s{i - 1}"
        lines.append(f"""  %{name}_s{i} = linalg.generic {{indexing_maps = [#v, #v], iterator_types = ["parallel"]}} ins({source} : {vec}) outs(%{name}_ev : {vec}) {{
  ^bb0(%in: f32, %o: f32):
    {body}
    linalg.yield %r : f32
  }} -> {vec}""")
    for k, v in (("mean", "mean"), ("scale", "s2"), ("gamma", "gamma"), ("beta", "beta")):
        lines.append(f"  %{name}_{k}_c = tensor.expand_shape %{name}_{v} [[0, 1, 2]] "
                     f"output_shape [{channels}, 1, 1] : {vec} into {col}")
    previous = x
    for k, op in (("mean", "subf"), ("scale", "mulf"), ("gamma", "mulf"), ("beta", "addf")):
        lines.append(f"""  %{name}_{k}_y = linalg.generic {{indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins({previous}, %{name}_{k}_c : {out}, {col}) outs(%{name}_e : {out}) {{
  ^bb0(%in: f32, %c: f32, %o: f32):
    %r = arith.{op} %in, %c : f32
    linalg.yield %r : f32
  }} -> {out}""")
        previous = f"%{name}_{k}_y"
    return "\n".join(lines)


def _bn_params(channels: int) -> dict[str, np.ndarray]:
    return {"mean": normal(channels), "var": RNG.uniform(0.25, 2.0, channels).astype(np.float32),
            "gamma": RNG.uniform(0.5, 2.0, channels).astype(np.float32), "beta": normal(channels)}


def _bn_reference(y: np.ndarray, bn: dict[str, np.ndarray]) -> np.ndarray:
    c = (slice(None), None, None)
    return (y - bn["mean"][c]) / np.sqrt(bn["var"][c] + 1e-5) * bn["gamma"][c] + bn["beta"][c]


def test_batch_norm_folded_into_convolutions(run: Runner) -> None:
    """conv 3x3 (with bias) -> batch norm -> ReLU -> depthwise 3x3 -> batch norm, as PyTorch
    exports a CNN block in eval mode."""
    w, bias, dw = normal(4, 3, 3, 3), normal(4), normal(4, 3, 3)
    bn1, bn2 = _bn_params(4), _bn_params(4)
    t1, t2 = "tensor<1x4x6x6xf32>", "tensor<1x4x4x4xf32>"
    src = _BN_MAPS + f"""
func.func @f(%x: tensor<1x3x8x8xf32>) -> {t2} {{
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.000000e-05 : f64
  %w = arith.constant dense<{_dense(w)}> : tensor<4x3x3x3xf32>
  %bias = arith.constant dense<{_dense(bias)}> : tensor<4xf32>
  %dw = arith.constant dense<{_dense(dw)}> : tensor<4x3x3xf32>
  %a_e = tensor.empty() : {t1}
  %a_init = linalg.broadcast ins(%bias : tensor<4xf32>) outs(%a_e : {t1}) dimensions = [0, 2, 3]
  %a = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%a_init : {t1}) -> {t1}
{_batch_norm("a", "%a", 4, t1, bn1)}
  %relu = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%a_beta_y : {t1}) outs(%a_e : {t1}) {{
  ^bb0(%in: f32, %o: f32):
    %p = arith.cmpf ugt, %in, %zero : f32
    %r = arith.select %p, %in, %zero : f32
    linalg.yield %r : f32
  }} -> {t1}
  %b_e = tensor.empty() : {t2}
  %b_init = linalg.fill ins(%zero : f32) outs(%b_e : {t2}) -> {t2}
  %b = linalg.depthwise_conv_2d_nchw_chw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%relu, %dw : {t1}, tensor<4x3x3xf32>) outs(%b_init : {t2}) -> {t2}
{_batch_norm("b", "%b", 4, t2, bn2)}
  return %b_beta_y : {t2}
}}"""
    flow = flow_of(src)
    assert "math.sqrt" not in flow and "arith.subf" not in flow and "cf.assert" not in flow
    assert flow.count('"flow.dispatch"(') == 2
    x = normal(1, 3, 8, 8)
    conv = np.einsum("chwij,fcij->fhw", _windows(x[0], 3), w) + bias[:, None, None]
    a = np.maximum(_bn_reference(conv, bn1), 0)
    depthwise = np.einsum("chwij,cij->chw", _windows(a, 3), dw)
    expected = _bn_reference(depthwise, bn2)[None]
    np.testing.assert_allclose(np.asarray(run(src, "f", x)), expected, rtol=1e-4, atol=1e-4)


def _windows(x: np.ndarray, k: int) -> np.ndarray:
    """C x H x W -> C x H' x W' x k x k: each output pixel's window (stride 1, no padding)."""
    return np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(1, 2))

"""Contractions and reductions with their elementwise consumers fused as an epilogue (one
dispatch), compiled and run on every host target against numpy: matmul + bias + relu + residual
(rows split, columns split, ragged tiles), batch matmul, convolutions in both layouts, depthwise
convolution and pooling, a mean, integer matmul; a consumer that changes the element type is no
epilogue (llvm-cpu finishes tiles in place, in the root's type) and stays a dispatch of its own."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(19)


def dispatches(src: str) -> int:
    flow = weir.compile_to_phase(src, "fused.mlir", weir.CompilerOptions(), "flow")
    return flow.count('"flow.dispatch"(')


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def t(shape: tuple[int, ...], ty: str = "f32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{ty}>"


def matmul_bias_relu_residual(m: int, k: int, n: int) -> str:
    return f"""
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @f(%x: {t((m, k))}, %w: {t((k, n))}, %b: {t((n,))}, %r: {t((m, n))}) -> {t((m, n))} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {t((m, n))}
  %acc = linalg.fill ins(%zero : f32) outs(%e : {t((m, n))}) -> {t((m, n))}
  %mm = linalg.matmul ins(%x, %w : {t((m, k))}, {t((k, n))}) outs(%acc : {t((m, n))}) -> {t((m, n))}
  %bias = linalg.broadcast ins(%b : {t((n,))}) outs(%e : {t((m, n))}) dimensions = [0]
  %pre = arith.addf %mm, %bias : {t((m, n))}
  %h = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%pre : {t((m, n))}) outs(%e : {t((m, n))}) {{
  ^bb0(%in: f32, %o: f32):
    %y = arith.maximumf %in, %zero : f32
    linalg.yield %y : f32
  }} -> {t((m, n))}
  %out = arith.addf %h, %r : {t((m, n))}
  return %out : {t((m, n))}
}}"""


@pytest.mark.parametrize("m, k, n", [(96, 80, 200), (16, 64, 192), (300, 70, 33), (1, 5, 3)])
def test_matmul_bias_relu_residual(run: Runner, m: int, k: int, n: int) -> None:
    src = matmul_bias_relu_residual(m, k, n)
    assert dispatches(src) == 1
    x, w, b, r = normal(m, k), normal(k, n), normal(n), normal(m, n)
    expected = np.maximum(x @ w + b, 0) + r
    np.testing.assert_allclose(np.asarray(run(src, "f", x, w, b, r)), expected, rtol=1e-4,
                               atol=1e-4)


def test_two_layers_with_epilogues(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<64x96xf32>, %w1: tensor<96x128xf32>, %b1: tensor<128xf32>, %w2: tensor<128x10xf32>) -> tensor<64x10xf32> {
      %zero = arith.constant 0.0 : f32
      %zeros = arith.constant dense<0.0> : tensor<64x128xf32>
      %e = tensor.empty() : tensor<64x128xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
      %mm = linalg.matmul ins(%x, %w1 : tensor<64x96xf32>, tensor<96x128xf32>) outs(%acc : tensor<64x128xf32>) -> tensor<64x128xf32>
      %bias = linalg.broadcast ins(%b1 : tensor<128xf32>) outs(%e : tensor<64x128xf32>) dimensions = [0]
      %pre = arith.addf %mm, %bias : tensor<64x128xf32>
      %h = arith.maximumf %pre, %zeros : tensor<64x128xf32>
      %e2 = tensor.empty() : tensor<64x10xf32>
      %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x10xf32>) -> tensor<64x10xf32>
      %mm2 = linalg.matmul ins(%h, %w2 : tensor<64x128xf32>, tensor<128x10xf32>) outs(%acc2 : tensor<64x10xf32>) -> tensor<64x10xf32>
      %y = math.tanh %mm2 : tensor<64x10xf32>
      return %y : tensor<64x10xf32>
    }"""
    assert dispatches(src) == 2
    x, w1, b1, w2 = normal(64, 96), normal(96, 128), normal(128), normal(128, 10)
    expected = np.tanh(np.maximum(x @ w1 + b1, 0) @ w2)
    np.testing.assert_allclose(np.asarray(run(src, "f", x, w1, b1, w2)), expected, rtol=1e-4,
                               atol=1e-4)


def test_batch_matmul_scaled(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<4x16x24xf32>, %b: tensor<4x24x16xf32>) -> tensor<4x16x16xf32> {
      %zero = arith.constant 0.0 : f32
      %scale = arith.constant dense<0.25> : tensor<4x16x16xf32>
      %e = tensor.empty() : tensor<4x16x16xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
      %mm = linalg.batch_matmul ins(%a, %b : tensor<4x16x24xf32>, tensor<4x24x16xf32>) outs(%acc : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
      %y = arith.mulf %mm, %scale : tensor<4x16x16xf32>
      return %y : tensor<4x16x16xf32>
    }"""
    assert dispatches(src) == 1
    a, b = normal(4, 16, 24), normal(4, 24, 16)
    np.testing.assert_allclose(np.asarray(run(src, "f", a, b)), (a @ b) * 0.25, rtol=1e-4,
                               atol=1e-4)


def conv_reference_nchw(x: np.ndarray, f: np.ndarray) -> np.ndarray:
    kh, kw = f.shape[2:]
    oh, ow = x.shape[2] - kh + 1, x.shape[3] - kw + 1
    out = np.zeros((x.shape[0], f.shape[0], oh, ow), np.float32)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,fc->nfhw", x[:, :, i:i + oh, j:j + ow], f[:, :, i, j])
    return out


def test_conv_nchw_bias_relu(run: Runner) -> None:
    src = """
    #c = affine_map<(n, c, h, w) -> (c)>
    #all = affine_map<(n, c, h, w) -> (n, c, h, w)>
    func.func @f(%x: tensor<2x3x10x9xf32>, %f: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<2x8x8x7xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<2x8x8x7xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8x7xf32>) -> tensor<2x8x8x7xf32>
      %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : tensor<2x3x10x9xf32>, tensor<8x3x3x3xf32>) outs(%acc : tensor<2x8x8x7xf32>) -> tensor<2x8x8x7xf32>
      %y = linalg.generic {indexing_maps = [#all, #c, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%conv, %b : tensor<2x8x8x7xf32>, tensor<8xf32>) outs(%e : tensor<2x8x8x7xf32>) {
      ^bb0(%in: f32, %bias: f32, %o: f32):
        %s = arith.addf %in, %bias : f32
        %r = arith.maximumf %s, %zero : f32
        linalg.yield %r : f32
      } -> tensor<2x8x8x7xf32>
      return %y : tensor<2x8x8x7xf32>
    }"""
    assert dispatches(src) == 1
    x, f, b = normal(2, 3, 10, 9), normal(8, 3, 3, 3), normal(8)
    expected = np.maximum(conv_reference_nchw(x, f) + b[None, :, None, None], 0)
    np.testing.assert_allclose(np.asarray(run(src, "f", x, f, b)), expected, rtol=1e-4,
                               atol=1e-4)


def test_conv_nhwc_relu(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<1x12x12x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<1x10x10x16xf32> {
      %zero = arith.constant 0.0 : f32
      %zeros = arith.constant dense<0.0> : tensor<1x10x10x16xf32>
      %e = tensor.empty() : tensor<1x10x10x16xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x10x10x16xf32>) -> tensor<1x10x10x16xf32>
      %conv = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x12x12x8xf32>, tensor<3x3x8x16xf32>) outs(%acc : tensor<1x10x10x16xf32>) -> tensor<1x10x10x16xf32>
      %y = arith.maximumf %conv, %zeros : tensor<1x10x10x16xf32>
      return %y : tensor<1x10x10x16xf32>
    }"""
    assert dispatches(src) == 1
    x, w = normal(1, 12, 12, 8), normal(3, 3, 8, 16)
    nchw = conv_reference_nchw(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1))
    expected = np.maximum(nchw.transpose(0, 2, 3, 1), 0)
    np.testing.assert_allclose(np.asarray(run(src, "f", x, w)), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows, width, chans, feats", [
    (70, 64, 32, 64), (3, 64, 32, 64), (150, 4, 544, 520)])
def test_pointwise_nhwc_in_chunks(run: Runner, rows: int, width: int, chans: int,
                                  feats: int) -> None:
    """A 1 x 1 NHWC convolution with a bias, a ReLU6 epilogue and an input expression (a
    scaling): llvm-cpu runs its rows in chunks of about 256 KiB of output (16 rows of 64 x 64
    here, a partial one last, within each workgroup's rows), product and epilogue per chunk. A
    filter too large for L2 (544 x 520) makes chunks of at least as many pixels as channels
    (136 rows of 4, then a partial one)."""
    x, w, bias = (1, rows, width, chans), (1, 1, chans, feats), (feats,)
    out = (1, rows, width, feats)
    src = f"""
    #id = affine_map<(n, h, w, c) -> (n, h, w, c)>
    func.func @f(%x: {t(x)}, %w: {t(w)}, %b: {t(bias)}) -> {t(out)} {{
      %zero = arith.constant 0.0 : f32
      %six = arith.constant 6.0 : f32
      %half = arith.constant 0.5 : f32
      %ex = tensor.empty() : {t(x)}
      %xs = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
          ins(%x : {t(x)}) outs(%ex : {t(x)}) {{
      ^bb0(%in: f32, %o: f32):
        %y = arith.mulf %in, %half : f32
        linalg.yield %y : f32
      }} -> {t(x)}
      %e = tensor.empty() : {t(out)}
      %init = linalg.broadcast ins(%b : {t(bias)}) outs(%e : {t(out)}) dimensions = [0, 1, 2]
      %conv = linalg.conv_2d_nhwc_hwcf ins(%xs, %w : {t(x)}, {t(w)}) outs(%init : {t(out)}) -> {t(out)}
      %y = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
          ins(%conv : {t(out)}) outs(%e : {t(out)}) {{
      ^bb0(%in: f32, %o: f32):
        %lo = arith.maximumf %in, %zero : f32
        %hi = arith.minimumf %lo, %six : f32
        linalg.yield %hi : f32
      }} -> {t(out)}
      return %y : {t(out)}
    }}"""
    assert dispatches(src) == 1
    xv, wv, bv = normal(*x) * 4, normal(*w), normal(*bias)
    expected = np.clip(np.einsum("nhwc,cf->nhwf", xv * np.float32(0.5), wv[0, 0]) + bv, 0, 6)
    np.testing.assert_allclose(np.asarray(run(src, "f", xv, wv, bv)), expected, rtol=1e-4,
                               atol=1e-4)


def test_max_pool_negated(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
      %ninf = arith.constant 0xFF800000 : f32
      %init = tensor.empty() : tensor<1x4x4x4xf32>
      %acc = linalg.fill ins(%ninf : f32) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
      %win = tensor.empty() : tensor<2x2xf32>
      %0 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x4x8x8xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
      %1 = arith.negf %0 : tensor<1x4x4x4xf32>
      return %1 : tensor<1x4x4x4xf32>
    }"""
    assert dispatches(src) == 1
    x = normal(1, 4, 8, 8)
    expected = -x.reshape(1, 4, 4, 2, 4, 2).max(axis=(3, 5))
    np.testing.assert_allclose(np.asarray(run(src, "f", x)), expected, rtol=1e-6)


def test_row_mean(run: Runner) -> None:
    src = """
    #id = affine_map<(d0, d1) -> (d0, d1)>
    #row = affine_map<(d0, d1) -> (d0)>
    func.func @f(%x: tensor<300x64xf32>) -> tensor<300xf32> {
      %zero = arith.constant 0.0 : f32
      %n = arith.constant dense<64.0> : tensor<300xf32>
      %e = tensor.empty() : tensor<300xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<300xf32>) -> tensor<300xf32>
      %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<300x64xf32>) outs(%acc : tensor<300xf32>) {
      ^bb0(%in: f32, %a: f32):
        %s = arith.addf %in, %a : f32
        linalg.yield %s : f32
      } -> tensor<300xf32>
      %mean = arith.divf %sum, %n : tensor<300xf32>
      return %mean : tensor<300xf32>
    }"""
    assert dispatches(src) == 1
    x = normal(300, 64)
    np.testing.assert_allclose(np.asarray(run(src, "f", x)), x.mean(axis=1), rtol=1e-5,
                               atol=1e-6)


def test_integer_matmul_with_offset(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<40x24xi8>, %b: tensor<24x72xi8>, %c: tensor<40x72xi32>) -> tensor<40x72xi32> {
      %zero = arith.constant 0 : i32
      %e = tensor.empty() : tensor<40x72xi32>
      %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<40x72xi32>) -> tensor<40x72xi32>
      %mm = linalg.matmul ins(%a, %b : tensor<40x24xi8>, tensor<24x72xi8>) outs(%acc : tensor<40x72xi32>) -> tensor<40x72xi32>
      %y = arith.subi %mm, %c : tensor<40x72xi32>
      return %y : tensor<40x72xi32>
    }"""
    assert dispatches(src) == 1
    a = RNG.integers(-20, 20, (40, 24)).astype(np.int8)
    b = RNG.integers(-20, 20, (24, 72)).astype(np.int8)
    c = RNG.integers(-100, 100, (40, 72)).astype(np.int32)
    expected = a.astype(np.int32) @ b.astype(np.int32) - c
    np.testing.assert_array_equal(np.asarray(run(src, "f", a, b, c)), expected)


def test_consumer_changing_the_element_type_is_no_epilogue(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<64x32xf32>, %w: tensor<32x48xf32>) -> tensor<64x48xf16> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<64x48xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
      %mm = linalg.matmul ins(%x, %w : tensor<64x32xf32>, tensor<32x48xf32>) outs(%acc : tensor<64x48xf32>) -> tensor<64x48xf32>
      %y = arith.truncf %mm : tensor<64x48xf32> to tensor<64x48xf16>
      return %y : tensor<64x48xf16>
    }"""
    assert dispatches(src) == 2
    x, w = normal(64, 32), normal(32, 48)
    got = np.asarray(run(src, "f", x, w))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), x @ w, rtol=2e-3, atol=2e-3)


SOFTMAX_GENERICS = """
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%x: tensor<70x100xf32>) -> tensor<70x100xf32> {
  %lowest = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<70xf32>
  %full = tensor.empty() : tensor<70x100xf32>
  %max_init = linalg.fill ins(%lowest : f32) outs(%rows : tensor<70xf32>) -> tensor<70xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<70x100xf32>) outs(%max_init : tensor<70xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<70xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<70x100xf32>, tensor<70xf32>) outs(%full : tensor<70x100xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %s = arith.subf %in, %m : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  } -> tensor<70x100xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%rows : tensor<70xf32>) -> tensor<70xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<70x100xf32>) outs(%sum_init : tensor<70xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<70xf32>
  %0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<70x100xf32>, tensor<70xf32>) outs(%full : tensor<70x100xf32>) {
  ^bb0(%e: f32, %s: f32, %out: f32):
    %d = arith.divf %e, %s : f32
    linalg.yield %d : f32
  } -> tensor<70x100xf32>
  return %0 : tensor<70x100xf32>
}"""

SOFTMAX_BROADCASTS = """
func.func @f(%x: tensor<70x100xf32>) -> tensor<70x100xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<70xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<70xf32>) -> tensor<70xf32>
  %max = linalg.reduce ins(%x : tensor<70x100xf32>) outs(%mi : tensor<70xf32>) dimensions = [1]
    (%a: f32, %m: f32) {
      %y = arith.maximumf %a, %m : f32
      linalg.yield %y : f32
    }
  %e1 = tensor.empty() : tensor<70x100xf32>
  %maxb = linalg.broadcast ins(%max : tensor<70xf32>) outs(%e1 : tensor<70x100xf32>) dimensions = [1]
  %d = arith.subf %x, %maxb : tensor<70x100xf32>
  %ex = math.exp %d : tensor<70x100xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e0 : tensor<70xf32>) -> tensor<70xf32>
  %sum = linalg.reduce ins(%ex : tensor<70x100xf32>) outs(%si : tensor<70xf32>) dimensions = [1]
    (%a: f32, %s: f32) {
      %y = arith.addf %a, %s : f32
      linalg.yield %y : f32
    }
  %sumb = linalg.broadcast ins(%sum : tensor<70xf32>) outs(%e1 : tensor<70x100xf32>) dimensions = [1]
  %r = arith.divf %ex, %sumb : tensor<70x100xf32>
  return %r : tensor<70x100xf32>
}"""


@pytest.mark.parametrize("src", [SOFTMAX_GENERICS, SOFTMAX_BROADCASTS],
                         ids=["generics", "broadcasts"])
def test_softmax_is_one_dispatch(run: Runner, src: str) -> None:
    """The maximum with the exponentials it feeds, the sum with the division: two epilogue
    regions over the same rows, which fuse-row-reductions joins."""
    assert dispatches(src) == 1
    x = normal(70, 100) * 4
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(np.asarray(run(src, "f", x)), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-7)


def test_row_sum_over_a_kept_unit_dimension(run: Runner) -> None:
    """PyTorch's keepdim form: the sum is 2x3x5x1, read back through a constant-0 index."""
    src = """
    #in = affine_map<(a, b, c, d) -> (a, b, c, d)>
    #kept = affine_map<(a, b, c, d) -> (a, b, c, 0)>
    func.func @f(%x: tensor<2x3x5x16xf32>) -> tensor<2x3x5x16xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<2x3x5x1xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x5x1xf32>) -> tensor<2x3x5x1xf32>
      %sum = linalg.generic {indexing_maps = [#in, #kept], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
          ins(%x : tensor<2x3x5x16xf32>) outs(%acc : tensor<2x3x5x1xf32>) {
      ^bb0(%in: f32, %a: f32):
        %s = arith.addf %in, %a : f32
        linalg.yield %s : f32
      } -> tensor<2x3x5x1xf32>
      %full = tensor.empty() : tensor<2x3x5x16xf32>
      %y = linalg.generic {indexing_maps = [#in, #kept, #in], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%x, %sum : tensor<2x3x5x16xf32>, tensor<2x3x5x1xf32>) outs(%full : tensor<2x3x5x16xf32>) {
      ^bb0(%in: f32, %s: f32, %o: f32):
        %d = arith.divf %in, %s : f32
        linalg.yield %d : f32
      } -> tensor<2x3x5x16xf32>
      return %y : tensor<2x3x5x16xf32>
    }"""
    assert dispatches(src) == 1
    x = np.abs(normal(2, 3, 5, 16)) + 0.1
    np.testing.assert_allclose(np.asarray(run(src, "f", x)), x / x.sum(axis=3, keepdims=True),
                               rtol=1e-5)


def test_transposed_row_epilogue(run: Runner) -> None:
    """A reduction's result broadcast along rows then read transposed: the epilogue of each
    reduced element is a column of the result."""
    src = """
    func.func @f(%x: tensor<40x24xf32>) -> tensor<24x40xf32> {
      %zero = arith.constant 0.0 : f32
      %e0 = tensor.empty() : tensor<40xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<40xf32>) -> tensor<40xf32>
      %sum = linalg.reduce ins(%x : tensor<40x24xf32>) outs(%acc : tensor<40xf32>) dimensions = [1]
        (%a: f32, %s: f32) {
          %y = arith.addf %a, %s : f32
          linalg.yield %y : f32
        }
      %e1 = tensor.empty() : tensor<24x40xf32>
      %b = linalg.broadcast ins(%sum : tensor<40xf32>) outs(%e1 : tensor<24x40xf32>) dimensions = [0]
      %t = linalg.transpose ins(%x : tensor<40x24xf32>) outs(%e1 : tensor<24x40xf32>) permutation = [1, 0]
      %r = arith.subf %t, %b : tensor<24x40xf32>
      return %r : tensor<24x40xf32>
    }"""
    assert dispatches(src) == 1
    x = normal(40, 24)
    np.testing.assert_allclose(np.asarray(run(src, "f", x)), (x - x.sum(axis=1, keepdims=True)).T,
                               rtol=1e-5, atol=1e-5)

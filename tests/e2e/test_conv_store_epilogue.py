"""An elementwise epilogue of a convolution (epilogue.vector_epilogue: ReLU as torch-mlir writes
it, as maximumf, ReLU6 in one generic or as torch-mlir's two generics with 0-d constants, a
scale and shift, a residual add) is applied as the kernel stores its sums for the last time,
with no pass of its own. The direct kernel: on windows summed in one chunk, in chunks of window
rows and a tap at a time, with a bias starting the sums or a zero fill. The GEMM of a 1 x 1
convolution (its `_e<key>` entry point): on sums of one depth block and of several, full and
partial panels of channels, ragged rows, started from a bias, zero or a filled init. The NHWC
depthwise kernel too. NaN handled as the scalar epilogue handles it. On llvm-cpu's host CPU and
the generic x86-64 one, both drivers, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import dense_f32
from numpy.lib.stride_tricks import sliding_window_view

import weir.api as weir
from weir.compiler.targets.llvm_cpu import conv_tiles, pointwise_conv

RNG = np.random.default_rng(29)

# Body of the epilogue generic (%in: the convolution's element), and what it computes.
EPILOGUES = {
    "torch-relu": ("""%zero = arith.constant 0.0 : f32
        %gt = arith.cmpf ugt, %in, %zero : f32
        %r = arith.select %gt, %in, %zero : f32""",
                   lambda a: np.where(np.isnan(a) | (a > 0), a, 0.0)),
    "maximumf": ("""%zero = arith.constant 0.0 : f32
        %r = arith.maximumf %in, %zero : f32""", lambda a: np.maximum(a, 0.0)),
    "relu6": ("""%zero = arith.constant 0.0 : f32
        %six = arith.constant 6.0 : f32
        %m = arith.maximumf %in, %zero : f32
        %r = arith.minimumf %m, %six : f32""", lambda a: np.minimum(np.maximum(a, 0.0), 6.0)),
    "scale-shift": ("""%half = arith.constant 0.5 : f32
        %shift = arith.constant -0.25 : f32
        %m = arith.mulf %in, %half : f32
        %r = arith.addf %m, %shift : f32""", lambda a: a * 0.5 - 0.25),
}


def _program(xs: tuple[int, ...], khw: int, f: int, stride: int, body: str, bias: bool,
             w: np.ndarray, b: np.ndarray, residual: bool = False,
             fill: float = 0.0) -> tuple[str, tuple[int, ...]]:
    """Without a bias the sums start from a fill with `fill`."""
    n, h, wd, c = xs
    oh, ow = (h - khw) // stride + 1, (wd - khw) // stride + 1
    t = lambda *s: f"tensor<{'x'.join(map(str, s))}xf32>"  # noqa: E731
    os = (n, oh, ow, f)
    init = (f"%init = linalg.broadcast ins(%b : {t(f)}) outs(%e : {t(*os)}) dimensions = [0, 1, 2]"
            if bias else
            f"%z = arith.constant {fill!r} : f32\n      %init = linalg.fill ins(%z : f32) outs(%e : {t(*os)}) -> {t(*os)}")
    extra_in, extra_arg, extra_map, extra_block = "", "", "", ""
    if residual:
        extra_in, extra_arg = f", %skip: {t(*os)}", ", %skip"
        extra_map = ", affine_map<(a, b, c, d) -> (a, b, c, d)>"
        extra_block = ", %s: f32"
        body = body.replace("%in", "%sum")
        body = "%sum = arith.addf %in, %s : f32\n        " + body
    ins = f"%cv{extra_arg} : {t(*os)}" + (f", {t(*os)}" if residual else "")
    return f"""
    func.func @f(%x: {t(*xs)}{extra_in}) -> {t(*os)} {{
      %w = arith.constant {dense_f32(w)} : {t(khw, khw, c, f)}
      %b = arith.constant {dense_f32(b)} : {t(f)}
      %e = tensor.empty() : {t(*os)}
      {init}
      %cv = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}}
          ins(%x, %w : {t(*xs)}, {t(khw, khw, c, f)}) outs(%init : {t(*os)}) -> {t(*os)}
      %r = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>{extra_map}, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins({ins}) outs(%e : {t(*os)}) {{
      ^bb0(%in: f32{extra_block}, %o: f32):
        {body}
        linalg.yield %r : f32
      }} -> {t(*os)}
      return %r : {t(*os)}
    }}""", os


def _conv(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    k = w.shape[0]
    views = sliding_window_view(x.astype(np.float64), (k, k), axis=(1, 2))[:, ::stride, ::stride]
    return np.einsum("nhwcij,ijcf->nhwf", views, w.astype(np.float64))


SHAPES = [  # input (N, H, W, C), window, F, stride
    ((2, 9, 35, 3), 3, 40, 2),     # a stem: the window in one chunk
    ((1, 7, 16, 200), 3, 20, 1),   # chunks of window rows (AVX-512)
    ((1, 12, 12, 600), 3, 8, 1),   # a tap a chunk
]
SHAPE_IDS = ["stem", "row-chunks", "tap-chunks"]


def _compile(src: str, cpu: str, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, int]:
    """The module, and how many of the direct kernel's stores, and calls of the GEMM, applied
    the epilogue."""
    applied: list[object] = []
    real = conv_tiles.apply_epilogue
    monkeypatch.setattr(conv_tiles, "apply_epilogue",
                        lambda *a: applied.append(a) or real(*a))
    gemm = pointwise_conv.call_gemm_epilogue
    monkeypatch.setattr(pointwise_conv, "call_gemm_epilogue",
                        lambda *a: applied.append(a) or gemm(*a))
    module = weir.compile_string(src, "epi.mlir", weir.CompilerOptions(
        target_backends=("llvm-cpu",), llvmcpu_target_cpu=cpu))
    return module, len(applied)


@pytest.mark.parametrize("cpu", ["host", "x86-64"])
@pytest.mark.parametrize("epilogue", list(EPILOGUES))
@pytest.mark.parametrize("xs, khw, f, stride", SHAPES, ids=SHAPE_IDS)
def test_epilogue_applied_at_the_last_store(cpu: str, epilogue: str, xs: tuple[int, ...],
                                            khw: int, f: int, stride: int,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    body, numpy_form = EPILOGUES[epilogue]
    bias = epilogue != "scale-shift"
    w = (RNG.standard_normal((khw, khw, xs[3], f)) / np.sqrt(khw * khw * xs[3])).astype(np.float32)
    b = RNG.standard_normal(f).astype(np.float32) * 3.0  # past 6 and below 0
    src, _ = _program(xs, khw, f, stride, body, bias, w, b)
    module, applied = _compile(src, cpu, monkeypatch)
    assert applied > 0
    x = RNG.standard_normal(xs).astype(np.float32) * 3.0
    x[0, 0, 0, 0] = np.nan  # the outputs whose window holds it are NaN before the epilogue
    expected = numpy_form(_conv(x, w, stride) + (b if bias else 0.0))
    assert np.isnan(expected).any()
    for driver in ("local-sync", "local-task"):
        got = np.asarray(weir.load([module], device=driver).lookup_function("f")(x))
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)


@pytest.mark.parametrize("xs, khw, f, stride", SHAPES, ids=SHAPE_IDS)
def test_a_residual_add_applied_at_the_last_store(xs: tuple[int, ...], khw: int, f: int,
                                                  stride: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The residual's elements are read where the output's lie, at the last chunk's store only
    (stored at an earlier chunk, a partial sum would gain it)."""
    w = (RNG.standard_normal((khw, khw, xs[3], f)) / np.sqrt(khw * khw * xs[3])).astype(np.float32)
    b = RNG.standard_normal(f).astype(np.float32)
    src, os = _program(xs, khw, f, stride, EPILOGUES["maximumf"][0], True, w, b, residual=True)
    module, applied = _compile(src, "host", monkeypatch)
    assert applied > 0
    x = RNG.standard_normal(xs).astype(np.float32)
    skip = RNG.standard_normal(os).astype(np.float32)
    skip[0, 0, 0, :3] = (np.nan, -np.inf, np.inf)
    expected = np.maximum(_conv(x, w, stride) + b + skip, 0.0)
    for driver in ("local-sync", "local-task"):
        got = np.asarray(weir.load([module], device=driver).lookup_function("f")(x, skip))
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)


POINTWISE = [  # input (N, H, W, C), F
    ((2, 5, 7, 16), 40),   # one depth block, ragged rows, a partial panel of channels
    ((1, 6, 6, 600), 32),  # three depth blocks: the program at the last one's store only
]
POINTWISE_IDS = ["one-block", "three-blocks"]


@pytest.mark.parametrize("cpu", ["host", "x86-64"])
@pytest.mark.parametrize("epilogue", [*EPILOGUES, "residual"])
@pytest.mark.parametrize("start", ["bias", "zero", "fill"])
@pytest.mark.parametrize("xs, f", POINTWISE, ids=POINTWISE_IDS)
def test_pointwise_epilogue_stored_by_the_gemm(cpu: str, epilogue: str, start: str,
                                               xs: tuple[int, ...], f: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    residual = epilogue == "residual"
    body, numpy_form = EPILOGUES["torch-relu" if residual else epilogue]
    w = (RNG.standard_normal((1, 1, xs[3], f)) / np.sqrt(xs[3])).astype(np.float32)
    b = RNG.standard_normal(f).astype(np.float32) * 3.0
    fill = 0.75 if start == "fill" else 0.0
    src, os = _program(xs, 1, f, 1, body, start == "bias", w, b, residual, fill)
    module, applied = _compile(src, cpu, monkeypatch)
    assert applied > 0
    x = RNG.standard_normal(xs).astype(np.float32) * 3.0
    x[0, 1, 2, 0] = np.nan
    args = [x]
    total = _conv(x, w, 1) + (b if start == "bias" else fill)
    if residual:
        skip = RNG.standard_normal(os).astype(np.float32) * 3.0
        args.append(skip)
        total = total + skip
    expected = numpy_form(total)
    assert np.isnan(expected).any()
    for driver in ("local-sync", "local-task"):
        got = np.asarray(weir.load([module], device=driver).lookup_function("f")(*args))
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)


def _relu6_chain(conv: str, os: tuple[int, ...]) -> str:
    """ReLU6 as torch-mlir exports it: two generics, each comparing with a 0-d constant."""
    t = f"tensor<{'x'.join(map(str, os))}xf32>"
    ident = "affine_map<(a, b, c, d) -> (a, b, c, d)>"
    scalar = "affine_map<(a, b, c, d) -> ()>"
    par = '["parallel", "parallel", "parallel", "parallel"]'
    return f"""
      %z0 = tensor.empty() : tensor<f32>
      %zero = arith.constant 0.0 : f32
      %lo = linalg.fill ins(%zero : f32) outs(%z0 : tensor<f32>) -> tensor<f32>
      %s0 = tensor.empty() : tensor<f32>
      %six = arith.constant 6.0 : f32
      %hi = linalg.fill ins(%six : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
      %e1 = tensor.empty() : {t}
      %g1 = linalg.generic {{indexing_maps = [{ident}, {scalar}, {ident}], iterator_types = {par}}} ins({conv}, %lo : {t}, tensor<f32>) outs(%e1 : {t}) {{
      ^bb0(%in: f32, %l: f32, %o: f32):
        %gt = arith.cmpf ogt, %in, %l : f32
        %r = arith.select %gt, %in, %l : f32
        linalg.yield %r : f32
      }} -> {t}
      %e2 = tensor.empty() : {t}
      %g2 = linalg.generic {{indexing_maps = [{scalar}, {ident}, {ident}], iterator_types = {par}}} ins(%hi, %g1 : tensor<f32>, {t}) outs(%e2 : {t}) {{
      ^bb0(%h: f32, %in: f32, %o: f32):
        %lt = arith.cmpf olt, %h, %in : f32
        %r = arith.select %lt, %h, %in : f32
        linalg.yield %r : f32
      }} -> {t}
      return %g2 : {t}"""


def _torch_relu6(a: np.ndarray) -> np.ndarray:
    low = np.where(a > 0, a, 0.0)  # ogt: NaN gives 0
    return np.where(6.0 < low, 6.0, low)


@pytest.mark.parametrize("kind", ["direct", "depthwise"])
def test_relu6_as_two_generics_with_scalar_constants(kind: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The direct kernel and the NHWC depthwise kernel both apply it as they store."""
    from weir.compiler.targets.llvm_cpu import depthwise
    xs, c = (1, 14, 30, 24), 24
    ws = (3, 3, c, 32) if kind == "direct" else (3, 3, c)
    os = (1, 12, 28, 32 if kind == "direct" else c)
    w = RNG.standard_normal(ws).astype(np.float32)
    b = RNG.standard_normal(os[-1]).astype(np.float32) * 3.0
    t = lambda s: f"tensor<{'x'.join(map(str, s))}xf32>"  # noqa: E731
    op = "linalg.conv_2d_nhwc_hwcf" if kind == "direct" else "linalg.depthwise_conv_2d_nhwc_hwc"
    src = f"""
    func.func @f(%x: {t(xs)}) -> {t(os)} {{
      %w = arith.constant {dense_f32(w)} : {t(ws)}
      %b = arith.constant {dense_f32(b)} : {t(os[-1:])}
      %e = tensor.empty() : {t(os)}
      %init = linalg.broadcast ins(%b : {t(os[-1:])}) outs(%e : {t(os)}) dimensions = [0, 1, 2]
      %cv = {op} {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
          ins(%x, %w : {t(xs)}, {t(ws)}) outs(%init : {t(os)}) -> {t(os)}
      {_relu6_chain("%cv", os)}
    }}"""
    applied: list[object] = []
    module_of = conv_tiles if kind == "direct" else depthwise
    real = module_of.apply_epilogue
    monkeypatch.setattr(module_of, "apply_epilogue", lambda *a: applied.append(a) or real(*a))
    module = weir.compile_string(src, "relu6.mlir", weir.CompilerOptions(
        target_backends=("llvm-cpu",)))
    assert applied
    x = RNG.standard_normal(xs).astype(np.float32) * 3.0
    x[0, 5, 5, 0] = np.nan
    views = sliding_window_view(x.astype(np.float64), (3, 3), axis=(1, 2))
    conv = np.einsum("nhwcij,ijcf->nhwf", views, w) if kind == "direct" else \
        np.einsum("nhwcij,ijc->nhwc", views, w)
    expected = _torch_relu6(conv + b)
    for driver in ("local-sync", "local-task"):
        got = np.asarray(weir.load([module], device=driver).lookup_function("f")(x))
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)


def test_depthwise_residual_add_applied_at_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """24 channels: a vector of 16 and 8 one at a time, each reading the residual where it
    stores."""
    from weir.compiler.targets.llvm_cpu import depthwise
    xs, c = (2, 9, 11, 24), 24
    os = (2, 7, 9, c)
    w = RNG.standard_normal((3, 3, c)).astype(np.float32)
    b = RNG.standard_normal(c).astype(np.float32)
    t = lambda s: f"tensor<{'x'.join(map(str, s))}xf32>"  # noqa: E731
    ident = "affine_map<(a, b, c, d) -> (a, b, c, d)>"
    src = f"""
    func.func @f(%x: {t(xs)}, %skip: {t(os)}) -> {t(os)} {{
      %w = arith.constant {dense_f32(w)} : {t((3, 3, c))}
      %b = arith.constant {dense_f32(b)} : {t((c,))}
      %e = tensor.empty() : {t(os)}
      %init = linalg.broadcast ins(%b : {t((c,))}) outs(%e : {t(os)}) dimensions = [0, 1, 2]
      %cv = linalg.depthwise_conv_2d_nhwc_hwc {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
          ins(%x, %w : {t(xs)}, {t((3, 3, c))}) outs(%init : {t(os)}) -> {t(os)}
      %r = linalg.generic {{indexing_maps = [{ident}, {ident}, {ident}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%cv, %skip : {t(os)}, {t(os)}) outs(%e : {t(os)}) {{
      ^bb0(%in: f32, %s: f32, %o: f32):
        %sum = arith.addf %in, %s : f32
        %zero = arith.constant 0.0 : f32
        %r = arith.maximumf %sum, %zero : f32
        linalg.yield %r : f32
      }} -> {t(os)}
      return %r : {t(os)}
    }}"""
    applied: list[object] = []
    real = depthwise.apply_epilogue
    monkeypatch.setattr(depthwise, "apply_epilogue", lambda *a: applied.append(a) or real(*a))
    module = weir.compile_string(src, "dw.mlir", weir.CompilerOptions(
        target_backends=("llvm-cpu",)))
    assert applied
    x = RNG.standard_normal(xs).astype(np.float32)
    skip = RNG.standard_normal(os).astype(np.float32)
    views = sliding_window_view(x.astype(np.float64), (3, 3), axis=(1, 2))
    expected = np.maximum(np.einsum("nhwcij,ijc->nhwc", views, w) + b + skip, 0.0)
    for driver in ("local-sync", "local-task"):
        got = np.asarray(weir.load([module], device=driver).lookup_function("f")(x, skip))
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)

"""The llvm-cpu direct convolution microkernel (static f32 convolutions) at its edges, on every
host target (the `run` fixture), against numpy: output widths that are not a multiple of the
register tile's pixels (which divide a row where they can: conv_blocking.tile_pixels), tiles
inside one output row and tiles across rows and images, AVX-512's wide tiles (6 pixels x 64
channels: conv_blocking.wide_tiles), channel
counts that are not a multiple of the vector width (filter blocks with a partial last block),
input channels deep enough to split the window into several chunks of taps, strides,
dilations, 1x1 filters, the exporters' padding (tensor.pad, of any constant), the exporters'
NCHW/FCHW layout (output rows written 8 x 8 at a time, with their edges), an init that is
accumulated into, a producer fused into the input, and the narrower vectors of the generic
x86-64 CPU."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import weir.api as weir
from conftest import dense_f32

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
Pair = tuple[int, int]
RNG = np.random.default_rng(5)
WIDE_RNG = np.random.default_rng(6)  # its own: the other cases keep their draws


def tensor(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def out_size(size: int, k: int, stride: int, dilation: int) -> int:
    return (size - dilation * (k - 1) - 1) // stride + 1


def reference(x: np.ndarray, w: np.ndarray, init: np.ndarray, strides: Pair,
              dilations: Pair) -> np.ndarray:
    """NHWC input, HWCF filter, computed in f64."""
    span = tuple(d * (k - 1) + 1 for k, d in zip(w.shape[:2], dilations))
    views = sliding_window_view(x.astype(np.float64), span, axis=(1, 2))
    patches = views[:, ::strides[0], ::strides[1], :, ::dilations[0], ::dilations[1]]
    return init + np.einsum("nhwcij,ijcf->nhwf", patches, w.astype(np.float64))


def attrs(strides: Pair, dilations: Pair) -> str:
    return (f"{{dilations = dense<[{dilations[0]}, {dilations[1]}]> : tensor<2xi64>, "
            f"strides = dense<[{strides[0]}, {strides[1]}]> : tensor<2xi64>}}")


def nhwc_program(xs: tuple[int, ...], ws: tuple[int, ...], os: tuple[int, ...], strides: Pair,
                 dilations: Pair) -> str:
    """@f(%x, %w, %init): init + the convolution (the destination accumulated into)."""
    return f"""
    func.func @f(%x: {tensor(xs)}, %w: {tensor(ws)}, %init: {tensor(os)}) -> {tensor(os)} {{
      %0 = linalg.conv_2d_nhwc_hwcf {attrs(strides, dilations)} ins(%x, %w : {tensor(xs)}, {tensor(ws)}) outs(%init : {tensor(os)}) -> {tensor(os)}
      return %0 : {tensor(os)}
    }}"""


def padded_nchw_program(xs: tuple[int, ...], ws: tuple[int, ...], low: Pair, high: Pair,
                        strides: Pair, value: float = 0.0,
                        w: np.ndarray | None = None) -> tuple[str, tuple[int, ...]]:
    """What torch and ONNX exporters write: @f(%x[, %w]), a tensor.pad of the NCHW image %x by
    `low` (top, left) and `high` (bottom, right) with `value`, conv_2d_nchw_fchw of the FCHW
    filter (an argument, or the constant `w`) into a zero fill. Returns the program and its
    output shape."""
    ps = (*xs[:2], xs[2] + low[0] + high[0], xs[3] + low[1] + high[1])
    os = (xs[0], ws[0], *(out_size(d, k, s, 1) for d, k, s in zip(ps[2:], ws[2:], strides)))
    filter_arg = "" if w is not None else f", %w: {tensor(ws)}"
    filter_def = "" if w is None else f"%w = arith.constant {dense_f32(w)} : {tensor(ws)}"
    src = f"""
    func.func @f(%x: {tensor(xs)}{filter_arg}) -> {tensor(os)} {{
      {filter_def}
      %zero = arith.constant 0.0 : f32
      %pad = arith.constant {value} : f32
      %p = tensor.pad %x low[0, 0, {low[0]}, {low[1]}] high[0, 0, {high[0]}, {high[1]}] {{
      ^bb0(%a: index, %b: index, %c: index, %d: index):
        tensor.yield %pad : f32
      }} : {tensor(xs)} to {tensor(ps)}
      %e = tensor.empty() : {tensor(os)}
      %init = linalg.fill ins(%zero : f32) outs(%e : {tensor(os)}) -> {tensor(os)}
      %0 = linalg.conv_2d_nchw_fchw {attrs(strides, (1, 1))} ins(%p, %w : {tensor(ps)}, {tensor(ws)}) outs(%init : {tensor(os)}) -> {tensor(os)}
      return %0 : {tensor(os)}
    }}"""
    return src, os


def padded_nchw_reference(x: np.ndarray, w: np.ndarray, low: Pair, high: Pair,
                          strides: Pair, value: float = 0.0) -> np.ndarray:
    """`padded_nchw_program`'s result, in NCHW."""
    padded = np.pad(x, ((0, 0), (0, 0), (low[0], high[0]), (low[1], high[1])),
                    constant_values=value)
    out = reference(padded.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), np.zeros(1),
                    strides, (1, 1))
    return out.transpose(0, 3, 1, 2)


def check(got: object, expected: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.shape == expected.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)


CASES = [  # n, (h, w), c, (kh, kw), f, strides, dilations
    (1, (9, 15), 8, (3, 3), 16, (1, 1), (1, 1)),    # width 13: one tile (AVX-512), 6 + 6 + 1
    (2, (9, 9), 16, (3, 3), 40, (1, 1), (1, 1)),    # width 7: a tile a row (AVX-512), or across
    (2, (8, 9), 3, (3, 3), 5, (1, 1), (1, 1)),      # F below one vector, C odd
    (1, (7, 12), 5, (3, 2), 27, (1, 1), (1, 1)),    # one whole block, a partial one of 2 vectors
    (1, (6, 10), 7, (2, 3), 40, (1, 1), (1, 1)),    # two whole blocks, a partial one of 1 vector
    (2, (11, 13), 4, (3, 3), 9, (2, 2), (1, 1)),    # stride 2
    (1, (12, 14), 6, (3, 3), 12, (1, 1), (2, 2)),   # dilation 2
    (1, (13, 12), 3, (3, 2), 10, (2, 1), (1, 2)),   # mixed strides and dilations
    (1, (7, 9), 24, (1, 1), 33, (1, 1), (1, 1)),    # 1x1 (the GEMM path from F = NR)
    (1, (7, 13), 40, (1, 1), 16, (1, 1), (1, 1)),   # 1x1 narrower than NR: the direct kernel
    (1, (6, 8), 17, (1, 1), 8, (2, 3), (1, 1)),     # 1x1 with strides
    (1, (7, 16), 200, (3, 3), 20, (1, 1), (1, 1)),  # AVX-512: chunks of 2 window rows and of 1
    (1, (12, 12), 80, (3, 3), 8, (1, 1), (1, 1)),   # 10-pixel tiles: 2 taps a chunk, then 1
    (1, (12, 12), 600, (3, 3), 8, (1, 1), (1, 1)),  # a tap a chunk; 3 pixel blocks
    (2, (9, 61), 3, (3, 3), 40, (2, 2), (1, 1)),    # stem-like: width 30, tiles dividing it
    (2, (9, 35), 3, (3, 3), 40, (2, 2), (1, 1)),    # width 17: tiles inside a row and across
    (1, (19, 61), 3, (7, 7), 40, (2, 2), (1, 1)),   # 7 x 7 stem: a window row's taps one loop
]
IDS = ["ragged-width", "row-tiles", "narrow-f", "partial-block-2v", "partial-block-1v", "stride2",
       "dilation2", "mixed", "1x1", "1x1-narrow", "1x1-strided", "chunks", "tap-chunks", "deep-c",
       "stem", "rows-and-images", "stem-7x7"]
# AVX-512's wide tiles (6 pixels x 64 channels, conv_blocking.wide_tiles; narrow elsewhere).
WIDE_CASES = [
    (1, (6, 34), 16, (3, 3), 64, (1, 1), (1, 1)),   # width 32: tiles inside a row and across
    (2, (4, 30), 24, (3, 3), 128, (1, 1), (1, 1)),  # two panels, tiles across images
    (1, (4, 30), 300, (3, 3), 64, (1, 1), (1, 1)),  # chunks of two taps
    (1, (7, 61), 8, (3, 3), 64, (2, 2), (1, 1)),    # stride 2 (width 30)
]
WIDE_IDS = ["wide", "wide-images", "wide-chunks", "wide-stride2"]


def check_nhwc(run: Runner, rng: np.random.Generator, n: int, hw: Pair, c: int, khw: Pair,
               f: int, strides: Pair, dilations: Pair) -> None:
    oh, ow = (out_size(s, k, st, d) for s, k, st, d in zip(hw, khw, strides, dilations))
    xs, ws, os = (n, *hw, c), (*khw, c, f), (n, oh, ow, f)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    init = rng.standard_normal(os).astype(np.float32)
    src = nhwc_program(xs, ws, os, strides, dilations)
    check(run(src, "f", x, w, init), reference(x, w, init, strides, dilations))


@pytest.mark.parametrize("n, hw, c, khw, f, strides, dilations", CASES, ids=IDS)
def test_direct_conv_nhwc_hwcf(run: Runner, n: int, hw: Pair, c: int, khw: Pair, f: int,
                               strides: Pair, dilations: Pair) -> None:
    check_nhwc(run, RNG, n, hw, c, khw, f, strides, dilations)


@pytest.mark.parametrize("n, hw, c, khw, f, strides, dilations", WIDE_CASES, ids=WIDE_IDS)
def test_direct_conv_wide_tiles(run: Runner, n: int, hw: Pair, c: int, khw: Pair, f: int,
                                strides: Pair, dilations: Pair) -> None:
    check_nhwc(run, WIDE_RNG, n, hw, c, khw, f, strides, dilations)


def test_direct_conv_nchw_fchw_with_exporters_padding(layout_run: Runner) -> None:
    """What torch and ONNX exporters write: tensor.pad of an NCHW input, conv_2d_nchw_fchw into
    a zero fill, stride 2 (a ResNet stem), sizes odd everywhere."""
    xs, ws = (1, 5, 11, 13), (9, 5, 3, 3)
    src, _ = padded_nchw_program(xs, ws, (1, 1), (1, 1), (2, 2))
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    check(layout_run(src, "f", x, w), padded_nchw_reference(x, w, (1, 1), (1, 1), (2, 2)))


@pytest.mark.parametrize("value", [0.0, -1.5], ids=["zero", "constant"])
def test_direct_conv_nchw_padding_sides_and_value(layout_run: Runner, value: float) -> None:
    """An NCHW input whose pad the convolution's dispatch takes along (the rows each workgroup
    reads brought to NHWC 8 x 8 elements at a time between the pad's values): padding of other
    sizes on each side, a padding value that is not zero, 19 channels and 13 pixels a row
    (whole blocks and edges), two images."""
    xs, ws = (2, 19, 9, 13), (16, 19, 3, 3)
    src, os = padded_nchw_program(xs, ws, (2, 1), (0, 3), (1, 1), value)
    assert os == (2, 16, 9, 15)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    check(layout_run(src, "f", x, w),
          padded_nchw_reference(x, w, (2, 1), (0, 3), (1, 1), value))


@pytest.mark.parametrize("strides", [(1, 1), (2, 2)], ids=["unit", "stride2"])
def test_direct_conv_nchw_batch_split_across_workgroups(layout_run: Runner, strides: Pair) -> None:
    """Three images of 7 output rows, 3 rows a workgroup: on local-task the ranges start and
    end inside images, and each converts only the NCHW input rows its output rows read."""
    hw = (9 + 6 * (strides[0] - 1), 12 + 9 * (strides[1] - 1))
    xs, ws, os = (3, 8, *hw), (16, 8, 3, 3), (3, 16, 7, 10)
    src = f"""
    func.func @f(%x: {tensor(xs)}, %w: {tensor(ws)}, %init: {tensor(os)}) -> {tensor(os)} {{
      %0 = linalg.conv_2d_nchw_fchw {attrs(strides, (1, 1))} ins(%x, %w : {tensor(xs)}, {tensor(ws)}) outs(%init : {tensor(os)}) -> {tensor(os)}
      return %0 : {tensor(os)}
    }}"""
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    init = RNG.standard_normal(os).astype(np.float32)
    expected = reference(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0),
                         init.transpose(0, 2, 3, 1), strides, (1, 1))
    check(layout_run(src, "f", x, w, init), expected.transpose(0, 3, 1, 2))


@pytest.mark.parametrize("hw, constant", [((9, 37), False), ((300, 301), True)],
                         ids=["rows", "bands"])
def test_direct_conv_rgb_nchw_input_interleaved(layout_run: Runner, hw: Pair,
                                                constant: bool) -> None:
    """A network's 3-channel NCHW input, which channels-last turns into a transpose fused into
    the convolution: brought to NHWC by the rows each workgroup reads, 16 pixels of the three
    planes interleaved at a time and the pixels past the last 16 one by one (37 = 2 x 16 + 5;
    301 = 18 x 16 + 13). Stride 2, as in a stem. With a constant filter and an image past
    BAND_BYTES (3 x 300 x 301 floats), bands of rows copy their input rows the same way."""
    xs = (1, 3, *hw)
    ws, os = (16, 3, 3, 3), (1, 16, *(out_size(d, 3, 2, 1) for d in hw))
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    if constant:
        filter_arg, filter_def, args = "", f"%w = arith.constant {dense_f32(w)} : {tensor(ws)}", (x,)
    else:
        filter_arg, filter_def, args = f", %w: {tensor(ws)}", "", (x, w)
    src = f"""
    func.func @f(%x: {tensor(xs)}{filter_arg}) -> {tensor(os)} {{
      {filter_def}
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : {tensor(os)}
      %init = linalg.fill ins(%zero : f32) outs(%e : {tensor(os)}) -> {tensor(os)}
      %0 = linalg.conv_2d_nchw_fchw {attrs((2, 2), (1, 1))} ins(%x, %w : {tensor(xs)}, {tensor(ws)}) outs(%init : {tensor(os)}) -> {tensor(os)}
      return %0 : {tensor(os)}
    }}"""
    expected = reference(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0),
                         np.zeros((1, *os[2:], 16)), (2, 2), (1, 1))
    check(layout_run(src, "f", *args), expected.transpose(0, 3, 1, 2))


@pytest.mark.parametrize("hw", [(19, 37), (301, 300)], ids=["rows", "bands"])
def test_direct_conv_padded_rgb_nchw_input_in_the_stems_dispatch(layout_run: Runner,
                                                                  hw: Pair) -> None:
    """ResNet's stem as exported: a pad of 3 around the NCHW RGB image, a 7 x 7 stride-2
    convolution of a constant filter. The pad is no dispatch of its own: the convolution's
    dispatch brings each row it reads to NHWC between the pad's values (16 pixels of the three
    planes interleaved at a time, 37 = 2 x 16 + 5), the rows above and below the image all
    pad; with an image past BAND_BYTES, in bands of rows."""
    xs, ws = (1, 3, *hw), (16, 3, 7, 7)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    src, _ = padded_nchw_program(xs, ws, (3, 3), (3, 3), (2, 2), w=w)
    options = weir.CompilerOptions(target_backends=("llvm-cpu",))
    flow = weir.compile_to_phase(src, "stem.mlir", options, "flow")
    (conv,) = [e for e in flow.split('"flow.executable"') if "linalg.conv_2d_nhwc_hwcf" in e]
    assert "tensor.insert_slice" in conv and flow.count("tensor.insert_slice") == 1, flow
    check(layout_run(src, "f", x), padded_nchw_reference(x, w, (3, 3), (3, 3), (2, 2)))


@pytest.mark.parametrize("f, ow", [(24, 16), (13, 19), (8, 5)],
                         ids=["whole-blocks", "both-edges", "narrow"])
def test_direct_conv_nchw_output_rows_written_in_blocks(layout_run: Runner, f: int,
                                                       ow: int) -> None:
    """The W x F accumulator rows reach the NCHW output 8 x 8 at a time: channel and width
    counts that are whole blocks, that leave edges of both, and a row narrower than a block."""
    xs, ws, os = (2, 6, 4, ow + 2), (f, 6, 3, 3), (2, f, 2, ow)
    src = f"""
    func.func @f(%x: {tensor(xs)}, %w: {tensor(ws)}, %init: {tensor(os)}) -> {tensor(os)} {{
      %0 = linalg.conv_2d_nchw_fchw {attrs((1, 1), (1, 1))} ins(%x, %w : {tensor(xs)}, {tensor(ws)}) outs(%init : {tensor(os)}) -> {tensor(os)}
      return %0 : {tensor(os)}
    }}"""
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    init = RNG.standard_normal(os).astype(np.float32)
    expected = reference(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0),
                         init.transpose(0, 2, 3, 1), (1, 1), (1, 1))
    check(layout_run(src, "f", x, w, init), expected.transpose(0, 3, 1, 2))


def test_direct_conv_reads_a_fused_producer_and_feeds_an_epilogue(run: Runner) -> None:
    """An elementwise producer of the input (materialised once per workgroup range) and a ReLU
    after the convolution in the same dispatch."""
    xs, ws, os = (1, 8, 10, 6), (3, 3, 6, 20), (1, 6, 8, 20)
    src = f"""
    func.func @f(%x: {tensor(xs)}, %w: {tensor(ws)}) -> {tensor(os)} {{
      %zero = arith.constant 0.0 : f32
      %e0 = tensor.empty() : {tensor(xs)}
      %t = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%x : {tensor(xs)}) outs(%e0 : {tensor(xs)}) {{
      ^bb0(%in: f32, %out: f32):
        %s = arith.mulf %in, %in : f32
        linalg.yield %s : f32
      }} -> {tensor(xs)}
      %e = tensor.empty() : {tensor(os)}
      %init = linalg.fill ins(%zero : f32) outs(%e : {tensor(os)}) -> {tensor(os)}
      %c = linalg.conv_2d_nhwc_hwcf ins(%t, %w : {tensor(xs)}, {tensor(ws)}) outs(%init : {tensor(os)}) -> {tensor(os)}
      %r = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%c : {tensor(os)}) outs(%e : {tensor(os)}) {{
      ^bb0(%in: f32, %out: f32):
        %m = arith.maximumf %in, %zero : f32
        linalg.yield %m : f32
      }} -> {tensor(os)}
      return %r : {tensor(os)}
    }}"""
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    expected = np.maximum(reference(x * x, w, np.zeros(os), (1, 1), (1, 1)), 0.0)
    check(run(src, "f", x, w), expected)


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
def test_direct_conv_on_the_generic_x86_64_cpu(driver: str) -> None:
    """4-lane vectors (SSE2): other tile and block widths than the host's."""
    xs, ws, os = (2, 9, 14, 7), (3, 3, 7, 13), (2, 7, 12, 13)
    options = weir.CompilerOptions(target_backends=("llvm-cpu",), llvmcpu_target_cpu="x86-64")
    module = weir.compile_string(nhwc_program(xs, ws, os, (1, 1), (1, 1)), "conv.mlir", options)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    init = RNG.standard_normal(os).astype(np.float32)
    got = weir.load([module], device=driver).lookup_function("f")(x, w, init)
    check(got, reference(x, w, init, (1, 1), (1, 1)))


DEPTHWISE = [  # n, (h, w), c, (kh, kw), strides, dilations
    (2, (7, 9), 13, (3, 3), (1, 1), (1, 1)),   # a vector of channels (or width) and a ragged rest
    (1, (9, 21), 32, (3, 3), (2, 2), (1, 1)),  # whole vectors only on AVX2; stride 2
    (1, (11, 12), 5, (3, 2), (1, 2), (2, 1)),  # fewer channels than a vector; dilations
    (1, (6, 19), 20, (1, 1), (1, 1), (1, 1)),  # 1x1
]
DEPTHWISE_IDS = ["ragged", "stride2", "dilation", "1x1"]


def depthwise_program(op: str, xs: tuple[int, ...], ws: tuple[int, ...], os: tuple[int, ...],
                      strides: Pair, dilations: Pair) -> str:
    """@f(%x, %w, %init): `op` into init, then clamped to [0, 6] (MobileNet's ReLU6) in the
    same dispatch."""
    return f"""
    func.func @f(%x: {tensor(xs)}, %w: {tensor(ws)}, %init: {tensor(os)}) -> {tensor(os)} {{
      %zero = arith.constant 0.0 : f32
      %six = arith.constant 6.0 : f32
      %0 = linalg.{op} {attrs(strides, dilations)} ins(%x, %w : {tensor(xs)}, {tensor(ws)}) outs(%init : {tensor(os)}) -> {tensor(os)}
      %e = tensor.empty() : {tensor(os)}
      %r = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%0 : {tensor(os)}) outs(%e : {tensor(os)}) {{
      ^bb0(%in: f32, %out: f32):
        %lo = arith.maximumf %in, %zero : f32
        %hi = arith.minimumf %lo, %six : f32
        linalg.yield %hi : f32
      }} -> {tensor(os)}
      return %r : {tensor(os)}
    }}"""


def depthwise_reference(x: np.ndarray, w: np.ndarray, init: np.ndarray, strides: Pair,
                        dilations: Pair) -> np.ndarray:
    """NHWC input, HWC filter, clamped to [0, 6]."""
    span = tuple(d * (k - 1) + 1 for k, d in zip(w.shape[:2], dilations))
    views = sliding_window_view(x.astype(np.float64), span, axis=(1, 2))
    patches = views[:, ::strides[0], ::strides[1], :, ::dilations[0], ::dilations[1]]
    return np.clip(init + np.einsum("nhwcij,ijc->nhwc", patches, w.astype(np.float64)), 0, 6)


@pytest.mark.parametrize("n, hw, c, khw, strides, dilations", DEPTHWISE, ids=DEPTHWISE_IDS)
def test_vector_depthwise_nhwc_hwc(run: Runner, n: int, hw: Pair, c: int, khw: Pair,
                                   strides: Pair, dilations: Pair) -> None:
    oh, ow = (out_size(s, k, st, d) for s, k, st, d in zip(hw, khw, strides, dilations))
    xs, ws, os = (n, *hw, c), (*khw, c), (n, oh, ow, c)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    init = RNG.standard_normal(os).astype(np.float32)
    src = depthwise_program("depthwise_conv_2d_nhwc_hwc", xs, ws, os, strides, dilations)
    check(run(src, "f", x, w, init), depthwise_reference(x, w, init, strides, dilations))


@pytest.mark.parametrize("n, hw, c, khw, strides, dilations", DEPTHWISE, ids=DEPTHWISE_IDS)
def test_vector_depthwise_nchw_chw(layout_run: Runner, n: int, hw: Pair, c: int, khw: Pair,
                                   strides: Pair, dilations: Pair) -> None:
    """Vectors along the output width: widths below, at and past a vector; stride 2 gathers."""
    oh, ow = (out_size(s, k, st, d) for s, k, st, d in zip(hw, khw, strides, dilations))
    xs, ws, os = (n, c, *hw), (c, *khw), (n, c, oh, ow)
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    init = RNG.standard_normal(os).astype(np.float32)
    src = depthwise_program("depthwise_conv_2d_nchw_chw", xs, ws, os, strides, dilations)
    expected = depthwise_reference(x.transpose(0, 2, 3, 1), w.transpose(1, 2, 0),
                                   init.transpose(0, 2, 3, 1), strides, dilations)
    check(layout_run(src, "f", x, w, init), expected.transpose(0, 3, 1, 2))

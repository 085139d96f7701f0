"""Convolutions by constant filters, which global-optimization stores in the llvm-cpu direct
kernel's panel layout (pack_conv_filters.py) and the kernel reads in place, on every host target
(the `run` fixture loads module bytes, so the panels lie wherever the load put them) against
numpy: NCHW, NHWC/HWCF and NHWC/FHWC, strides, two images, a bias with a ReLU after it, small
images whose workgroups split the output channels too (with and without a partial last block of
channels), a large image whose workgroups split rows only, a channels-last 1x1 convolution
from more channels to fewer whose rows run in several chunks of the GEMM, filter counts that
are not whole panels (stored padded with zeros: the GEMM's masked last panel, the direct kernel's
rest block, fewer channels than one panel), a 3-channel strided stem whose large output runs
in bands of rows, 30-pixel rows of 128 channels in AVX-512's wide panels of 64, and channels-last
1x1 convolutions over 16 x 16 and 15 x 15 pixels, whose GEMM runs in AVX-512's wide tiles over
panels of 64 (with a bias and ReLU stored by its last tiles, and from zero)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir
from weir.compiler.targets.llvm_cpu.conv_blocking import conv_tile, ConvGeometry
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(11)
OPS = {"NCHW": ("linalg.conv_2d_nchw_fchw", "FCHW"),
       "NHWC": ("linalg.conv_2d_nhwc_hwcf", "HWCF"),
       "NHWC-FHWC": ("linalg.conv_2d_nhwc_fhwc", "FHWC")}


def _type(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def program(layout: str, x_shape: tuple[int, ...], w_shape: tuple[int, ...],
            out_shape: tuple[int, ...], stride: int, weights: np.ndarray, bias: bool) -> str:
    """@f(%x): conv(x, weights), or relu(conv + 0.25 * f) with the bias along F."""
    op, _ = OPS[layout]
    blob = "0x04000000" + weights.astype(np.float32).tobytes().hex().upper()
    xs, ws, os = _type(x_shape), _type(w_shape), _type(out_shape)
    rank = len(out_shape)
    f_dim = 1 if layout == "NCHW" else 3
    ids = ", ".join(f"d{i}" for i in range(rank))
    identity = f"affine_map<({ids}) -> ({ids})>"
    if bias:
        init = f"""%cols = linalg.generic {{indexing_maps = [{identity}], iterator_types = [{", ".join(['"parallel"'] * rank)}]}} outs(%e : {os}) {{
      ^bb0(%out: f32):
        %j = linalg.index {f_dim} : index
        %ji = arith.index_cast %j : index to i32
        %jf = arith.sitofp %ji : i32 to f32
        %q = arith.constant 0.25 : f32
        %v = arith.mulf %jf, %q : f32
        linalg.yield %v : f32
      }} -> {os}"""
        acc = "%cols"
        tail = f"""%r = linalg.generic {{indexing_maps = [{identity}, {identity}], iterator_types = [{", ".join(['"parallel"'] * rank)}]}} ins(%p : {os}) outs(%e : {os}) {{
      ^bb0(%in: f32, %out: f32):
        %zero = arith.constant 0.0 : f32
        %y = arith.maximumf %in, %zero : f32
        linalg.yield %y : f32
      }} -> {os}
      return %r : {os}"""
    else:
        init = f"""%z = arith.constant 0.0 : f32
      %zeros = linalg.fill ins(%z : f32) outs(%e : {os}) -> {os}"""
        acc = "%zeros"
        tail = f"return %p : {os}"
    return f"""
    func.func @f(%x: {xs}) -> {os} {{
      %w = arith.constant dense_resource<filter> : {ws}
      %e = tensor.empty() : {os}
      {init}
      %p = {op} {{dilations = dense<1> : vector<2xi64>, strides = dense<{stride}> : vector<2xi64>}} ins(%x, %w : {xs}, {ws}) outs({acc} : {os}) -> {os}
      {tail}
    }}
    {{-#
      dialect_resources: {{ builtin: {{ filter: "{blob}" }} }}
    #-}}"""


def reference(x_nhwc: np.ndarray, w_hwcf: np.ndarray, stride: int) -> np.ndarray:
    """The convolution in float64, NHWC in, NHWF out."""
    n, h, w, c = x_nhwc.shape
    kh, kw, _, f = w_hwcf.shape
    oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(kh):
        for j in range(kw):
            window = x_nhwc[:, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            out += window.astype(np.float64) @ w_hwcf[i, j].astype(np.float64)
    return out


# (layout, images, size, channels, filters, window, stride, bias)
CASES = [("NCHW", 1, 10, 16, 32, 3, 1, True), ("NCHW", 1, 9, 64, 64, 3, 1, False),
         ("NHWC", 2, 9, 32, 48, 3, 1, True), ("NHWC-FHWC", 1, 10, 16, 32, 3, 1, False),
         ("NCHW", 1, 15, 128, 64, 1, 2, True), ("NCHW", 1, 9, 64, 40, 3, 1, True),
         ("NCHW", 1, 40, 16, 32, 3, 1, True), ("NHWC", 1, 96, 128, 32, 1, 1, True),
         ("NHWC", 1, 13, 64, 40, 1, 1, True), ("NHWC", 1, 9, 32, 24, 3, 1, True),
         ("NCHW", 1, 101, 3, 64, 3, 2, True), ("NHWC", 2, 32, 32, 128, 3, 1, True),
         ("NHWC", 2, 16, 32, 128, 1, 1, True), ("NHWC", 1, 15, 48, 64, 1, 1, False)]
IDS = ["nchw-bias-relu", "nchw-7x7-output", "nhwc-two-images", "nhwc-fhwc",
       "nchw-strided-1x1", "nchw-partial-block", "nchw-rows-only", "nhwc-1x1-chunks",
       "nhwc-1x1-padded-panel", "nhwc-fewer-channels-than-a-panel", "nchw-stem-in-bands",
       "nhwc-wide-panels", "nhwc-1x1-wide-gemm", "nhwc-1x1-wide-gemm-from-zero"]


@pytest.mark.parametrize("layout, images, size, chans, feats, window, stride, bias", CASES,
                         ids=IDS)
def test_convolution_by_constant_filter(run: Runner, layout: str, images: int, size: int,
                                        chans: int, feats: int, window: int, stride: int,
                                        bias: bool) -> None:
    _, filter_layout = OPS[layout]
    w_hwcf = RNG.standard_normal((window, window, chans, feats)).astype(np.float32) / chans
    weights = w_hwcf.transpose(["HWCF".index(d) for d in filter_layout])
    x_nhwc = RNG.standard_normal((images, size, size, chans)).astype(np.float32)
    expected = reference(x_nhwc, w_hwcf, stride)
    if bias:
        expected = np.maximum(expected + 0.25 * np.arange(feats), 0.0)
    if layout == "NCHW":
        x, expected = x_nhwc.transpose(0, 3, 1, 2), expected.transpose(0, 3, 1, 2)
    else:
        x = x_nhwc
    source = program(layout, x.shape, weights.shape, expected.shape, stride, weights, bias)
    got = np.asarray(run(source, "f", np.ascontiguousarray(x)))
    assert got.shape == expected.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)


def test_llvm_cpu_reads_the_panels_in_place() -> None:
    """The module carries the filter once, as panels, not also in the layout the program gave."""
    weights = RNG.standard_normal((64, 64, 3, 3)).astype(np.float32)
    options = weir.CompilerOptions(target_backends=("llvm-cpu",))
    source = program("NCHW", (1, 64, 9, 9), weights.shape, (1, 64, 7, 7), 1, weights, False)
    module = weir.compile_string(source, "t.mlir", options)
    assert weights.tobytes() not in module
    assert weights.transpose(2, 3, 1, 0).reshape(3, 3, 64, 4, 16).transpose(3, 0, 1, 2, 4) \
        .tobytes() in module or weights.transpose(2, 3, 1, 0).reshape(3, 3, 64, 2, 32) \
        .transpose(3, 0, 1, 2, 4).tobytes() in module


def test_llvm_cpu_packs_wide_panels_for_wide_tiles() -> None:
    """A convolution the kernel runs in wide tiles (conv_blocking.wide_tiles) has its filter
    packed in panels of the tile's width: 64 channels on AVX-512, where AVX2's narrow tiles
    take 16."""
    weights = RNG.standard_normal((3, 3, 16, 128)).astype(np.float32)
    for cpu_name, nr in (("x86-64-v4", 64), ("x86-64-v3", 16)):
        assert conv_tile(resolve_cpu(cpu_name),
                         ConvGeometry(16, 128, 3, 3, 30, 30, 1, 1, 1, 1)).nr == nr
        options = weir.CompilerOptions(target_backends=("llvm-cpu",),
                                       llvmcpu_target_cpu=cpu_name)
        source = program("NHWC", (1, 32, 32, 16), weights.shape, (1, 30, 30, 128), 1,
                         weights, False)
        module = weir.compile_string(source, "t.mlir", options)
        assert weights.reshape(3, 3, 16, 128 // nr, nr).transpose(3, 0, 1, 2, 4).tobytes() \
            in module, cpu_name


def test_llvm_cpu_packs_wide_gemm_panels_for_many_pixels() -> None:
    """A channels-last 1 x 1 convolution over many pixels runs its GEMM in wide tiles
    (conv_blocking.wide_gemm) and has its filter packed in their 64-channel panels on AVX-512;
    over 7 x 7 pixels, in the GEMM's narrow 32-channel ones; on AVX2 in its 16-channel ones."""
    weights = RNG.standard_normal((1, 1, 32, 128)).astype(np.float32)
    for cpu_name, size, nr in (("x86-64-v4", 16, 64), ("x86-64-v4", 7, 32),
                               ("x86-64-v3", 16, 16)):
        options = weir.CompilerOptions(target_backends=("llvm-cpu",),
                                       llvmcpu_target_cpu=cpu_name)
        source = program("NHWC", (1, size, size, 32), weights.shape, (1, size, size, 128), 1,
                         weights, False)
        module = weir.compile_string(source, "t.mlir", options)
        assert weights.reshape(1, 1, 32, 128 // nr, nr).transpose(3, 0, 1, 2, 4).tobytes() \
            in module, (cpu_name, size)
        assert (b"weir_gemm_f32_f32_f32_wide_prepacked" in module) == (nr == 64), cpu_name


def test_llvm_cpu_reads_padded_panels_in_place() -> None:
    """40 filters: the module carries the filter once, as whole panels whose last one is padded
    with zeros (the kernel's rest block reads it in place)."""
    weights = RNG.standard_normal((40, 64, 3, 3)).astype(np.float32)
    options = weir.CompilerOptions(target_backends=("llvm-cpu",))
    source = program("NCHW", (1, 64, 9, 9), weights.shape, (1, 40, 7, 7), 1, weights, False)
    module = weir.compile_string(source, "t.mlir", options)
    assert weights.tobytes() not in module
    hwcf = weights.transpose(2, 3, 1, 0)
    padded = [np.pad(hwcf, [(0, 0)] * 3 + [(0, -40 % nr)]).reshape(3, 3, 64, -(-40 // nr), nr)
              .transpose(3, 0, 1, 2, 4).tobytes() for nr in (16, 32)]
    assert any(panels in module for panels in padded)

"""Every named convolution and pooling that runs through decompose-window-ops (1-D and 3-D,
grouped, depthwise with and without a channel multiplier, min pooling) and the NCHW depthwise
convolution the Conv2D kernel runs directly, and poolings written as linalg.generic (as
torch-mlir writes 3-D max pooling), compiled and run on every host target (the `run` fixture),
against one numpy reference driven by the op's layout letters. Strides and dilations
other than 1 on every spatial dimension. Floats to 1e-5, integers exactly."""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np
import pytest

from weir.ir.window_ops import KERNEL_WINDOWS, WINDOW_LAYOUTS, WindowLayout

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(7)
SIZES = {"N": 2, "C": 3, "F": 2, "G": 2, "M": 2}
INPUT = {"D": 6, "H": 5, "W": 9}
WINDOW = {"D": 3, "H": 2, "W": 3}
STRIDES = {"D": 2, "H": 1, "W": 2}
DILATIONS = {"D": 1, "H": 2, "W": 1}
NUMPY = {"f32": np.float32, "i32": np.int32}


def out_size(letter: str) -> int:
    return (INPUT[letter] - DILATIONS[letter] * (WINDOW[letter] - 1) - 1) // STRIDES[letter] + 1


def shapes(layout: WindowLayout) -> tuple[tuple[int, ...], ...]:
    x = tuple(INPUT[c] if c in layout.spatial else SIZES[c] for c in layout.input)
    w = tuple(WINDOW[c] if c in layout.spatial else SIZES[c] for c in layout.window)
    out = tuple(out_size(c) if c in layout.spatial else SIZES[c] for c in layout.output)
    return x, w, out


def reference(layout: WindowLayout, x: np.ndarray, w: np.ndarray,
              init: np.ndarray) -> np.ndarray:
    """The op's definition, window position by window position: the strided, dilated input
    slice for each position, multiplied by the filter there (an einsum over the layout's
    letters) or combined into the output."""
    out = init.copy()
    spatial = layout.spatial
    for position in itertools.product(*(range(WINDOW[c]) for c in spatial)):
        index = [slice(None)] * x.ndim
        for c, k in zip(spatial, position):
            start = k * DILATIONS[c]
            index[layout.input.index(c)] = slice(
                start, start + STRIDES[c] * (out_size(c) - 1) + 1, STRIDES[c])
        xs = x[tuple(index)].astype(out.dtype)
        if layout.pooling is None:
            taps = _taps(layout, w, position)
            x_sub = layout.input.lower()
            w_sub = "".join(c.lower() for c in layout.window if c not in spatial)
            out = out + np.einsum(f"{x_sub},{w_sub}->{layout.output.lower()}", xs,
                                  taps.astype(out.dtype))
        elif layout.pooling == "max":
            out = np.maximum(out, xs)
        elif layout.pooling == "min":
            out = np.minimum(out, xs)
        else:
            out = out + xs
    return out


def _taps(layout: WindowLayout, w: np.ndarray, position: tuple[int, ...]) -> np.ndarray:
    """The filter at one window position: its spatial dimensions indexed away."""
    index: list[object] = [slice(None)] * w.ndim
    for c, k in zip(layout.spatial, position):
        index[layout.window.index(c)] = k
    return w[tuple(index)]


def program(name: str, layout: WindowLayout, ty: str) -> str:
    x, w, out = shapes(layout)
    r = len(layout.spatial)

    def t(shape: tuple[int, ...]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}x{ty}>"

    def dense(values: dict[str, int]) -> str:
        return f"dense<[{', '.join(str(values[c]) for c in layout.spatial)}]> : tensor<{r}xi64>"

    pooling = layout.pooling is not None
    w_arg = "" if pooling else f"%w: {t(w)}, "
    w_def = f"%w = tensor.empty() : {t(w)}\n      " if pooling else ""
    return f"""
    func.func @f(%x: {t(x)}, {w_arg}%init: {t(out)}) -> {t(out)} {{
      {w_def}%0 = {name} {{dilations = {dense(DILATIONS)}, strides = {dense(STRIDES)}}} ins(%x, %w : {t(x)}, {t(w)}) outs(%init : {t(out)}) -> {t(out)}
      return %0 : {t(out)}
    }}"""


def random(shape: tuple[int, ...], ty: str) -> np.ndarray:
    if ty == "f32":
        return RNG.standard_normal(shape).astype(np.float32)
    return RNG.integers(-20, 20, shape).astype(np.int32)


VARIANTS = sorted(n for n in WINDOW_LAYOUTS
                  if n not in KERNEL_WINDOWS or n == "linalg.depthwise_conv_2d_nchw_chw")
CASES = [(n, "f32") for n in VARIANTS] + [
    (n, "i32") for n in ("linalg.conv_2d_ngchw_gfchw", "linalg.pooling_nwc_min",
                         "linalg.pooling_ndhwc_min", "linalg.conv_1d_ncw_fcw")]


@pytest.mark.parametrize("name, ty", CASES, ids=[f"{n.removeprefix('linalg.')}-{t}"
                                                 for n, t in CASES])
def test_window_variant(run: Runner, name: str, ty: str) -> None:
    layout = WINDOW_LAYOUTS[name]
    x_shape, w_shape, out_shape = shapes(layout)
    x, w, init = random(x_shape, ty), random(w_shape, ty), random(out_shape, ty)
    expected = reference(layout, x, w, init)
    args = (x, init) if layout.pooling else (x, w, init)
    got = np.asarray(run(program(name, layout, ty), "f", *args))
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if ty == "i32":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def generic_program(layout: WindowLayout, ty: str) -> str:
    """The pooling written as a linalg.generic, as torch-mlir writes 3-D max pooling: loops are
    the output's dimensions, then the window's."""
    x, w, out = shapes(layout)
    rank, spatial = len(layout.output), layout.spatial
    loops = [f"d{i}" for i in range(rank + len(spatial))]
    window = {c: f"d{rank + i}" for i, c in enumerate(spatial)}
    x_map = [f"d{k} * {STRIDES[c]} + {window[c]} * {DILATIONS[c]}" if c in spatial else f"d{k}"
             for k, c in enumerate(layout.input)]
    combine = {("max", "f32"): "arith.maximumf", ("sum", "f32"): "arith.addf",
               ("min", "i32"): "arith.minsi"}[(layout.pooling or "", ty)]

    def amap(results: list[str]) -> str:
        return f"affine_map<({', '.join(loops)}) -> ({', '.join(results)})>"

    def t(shape: tuple[int, ...]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}x{ty}>"

    iterators = ", ".join(['"parallel"'] * rank + ['"reduction"'] * len(spatial))
    return f"""
    func.func @f(%x: {t(x)}, %init: {t(out)}) -> {t(out)} {{
      %w = tensor.empty() : {t(w)}
      %0 = linalg.generic {{indexing_maps = [{amap(x_map)}, {amap(list(window.values()))}, {amap(loops[:rank])}], iterator_types = [{iterators}]}} ins(%x, %w : {t(x)}, {t(w)}) outs(%init : {t(out)}) {{
      ^bb0(%in: {ty}, %unused: {ty}, %acc: {ty}):
        %1 = {combine} %in, %acc : {ty}
        linalg.yield %1 : {ty}
      }} -> {t(out)}
      return %0 : {t(out)}
    }}"""


@pytest.mark.parametrize("layout, kind, ty", [
    ("NCDHW", "max", "f32"), ("NCHW", "sum", "f32"), ("NWC", "min", "i32")])
def test_pooling_written_as_generic(run: Runner, layout: str, kind: str, ty: str) -> None:
    window = WindowLayout(layout, "".join(c for c in layout if c in "DHW"), layout, "window", kind)
    x_shape, _, out_shape = shapes(window)
    x, init = random(x_shape, ty), random(out_shape, ty)
    got = np.asarray(run(generic_program(window, ty), "f", x, init))
    expected = reference(window, x, np.zeros(0), init)
    if ty == "i32":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)

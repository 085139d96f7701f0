"""Max and sum pooling of a tensor.pad: the pad joins the pooling's dispatch and llvm-cpu reads
the image through the window's bounds (NHWC f32 in vectors along channels, checking the taps of
border pixels only; other types and layouts in the scalar loops, element by element), on every
host target. Compared bit for bit with numpy combining the taps in (kh, kw) order, as both
targets do: a fused pad must give what the padded copy gave. Pads of either side and wider
than half the window, of the neutral value (-inf for max, 0 for sum) and of others (a max over
a 0 pad combines the zeros in), strides 1 and 2, 2 x 2 and 3 x 3 windows, channel counts on and
off the vector width, several images, inits from a fill or an argument, an average pool's
division after the sum; i32 and f16 pools (an f16 sum to within its rounding: llvm-cpu rounds
after each tap)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
Pair = tuple[int, int]
Pads = tuple[int, int, int, int]  # H low, H high, W low, W high
RNG = np.random.default_rng(43)
NUMPY = {"f32": np.float32, "f16": np.float16, "i32": np.int32}
LOWEST = {"f32": "0xFF800000", "f16": "0xFC00", "i32": "-2147483648"}


def _tensor(shape: tuple[int, ...], ty: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{ty}>"


def _out(size: int, k: int, stride: int, dilation: int) -> int:
    return (size - dilation * (k - 1) - 1) // stride + 1


def _literal(value: float, ty: str) -> str:
    """`value` as an MLIR literal of `ty`; -inf is the type's lowest value."""
    if value == -np.inf:
        return LOWEST[ty]
    return str(int(value)) if ty == "i32" else repr(float(value))


def _program(kind: str, ty: str, xs: tuple[int, ...], window: Pair, pads: Pads,
             value: float, strides: Pair, dilations: Pair, init_arg: bool,
             average: bool = False) -> tuple[str, tuple[int, ...]]:
    """`_source` for an NHWC pool of `kind` padded by `pads`, and the output's shape."""
    n, h, w, c = xs
    ps = (n, h + pads[0] + pads[1], w + pads[2] + pads[3], c)
    os = (n, _out(ps[1], window[0], strides[0], dilations[0]),
          _out(ps[2], window[1], strides[1], dilations[1]), c)
    return _source(f"pooling_nhwc_{kind}", ty, xs, (0, pads[0], pads[2], 0),
                   (0, pads[1], pads[3], 0), value, window, strides, dilations, os, init_arg,
                   average), os


def _source(op: str, ty: str, xs: tuple[int, ...], low: tuple[int, ...],
            high: tuple[int, ...], value: float, window: Pair, strides: Pair, dilations: Pair,
            os: tuple[int, ...], init_arg: bool = False, average: bool = False) -> str:
    """@f(%x[, %init]): the pad of %x by `value` (`low`, `high` per dimension), pooled by
    linalg.`op` into %init or a fill of its kind's neutral value; `average` divides the sum
    by the window's size after."""
    ps = tuple(d + lo + hi for d, lo, hi in zip(xs, low, high))
    names = ", ".join(f"%i{k}: index" for k in range(4))
    neutral = _literal(-np.inf if op.endswith("max") else 0, ty)
    init_param = f", %init: {_tensor(os, ty)}" if init_arg else ""
    init = "" if init_arg else f"""%neutral = arith.constant {neutral} : {ty}
      %e = tensor.empty() : {_tensor(os, ty)}
      %init = linalg.fill ins(%neutral : {ty}) outs(%e : {_tensor(os, ty)}) -> {_tensor(os, ty)}"""
    result = "%0"
    divide = ""
    if average:
        result = "%avg"
        divide = f"""%size = arith.constant dense<{float(window[0] * window[1])!r}> : {_tensor(os, ty)}
      %avg = arith.divf %0, %size : {_tensor(os, ty)}"""
    return f"""
    func.func @f(%x: {_tensor(xs, ty)}{init_param}) -> {_tensor(os, ty)} {{
      %v = arith.constant {_literal(value, ty)} : {ty}
      %p = tensor.pad %x low[{', '.join(map(str, low))}] high[{', '.join(map(str, high))}] {{
      ^bb0({names}):
        tensor.yield %v : {ty}
      }} : {_tensor(xs, ty)} to {_tensor(ps, ty)}
      %window = tensor.empty() : {_tensor(window, ty)}
      {init}
      %0 = linalg.{op} {{dilations = dense<[{dilations[0]}, {dilations[1]}]> : tensor<2xi64>, strides = dense<[{strides[0]}, {strides[1]}]> : tensor<2xi64>}} ins(%p, %window : {_tensor(ps, ty)}, {_tensor(window, ty)}) outs(%init : {_tensor(os, ty)}) -> {_tensor(os, ty)}
      {divide}
      return {result} : {_tensor(os, ty)}
    }}"""


def _reference(kind: str, x: np.ndarray, init: np.ndarray, window: Pair, pads: Pads,
               value: float, strides: Pair, dilations: Pair) -> np.ndarray:
    """init combined with the taps one at a time in (kh, kw) order, in f32 for f16 (as the
    targets compute a narrow float pool) and rounded once at the end."""
    wide = np.float32 if x.dtype == np.float16 else x.dtype
    padded = np.pad(x.astype(wide), ((0, 0), pads[:2], pads[2:], (0, 0)),
                    constant_values=value)
    total = init.astype(wide)
    oh, ow = total.shape[1:3]
    for kh in range(window[0]):
        for kw in range(window[1]):
            top, left = kh * dilations[0], kw * dilations[1]
            tap = padded[:, top:top + (oh - 1) * strides[0] + 1:strides[0],
                         left:left + (ow - 1) * strides[1] + 1:strides[1], :]
            total = np.maximum(total, tap) if kind == "max" else total + tap
    return total.astype(x.dtype)


def _random(shape: tuple[int, ...], ty: str) -> np.ndarray:
    if ty == "i32":
        return RNG.integers(-50, 50, shape).astype(np.int32)
    return RNG.standard_normal(shape).astype(NUMPY[ty])


def _check(run: Runner, kind: str, ty: str, xs: tuple[int, ...], window: Pair, pads: Pads,
           value: float, strides: Pair, dilations: Pair = (1, 1),
           init_arg: bool = False) -> None:
    src, os = _program(kind, ty, xs, window, pads, value, strides, dilations, init_arg)
    x = _random(xs, ty)
    if init_arg:
        init = _random(os, ty)
        got = np.asarray(run(src, "f", x, init))
    else:
        init = np.full(os, -np.inf if kind == "max" else 0, NUMPY[ty]) if ty != "i32" else \
            np.full(os, np.iinfo(np.int32).min if kind == "max" else 0, np.int32)
        got = np.asarray(run(src, "f", x))
    expected = _reference(kind, x, init, window, pads, value, strides, dilations)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if ty == "f16" and kind == "sum":
        # llvm-cpu rounds an f16 sum to f16 after each tap, the reference target once at the
        # end (both as before the pad joined the pooling).
        np.testing.assert_allclose(got, expected, rtol=1e-2, atol=1e-2)
    else:
        np.testing.assert_array_equal(got, expected)


CASES = [  # n, (h, w), c, window, pads, strides
    (1, (16, 16), 64, (3, 3), (1, 1, 1, 1), (2, 2)),   # ResNet's stem, smaller
    (1, (9, 10), 17, (3, 3), (1, 1, 1, 1), (1, 1)),    # 'same', a vector and a lane
    (2, (7, 8), 3, (2, 2), (0, 1, 0, 1), (2, 2)),      # TF's 'same' on an odd size, 3 channels
    (1, (6, 7), 40, (3, 3), (2, 0, 0, 2), (1, 1)),     # one side each: top and right
    (1, (5, 6), 24, (2, 2), (0, 3, 3, 0), (2, 1)),     # wider than the window: all-pad outputs
    (1, (4, 5), 33, (3, 3), (4, 4, 4, 4), (2, 2)),     # pads wider than the image
]
IDS = ["stem", "same-17", "tf-same-3", "top-right", "all-pad-edges", "pad-past-image"]


@pytest.mark.parametrize("n, hw, c, window, pads, strides", CASES, ids=IDS)
@pytest.mark.parametrize("kind", ["max", "sum"])
def test_neutral_pad(run: Runner, kind: str, n: int, hw: Pair, c: int, window: Pair,
                     pads: Pads, strides: Pair) -> None:
    """The pads exporters write: -inf for a max pool, 0 for a sum (an average's count
    including the pad)."""
    _check(run, kind, "f32", (n, *hw, c), window, pads, -np.inf if kind == "max" else 0.0,
           strides)


@pytest.mark.parametrize("kind, value", [("max", 0.0), ("max", 0.75), ("sum", 1.5),
                                         ("sum", -np.inf)],
                         ids=["max-of-zeros", "max-of-0.75", "sum-of-1.5", "sum-of-ninf"])
def test_other_pad_values(run: Runner, kind: str, value: float) -> None:
    """A pad of another value is combined in wherever a window reaches it."""
    _check(run, kind, "f32", (2, 7, 6, 19), (3, 3), (1, 2, 2, 1), value, (2, 1))


@pytest.mark.parametrize("kind", ["max", "sum"])
def test_init_from_an_argument_with_dilation(run: Runner, kind: str) -> None:
    _check(run, kind, "f32", (1, 9, 9, 20), (3, 2), (2, 1, 1, 2), 0.0 if kind == "sum" else
           -np.inf, (1, 2), (2, 1), init_arg=True)


@pytest.mark.parametrize("ty", ["i32", "f16"])
@pytest.mark.parametrize("kind", ["max", "sum"])
def test_other_types_keep_the_scalar_loops(run: Runner, kind: str, ty: str) -> None:
    value = -np.inf if kind == "max" and ty == "f16" else 0 if kind == "sum" else -3
    _check(run, kind, ty, (1, 7, 8, 5), (3, 3), (1, 1, 1, 1), value, (2, 2))


@pytest.mark.parametrize("low, high", [((1, 0, 1, 0), (0, 0, 1, 1)),
                                       ((0, 1, 1, 2), (0, 1, 0, 1))], ids=["images", "channels"])
def test_pad_of_images_or_channels(run: Runner, low: tuple[int, ...],
                                   high: tuple[int, ...]) -> None:
    """Not an image's pad (padded images, or channels, of 0.5s): read element by element."""
    xs = (2, 6, 7, 5)
    ps = tuple(d + lo + hi for d, lo, hi in zip(xs, low, high))
    os = (ps[0], ps[1] - 2, ps[2] - 2, ps[3])
    src = _source("pooling_nhwc_max", "f32", xs, low, high, 0.5, (3, 3), (1, 1), (1, 1), os)
    x = _random(xs, "f32")
    padded = np.pad(x, tuple(zip(low, high)), constant_values=0.5)
    expected = _reference("max", padded, np.full(os, -np.inf, np.float32), (3, 3),
                          (0, 0, 0, 0), 0.0, (1, 1), (1, 1))
    np.testing.assert_array_equal(np.asarray(run(src, "f", x)), expected)


def test_nchw_max_pool_of_a_pad(run: Runner) -> None:
    """Channels first, as exporters write it: ResNet's stem pool in small."""
    src = _source("pooling_nchw_max", "f32", (2, 5, 9, 8), (0, 0, 1, 1), (0, 0, 1, 0), -np.inf,
                  (3, 3), (2, 2), (1, 1), (2, 5, 5, 4))
    x = _random((2, 5, 9, 8), "f32")
    nhwc = _reference("max", x.transpose(0, 2, 3, 1), np.full((2, 5, 4, 5), -np.inf, np.float32),
                      (3, 3), (1, 1, 1, 0), -np.inf, (2, 2), (1, 1))
    np.testing.assert_array_equal(np.asarray(run(src, "f", x)), nhwc.transpose(0, 3, 1, 2))


def test_average_pool_of_a_pad(run: Runner) -> None:
    """count_include_pad: the sum over the zero pad, then a division the pooling's dispatch
    applies to each output row it writes."""
    src, os = _program("sum", "f32", (1, 8, 8, 16), (3, 3), (1, 1, 1, 1), 0.0, (2, 2), (1, 1),
                       False, average=True)
    x = _random((1, 8, 8, 16), "f32")
    total = _reference("sum", x, np.zeros(os, np.float32), (3, 3), (1, 1, 1, 1), 0.0, (2, 2),
                       (1, 1))
    np.testing.assert_array_equal(np.asarray(run(src, "f", x)), total / np.float32(9))


def test_pad_joins_the_poolings_dispatch() -> None:
    """One dispatch: the pad is not a dispatch writing the padded copy."""
    src, _ = _program("max", "f32", (1, 8, 8, 16), (3, 3), (1, 1, 1, 1), -np.inf, (2, 2),
                      (1, 1), False)
    flow = weir.compile_to_phase(src, "test.mlir", weir.CompilerOptions(
        target_backends=("llvm-cpu",)), "flow")
    assert flow.count("flow.executable.export") == 1
    assert "tensor.insert_slice" in flow and "linalg.pooling_nhwc_max" in flow

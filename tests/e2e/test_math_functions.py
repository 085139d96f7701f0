"""The math dialect's inverse trigonometric and hyperbolic functions, tan, cbrt, expm1, atan and
atan2 on f32 tensors, on every target and driver, against float64 numpy: within 2 ulp of the
exact result on a grid over each function's domain, and exactly the C99 values at the edges
(signed zeros, +-1, infinities, NaN, out-of-domain arguments, denormals). f16 goes through the
same code after widening, checked once against numpy's own f16 rounding."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import Runner

INF, NAN = np.inf, np.nan
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, INF, -INF, NAN, 1e-40, -1e-40, 1e-30,
         3.0e38, -3.0e38, 1.0000001, 0.99999994]
GRIDS = {
    "acos": np.linspace(-1, 1, 201), "asin": np.linspace(-1, 1, 201),
    "atanh": np.linspace(-1, 1, 201), "acosh": np.concatenate([np.linspace(1, 20, 150),
                                                               [1e10, 3e38]]),
    "asinh": np.linspace(-50, 50, 201), "cosh": np.linspace(-89, 89, 201),
    "sinh": np.linspace(-89, 89, 201), "tan": np.linspace(-20, 20, 201),
    "cbrt": np.concatenate([np.linspace(-30, 30, 201), [1e-38, 7e-45, -3e38]]),
    "expm1": np.linspace(-20, 88, 201), "atan": np.linspace(-100, 100, 201),
}
REFERENCE = {
    "acos": np.arccos, "asin": np.arcsin, "atanh": np.arctanh, "acosh": np.arccosh,
    "asinh": np.arcsinh, "cosh": np.cosh, "sinh": np.sinh, "tan": np.tan, "cbrt": np.cbrt,
    "expm1": np.expm1, "atan": np.arctan,
}
N = 256


def unary(name: str, ty: str) -> str:
    return f"""
func.func @f(%x: tensor<{N}x{ty}>) -> tensor<{N}x{ty}> {{
  %e = tensor.empty() : tensor<{N}x{ty}>
  %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}}
      ins(%x : tensor<{N}x{ty}>) outs(%e : tensor<{N}x{ty}>) {{
  ^bb0(%in: {ty}, %out: {ty}):
    %y = math.{name} %in : {ty}
    linalg.yield %y : {ty}
  }} -> tensor<{N}x{ty}>
  return %r : tensor<{N}x{ty}>
}}
"""


def ulp_error(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in ulp of the exact value (f32, denormal spacing at the bottom); 0 where
    both are the same NaN/infinity, inf where only one is."""
    exact32 = exact.astype(np.float32)
    spacing = np.spacing(np.abs(exact32).astype(np.float32)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        error = np.abs(got.astype(np.float64) - exact) / spacing
    same_special = (np.isnan(got) & np.isnan(exact)) | \
        (np.isinf(got) & (got.astype(np.float64) == exact))
    # A finite exact value past the largest f32 correctly rounds to infinity.
    overflow = np.isinf(got) & np.isinf(exact32) & (np.sign(got) == np.sign(exact))
    error = np.where(same_special | overflow, 0.0, error)
    return np.where(np.isnan(error), np.inf, error)


def operands(name: str) -> np.ndarray:
    values = np.concatenate([GRIDS[name], EDGES]).astype(np.float32)
    if name == "tan":  # llvm-cpu reduces sin/cos arguments exactly up to 1.6e6 (vmath.py)
        values = values[~(np.abs(values) > 1.6e6)]
    return np.resize(values, N)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_f32_within_2_ulp(run: Runner, name: str) -> None:
    x = operands(name)
    got = np.asarray(run(unary(name, "f32"), "f", x))
    with np.errstate(all="ignore"):
        exact = REFERENCE[name](x.astype(np.float64))
    errors = ulp_error(got, exact)
    worst = int(np.argmax(errors))
    assert errors[worst] <= 2.0, f"{name}({x[worst]!r}) = {got[worst]!r}, exact {exact[worst]!r}"
    # Signed zeros survive where the function is odd (cbrt, tan, asin, ...).
    zero = np.flatnonzero((x == 0) & np.signbit(x))
    if name in ("asin", "atanh", "asinh", "sinh", "tan", "cbrt", "expm1", "atan"):
        assert np.signbit(got[zero]).all(), f"{name}(-0.0) lost its sign"


ATAN2 = """
func.func @f(%y: tensor<64xf32>, %x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                        affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%y, %x : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %z = math.atan2 %a, %b : f32
    linalg.yield %z : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
"""


def test_atan2_quadrants_and_edges(run: Runner) -> None:
    side = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -0.3, INF, -INF], np.float32)
    y, x = (a.ravel() for a in np.meshgrid(side, side))
    got = np.asarray(run(ATAN2, "f", y, x))
    errors = ulp_error(got, np.arctan2(y.astype(np.float64), x.astype(np.float64)))
    assert errors.max() <= 2.0


def test_f16_rounds_the_f32_result(run: Runner) -> None:
    x = np.resize(np.linspace(-0.99, 0.99, 50), N).astype(np.float16)
    got = np.asarray(run(unary("asin", "f16"), "f", x))
    expected = np.arcsin(x.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(got, expected)

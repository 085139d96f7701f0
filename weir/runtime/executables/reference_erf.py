"""erf with numpy only (no per-element Python, no scipy): a Taylor series for |x| < 3 and the
asymptotic expansion of erfc beyond, both evaluated in float64. Absolute error is below 1e-8
everywhere, well inside f32's precision."""

from __future__ import annotations

import math

import numpy as np

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# erf(x) = 2/sqrt(pi) * x * sum_n (-1)^n x^(2n) / (n! (2n+1)); 60 terms reach 1e-17 at |x| = 3.
_TAYLOR = [(-1.0) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(60)]
# erfc(x) ~ exp(-x^2)/(x sqrt(pi)) * sum_n (-1)^n (2n-1)!! / (2x^2)^n, truncated near its
# smallest term for x >= 3.
_ASYMPTOTIC = [(-1.0) ** n * math.prod(range(1, 2 * n, 2)) for n in range(9)]
_SPLIT = 3.0


def erf(x: np.ndarray) -> np.ndarray:
    x64 = np.asarray(x, dtype=np.float64)
    ax = np.abs(x64)
    small = ax < _SPLIT
    t = np.where(small, x64 * x64, 0.0)
    series = np.zeros_like(t)
    for c in reversed(_TAYLOR):
        series = series * t + c
    near = _TWO_OVER_SQRT_PI * x64 * series
    with np.errstate(all="ignore"):
        big = np.where(small, _SPLIT, ax)
        inv = 1.0 / (2.0 * big * big)
        tail = np.zeros_like(big)
        for c in reversed(_ASYMPTOTIC):
            tail = tail * inv + c
        erfc = np.exp(-big * big) / (big * math.sqrt(math.pi)) * tail
        far = np.copysign(1.0 - erfc, x64)
    out = np.where(small, near, far)
    return np.where(np.isnan(x64), np.nan, out)

"""The math dialect's inverse trigonometric and hyperbolic functions, `tan` and `cbrt`, built from
vmath.py's kernels (atan2, log1p, log, exp, expm1, sin/cos, sqrt) by identities chosen to stay
accurate across the whole domain, branch-free like the rest of vmath.

f32 evaluates the identity in f64 and rounds once: vmath's f64 kernels are within 2.5 f64 ulp,
and the identities lose at most a few f64 ulp more, so the f32 result is within 1 ulp of exact
(nearly always correctly rounded); overflow and underflow happen at the final rounding, where
f32's own do. f64 evaluates the same identities in f64: within 3 ulp as measured, `tan` (a quotient of two
results within ~1.2 ulp each) within 4.

Identities (a = |x|, with the sign restored where the function is odd):
  asin x  = atan2(x, sqrt((1 - x)(1 + x)))      acos x = atan2(sqrt((1 - x)(1 + x)), x)
  atanh a = log1p(2a / (1 - a)) / 2
  asinh a = log1p(a + a^2 / (1 + sqrt(1 + a^2))), log(a) + ln 2 past 2^28
  acosh x = log1p(t + sqrt(t (t + 2))) with t = x - 1, log(x) + ln 2 past 2^28
  cosh a  = e/2 + 1/(2e), e = exp(a);  sinh a = (m + m / (m + 1)) / 2, m = expm1(a);
            both (exp(a/2))^2 / 2 past 709, where exp(a) alone overflows
  tan x   = sin x / cos x
  cbrt a  = Newton's iteration y -= (y^3 - a) / 3y^2 from an exponent-thirding guess
(1 - x)(1 + x) is exact to an ulp near |x| = 1, where 1 - x^2 would cancel; the log1p forms keep
full relative accuracy near 0 and 1, where log(...) forms would not. Out-of-domain arguments
give NaN (through sqrt/log1p of a negative number, or a check for acosh); infinities and signed zeros come out as C99
says."""

from __future__ import annotations

from collections.abc import Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import vmath as v

_LN2 = 0.6931471805599453
# Past this, asinh/acosh are log(2a) to f64 precision and a^2 may overflow.
_LOG_ONLY = 2.0 ** 28
# Largest a whose exp(a) is finite in f64 (709.78...): past it cosh/sinh square exp(a/2).
_EXP_LIMIT = 709.0
# cbrt: f64 bit pattern of a, divided by 3, plus this, approximates the bits of cbrt(a)
# (exponent thirded, mantissa linearly interpolated): within 4%, which 5 Newton steps take to
# the last bit.
_CBRT_BIAS = 0x2A9F7893782DA1CE
_CBRT_STEPS = 5
# Denormal f64 arguments are scaled by 2^450 (a cube) first, and the result by 2^-150.
_TINY = 2.0 ** -1000


def _asin(e: v._Emitter, x: ir.Value) -> ir.Value:
    return v._atan2(e, x, _cos_of_asin(e, x))


def _acos(e: v._Emitter, x: ir.Value) -> ir.Value:
    return v._atan2(e, _cos_of_asin(e, x), x)


def _cos_of_asin(e: v._Emitter, x: ir.Value) -> ir.Value:
    """sqrt(1 - x^2) as sqrt((1 - x)(1 + x)): NaN for |x| > 1."""
    one = e.c(1.0)
    return e.intrinsic("sqrt", e.mul(e.sub(one, x), e.add(one, x)))


def _atanh(e: v._Emitter, x: ir.Value) -> ir.Value:
    # On |x|: near -1 the argument of log1p would be near -1, where its rounding is amplified.
    a = e.fabs(x)
    return e.copysign(e.mul(e.c(0.5), v._log1p(e, e.div(e.add(a, a), e.sub(e.c(1.0), a)))), x)


def _log_of_twice(e: v._Emitter, a: ir.Value) -> ir.Value:
    return e.add(v._log(e, a), e.c(_LN2))


def _asinh(e: v._Emitter, x: ir.Value) -> ir.Value:
    a = e.fabs(x)
    square = e.mul(a, a)
    small = v._log1p(e, e.add(a, e.div(square, e.add(e.c(1.0), e.intrinsic(
        "sqrt", e.add(e.c(1.0), square))))))
    return e.copysign(e.sel(e.gt(a, e.c(_LOG_ONLY)), _log_of_twice(e, a), small), x)


def _acosh(e: v._Emitter, x: ir.Value) -> ir.Value:
    t = e.sub(x, e.c(1.0))
    small = v._log1p(e, e.add(t, e.intrinsic("sqrt", e.mul(t, e.add(t, e.c(2.0))))))
    # Below 1, t (t + 2) is positive again past t = -2: the domain check cannot be left to sqrt.
    small = e.sel(e.lt(x, e.c(1.0)), e.c(float("nan")), small)
    return e.sel(e.gt(x, e.c(_LOG_ONLY)), _log_of_twice(e, x), small)


def _half_square_of_exp_half(e: v._Emitter, a: ir.Value) -> ir.Value:
    """exp(a) / 2 for a past _EXP_LIMIT: (exp(a/2))^2 / 2, finite up to 710.47."""
    h = v._exp(e, e.mul(a, e.c(0.5)))
    return e.mul(e.mul(h, e.c(0.5)), h)


def _cosh(e: v._Emitter, x: ir.Value) -> ir.Value:
    a = e.fabs(x)
    big = e.gt(a, e.c(_EXP_LIMIT))
    grown = v._exp(e, e.sel(big, e.c(0.0), a))
    small = e.add(e.mul(e.c(0.5), grown), e.div(e.c(0.5), grown))
    return e.sel(big, _half_square_of_exp_half(e, a), small)


def _sinh(e: v._Emitter, x: ir.Value) -> ir.Value:
    a = e.fabs(x)
    big = e.gt(a, e.c(_EXP_LIMIT))
    m = v._expm1(e, e.sel(big, e.c(0.0), a))
    small = e.mul(e.c(0.5), e.add(m, e.div(m, e.add(m, e.c(1.0)))))
    return e.copysign(e.sel(big, _half_square_of_exp_half(e, a), small), x)


def _tan(e: v._Emitter, x: ir.Value) -> ir.Value:
    return e.div(v._sincos(e, x, cosine=False), v._sincos(e, x, cosine=True))


def _cbrt(e: v._Emitter, x: ir.Value) -> ir.Value:
    a = e.fabs(x)
    tiny = e.lt(a, e.c(_TINY))
    scaled = e.sel(tiny, e.mul(a, e.c(2.0 ** 450)), a)
    bits = e.b.add(e.b.udiv(e.as_int(scaled), e.ic(3)), e.ic(_CBRT_BIAS))
    y = e.as_float(bits)
    third = e.c(1.0 / 3.0)
    for _ in range(_CBRT_STEPS):
        # y - (y^3 - a) / 3y^2, written without y^3, which overflows for a near the largest f64.
        y = e.sub(y, e.mul(e.sub(y, e.div(scaled, e.mul(y, y))), third))
    y = e.sel(tiny, e.mul(y, e.c(2.0 ** -150)), y)
    # 0 and infinity are their own cube roots (the iteration would not reach them); NaN stays.
    fixed = e.b.or_(e.eq(a, e.c(0.0)), e.eq(a, e.c(float("inf"))))
    return e.copysign(e.sel(fixed, a, y), x)


_IDENTITIES: dict[str, Callable[..., ir.Value]] = {
    "asin": _asin, "acos": _acos, "atanh": _atanh, "asinh": _asinh, "acosh": _acosh,
    "cosh": _cosh, "sinh": _sinh, "tan": _tan, "cbrt": _cbrt,
}


def _in_f64(fn: Callable[..., ir.Value]) -> Callable[..., ir.Value]:
    def emit(e: v._Emitter, *args: ir.Value) -> ir.Value:
        if e.bits == 64:
            return fn(e, *args)
        d = e.with_bits(64)
        return e.b.fptrunc(fn(d, *(e.b.fpext(a, d.ty) for a in args)), e.ty)
    return emit


DERIVED_FUNCTIONS: dict[str, Callable[..., ir.Value]] = {
    name: _in_f64(fn) for name, fn in _IDENTITIES.items()}

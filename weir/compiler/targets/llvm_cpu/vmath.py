"""Transcendental functions of the math dialect, emitted inline as branch-free LLVM IR.

The llvm-cpu target writes scalar loop bodies and relies on LLVM's loop vectoriser. A call to
libm (`expf`, `logf`, ...) stops that: LLVM has no vector variant to substitute and the loop
stays scalar, one call per element. So every function here is straight-line code made of
arithmetic, `select`, bitcasts and integer operations, which vectorises like any other loop
body. No tables either: a gather per element would cost more than the polynomial it saves.

Each function is a range reduction, a polynomial and a reconstruction. The coefficients are
minimax fits made for this module with a weighted Remez exchange in mpmath (50 digits) on the
stated interval, refitted with each lower-order coefficient rounded to the target precision in
turn, so the rounding of the constants is part of the fit. The errors quoted next to each table
are the weighted (relative unless said) errors of the rounded polynomial, in units of 2**-24
(f32) or 2**-53 (f64). Split constants (`_HI`/`_LO` pairs) were computed with mpmath too: the
high part has trailing zero bits so that its product with a reduction integer is exact even
without a fused multiply-add.

Accuracy, f32 (against float64 numpy/math, see tests/compiler/llvm_cpu/test_vmath.py): within
2 ulp of the exact result everywhere, 1.5 at worst as measured, with or without FMA. Denormal
results are produced, not flushed. `sin`/`cos` reduce the argument in f64 (x - k pi/2, pi/2 in
three parts): exact for |x| < 2**20 pi/2 (1.6e6) on any CPU, and to about 3e10 where the
target has FMA. Past that the nearest k is no longer certain; the reduced argument is clamped
so results stay in [-1, 1], but their error grows with |x|, and beyond ~3e15 (where f32 values
are 2**28 apart, far more than a period) they carry no information. `pow` for f32 is computed
in f64 (log2, product, exp2) and rounded once, so it is close to correctly rounded.

f64 uses the same algorithms with longer polynomials: within 2.5 ulp (5e-16 relative) as
measured. `pow` and `erf` are the exception: for f64 they call libm's `pow`/`erf`, which
resolve in-process when the object is loaded, and keep those loops scalar. An f64 `pow` of
1e-15 accuracy needs a double-double logarithm, and `erf` a second, longer `erfc` fit; f64 is
not the fast path, so that code was not worth its size.

No fast-math flags are set anywhere: NaN, infinities and signed zeros keep their meaning.
`llvm.fmuladd` is used for the polynomials, which LLVM fuses where the target has FMA (the
algorithms are accurate either way; the f64 reduction of `sin`/`cos` just reaches further).
Internal rounding to an integer uses the add-a-large-constant trick rather than a rounding
intrinsic, so nothing here needs SSE4.1. Where the CPU has AVX-512 (`native_ldexp`), the exp
family's final scaling by 2**k is `llvm.ldexp`, which LLVM lowers to vscalef, vectorised like
the rest: it rounds once as the portable two multiplications do, so the bits are the same, in
two instructions instead of eight. The functions that are intrinsics (`sqrt`, `absf`,
`floor`, `ceil`, `round`, `roundeven`, `fma`) are emitted as such: single instructions from
x86-64-v2 on; on baseline x86-64 LLVM turns the rounding ones into libm calls, and `fma`,
which must round once, is a call to `fmaf`/`fma` on any CPU without FMA.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.scalars import overload_name

MATH_FUNCTIONS: frozenset[str] = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "erf", "sin", "cos",
    "sqrt", "rsqrt", "pow", "absf", "floor", "ceil", "round", "roundeven", "fma", "atan",
    "atan2", "acos", "acosh", "asin", "asinh", "atanh", "cbrt", "cosh", "sinh", "tan",
})

_ARITY = {"pow": 2, "atan2": 2, "fma": 3}

# Functions LLVM lowers to instructions; math dialect name -> intrinsic name.
_INTRINSICS = {"sqrt": "sqrt", "absf": "fabs", "floor": "floor", "ceil": "ceil",
               "round": "round", "roundeven": "roundeven", "fma": "fma"}


@dataclass(frozen=True)
class _Format:
    mantissa: int   # stored mantissa bits
    bias: int


_FORMATS = {32: _Format(23, 127), 64: _Format(52, 1023)}

_INF = float("inf")
_NAN = float("nan")
_LOG2E = 1.4426950408889634
_TWO_OVER_PI = 0.6366197723675814

# ln 2 = _LN2_HI + _LN2_LO; the high part has 16 (f32) / 42 (f64) significant bits, enough for
# the largest exponent of either format times it to be exact.
_LN2_HI = {32: 0.693145751953125, 64: 0.6931471805598903}
_LN2_LO = {32: 1.428606765330187e-06, 64: 5.497923018708371e-14}
# log2(e) and log10(e) with a 12 (f32) / 27 (f64) bit high part, paired with the mantissa of
# the reduced argument cut to 12 / 26 bits: the product of the high parts is exact.
_LOG2E_HI = {32: 1.44287109375, 64: 1.4426950365304947}
_LOG2E_LO = {32: -0.00017605285393074155, 64: 4.3584687174185184e-09}
_LOG10E_HI = {32: 0.434326171875, 64: 0.434294480830431}
_LOG10E_LO = {32: -3.168997136526741e-05, 64: 1.0728208431540585e-09}
_LOG10_2_HI = {32: 0.30103302001953125, 64: 0.30102999566395283}
_LOG10_2_LO = {32: -3.024355464731343e-06, 64: 2.8363394551044964e-14}
_HI_MASK = {32: ~0xFFF, 64: ~((1 << 27) - 1)}
# Bit pattern of sqrt(1/2): log reduces its argument to a mantissa in [sqrt(1/2), sqrt(2)).
_SQRT_HALF_BITS = {32: 0x3F3504F3, 64: 0x3FE6A09E667F3BCD}
# pi/2 and pi as the nearest value plus the rounding remainder.
_PIO2_HI = {32: 1.5707963705062866, 64: 1.5707963267948966}
_PIO2_LO = {32: -4.371138828673793e-08, 64: 6.123233995736766e-17}
_PI_HI = {32: 3.1415927410125732, 64: 3.141592653589793}
_PI_LO = {32: -8.742277657347586e-08, 64: 1.2246467991473532e-16}
_TWO_OVER_SQRTPI = 1.1283791670955126
# pi/2 in three parts of 33, 33 and 53 bits for the f64 reduction of sin and cos: the products
# with the quadrant count are exact below 2**20 even without FMA; the rest of pi/2 is ~1e-37.
_PIO2_1 = float.fromhex("0x1.921fb54400000p+0")
_PIO2_2 = float.fromhex("0x1.0b4611a600000p-34")
_PIO2_3 = float.fromhex("0x1.3198a2e037073p-69")

# expm1(r) ~ r + r**2 * P(r) on |r| <= ln2/2, relative to expm1: f32 0.28, f64 0.0025.
_EXPM1 = {
    32: (0.4999999701976776, 0.1666654348373413, 0.04166720062494278, 0.008366518653929234,
         0.0013882523635402322),
    64: (0.5, 0.16666666666666677, 0.04166666666666669, 0.008333333333321775,
         0.0013888888888886738, 0.0001984126988534735, 2.480158729498321e-05,
         2.755724520517028e-06, 2.755731569115805e-07, 2.5108650704026225e-08,
         2.0898022604515766e-09),
}
# 2**r ~ 1 + r * P(r) on |r| <= 1/2, relative to 2**r: f32 0.06, f64 0.0094. P(0) is ln 2
# rounded, the remaining coefficients were fitted around it.
_EXP2 = {
    32: (0.6931471824645996, 0.24022647738456726, 0.05550359562039375, 0.009618517942726612,
         0.0013390958774834871, 0.00015324316336773336),
    64: (0.6931471805599453, 0.2402265069591007, 0.055504108664823505, 0.00961812910762988,
         0.0013333558145979959, 0.0001540353039029222, 1.5252734235513339e-05,
         1.3215489592941688e-06, 1.0177898254151457e-07, 7.05379136181274e-09,
         4.4790670977372457e-10, 2.733017428941088e-11),
}
# f32: log1p(f) ~ f - f**2/2 + f**3 * P(f) on f in [sqrt(1/2) - 1, sqrt(2) - 1]; 0.098.
_LOG1P_32 = (0.3333333134651184, -0.2500081956386566, 0.2000124156475067, -0.1662341058254242,
             0.14201590418815613, -0.13159607350826263, 0.1276208609342575,
             -0.07636234164237976)
# f64: log1p(f) = 2 atanh(s), s = f / (2 + f); 2 atanh(s) ~ 2s + s * z * P(z), z = s**2 in
# [0, 0.02944]; relative to log1p: 0.011.
_ATANH_64 = (0.6666666666666734, 0.3999999999941694, 0.2857142874193169, 0.2222219861638078,
             0.18183562231915992, 0.1531410085153139, 0.1479547524416466)
# tanh(x) ~ x + x**3 * P(x**2) on [0, 0.9] (f32: 0.003) and [0, 0.625] (f64: 0.0034); above
# that, 1 - 2 / (exp(2x) + 1), whose rounding errors shrink as tanh nears 1: the f32 bound
# keeps them under one ulp, the f64 one the polynomial shorter.
_TANH_SMALL = {32: 0.9, 64: 0.625}
_TANH = {
    32: (-0.3333333134651184, 0.13333259522914886, -0.053958866745233536, 0.02181123197078705,
         -0.008659778162837029, 0.0031646813731640577, -0.0009000871796160936,
         0.0001376885047648102),
    64: (-0.33333333333333315, 0.1333333333332996, -0.05396825396614945, 0.021869488470699406,
         -0.008863234338757098, 0.0035921142224619555, -0.0014557272099426908,
         0.0005894566194128084, -0.00023702399089642318, 9.157831664143239e-05,
         -3.020588301785534e-05, 6.050157474206545e-06),
}
# erf(x) ~ (2/sqrt(pi)) x + x**3 * P(x**2) on [0, 1], relative: f32 0.025.
_ERF_SMALL = (-0.3761262893676758, 0.11283603310585022, -0.026854202151298523,
              0.005188598297536373, -0.0008009398588910699, 7.842548802727833e-05)
# erfc(x) exp(x**2) ~ P(x - 2.5) on [1, 4], weighted by exp(-x**2) (absolute error of erfc):
# f32 0.0077.
_ERFC_TAIL = (0.21080633997917175, -0.07434933632612228, 0.02492966130375862,
              -0.008000114001333714, 0.002520516747608781, -0.0006495281122624874,
              0.0002234594721812755, -0.00013621700054500252, -5.774471355834976e-05,
              -2.7984891858068295e-05)
# sin(r) ~ r + r**3 * P(r**2), cos(r) ~ 1 - r**2/2 + r**4 * Q(r**2) on |r| <= pi/4, relative:
# sin f32 0.06, f64 0.0008; cos f32 0.003, f64 0.00002.
_SIN = {
    32: (-0.1666666716337204, 0.008333329111337662, -0.00019839312881231308,
         2.7181215500604594e-06),
    64: (-0.16666666666666666, 0.00833333333333304, -0.00019841269840959285,
         2.7557319071880108e-06, -2.5052070283416993e-08, 1.605422047974366e-10,
         -7.384541198867701e-13),
}
_COS = {
    32: (0.04166664555668831, -0.0013887316454201937, 2.4433154976577498e-05),
    64: (0.041666666666666664, -0.0013888888888888389, 2.4801587301180814e-05,
         -2.7557319060679106e-07, 2.087672200827358e-09, -1.1466861800468179e-11,
         4.592690400304644e-14),
}
# sin/cos keep |r| within this bound so that arguments too large to reduce stay in [-1, 1].
_SINCOS_R_MAX = 0.7854
# atan(t) ~ t + t**3 * P(t**2) on [0, 1], relative: f32 0.044, f64 0.042.
_ATAN = {
    32: (-0.33333298563957214, 0.1999852955341339, -0.14264015853405, 0.10950881242752075,
         -0.08399314433336258, 0.057881712913513184, -0.03109758347272873,
         0.01086920965462923, -0.0017829971620813012),
    64: (-0.3333333333333307, 0.19999999999951748, -0.1428571428258798, 0.11111111007338549,
         -0.09090907007734239, 0.07692279888135467, -0.06666404416860638, 0.05880529769549945,
         -0.05253526613182129, 0.04722347814891357, -0.04219242226323921, 0.03664313439814665,
         -0.029905709967343198, 0.021987035009427513, -0.013902539062664945,
         0.007197857394101186, -0.002885594219184746, 0.0008315537881108157,
         -0.00015220979952704347, 1.3229857931201003e-05),
}


def emit_math(builder: ir.IRBuilder, name: str, args: list[ir.Value],
              native_ldexp: bool = False) -> ir.Value:
    """Emit math dialect op `name` applied to `args` (f32/f64 scalars or vectors of them, all of
    one type) at the builder's position and return the result, of the same type.
    `native_ldexp`: the target has an ldexp instruction (CpuTarget.native_ldexp)."""
    if name not in MATH_FUNCTIONS:
        raise ValueError(f"emit_math: unknown function '{name}'")
    if len(args) != _ARITY.get(name, 1):
        raise ValueError(f"emit_math: {name} takes {_ARITY.get(name, 1)} operands, "
                         f"got {len(args)}")
    ty = args[0].type
    if any(a.type != ty for a in args):
        raise ValueError(f"emit_math: {name} operands differ in type")
    e = _Emitter(builder, ty, native_ldexp)
    if name in _INTRINSICS:
        return e.intrinsic(_INTRINSICS[name], *args)
    if name == "rsqrt":
        return e.div(e.c(1.0), e.intrinsic("sqrt", args[0]))
    if name in _FUNCTIONS:
        return _FUNCTIONS[name](e, *args)
    from weir.compiler.targets.llvm_cpu.vmath_derived import DERIVED_FUNCTIONS
    return DERIVED_FUNCTIONS[name](e, *args)


class _Emitter:
    """IR helpers for one float type (scalar or vector): constants are splatted to it, integer
    views use the integer type of the same width and lane count."""

    def __init__(self, builder: ir.IRBuilder, ty: ir.Type, native_ldexp: bool = False):
        elem = ty.element if isinstance(ty, ir.VectorType) else ty
        if not isinstance(elem, (ir.FloatType, ir.DoubleType)):
            raise ValueError(f"emit_math: operands must be f32/f64 or vectors of them, not {ty}")
        self.b = builder
        self.ty = ty
        self.lanes = ty.count if isinstance(ty, ir.VectorType) else 0
        self.bits = 32 if isinstance(elem, ir.FloatType) else 64
        self.fmt = _FORMATS[self.bits]
        self.ity = self.like(ir.IntType(self.bits))
        self.native_ldexp = native_ldexp

    def like(self, elem: ir.Type) -> ir.Type:
        """`elem`, or a vector of it with this type's lane count."""
        return ir.VectorType(elem, self.lanes) if self.lanes else elem

    def with_bits(self, bits: int) -> _Emitter:
        return _Emitter(self.b, self.like(ir.FloatType() if bits == 32 else ir.DoubleType()),
                        self.native_ldexp)

    # constants and arithmetic
    def c(self, value: float) -> ir.Constant:
        return ir.Constant(self.ty, value)

    def ic(self, value: int) -> ir.Constant:
        return ir.Constant(self.ity, value)

    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fadd(a, b)

    def sub(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fsub(a, b)

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fmul(a, b)

    def div(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fdiv(a, b)

    def fma(self, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        """a * b + c, fused where the target can."""
        return self.intrinsic("fmuladd", a, b, c)

    def poly(self, x: ir.Value, coeffs: Sequence[float]) -> ir.Value:
        """coeffs[0] + coeffs[1] x + ... by Horner's rule."""
        acc: ir.Value = self.c(coeffs[-1])
        for coeff in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.c(coeff))
        return acc

    def intrinsic(self, name: str, *args: ir.Value) -> ir.Value:
        """llvm.NAME on operands of one type, overloaded on it."""
        return self.call(f"llvm.{name}.{overload_name(args[0].type)}", args[0].type, *args)

    def call(self, name: str, result: ir.Type, *args: ir.Value) -> ir.Value:
        """Call function `name`, declared on first use."""
        fn = self.b.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.b.module, ir.FunctionType(result, [a.type for a in args]), name)
        return self.b.call(fn, args)

    def fabs(self, x: ir.Value) -> ir.Value:
        return self.intrinsic("fabs", x)

    def copysign(self, magnitude: ir.Value, sign: ir.Value) -> ir.Value:
        return self.intrinsic("copysign", magnitude, sign)

    # comparisons (ordered: false when an operand is NaN) and selection
    def lt(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fcmp_ordered("<", a, b)

    def gt(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fcmp_ordered(">", a, b)

    def ge(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fcmp_ordered(">=", a, b)

    def eq(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fcmp_ordered("==", a, b)

    def isnan(self, a: ir.Value) -> ir.Value:
        return self.b.fcmp_unordered("uno", a, a)

    def sel(self, cond: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.select(cond, a, b)

    def clamp(self, x: ir.Value, lo: float, hi: float) -> ir.Value:
        """x limited to [lo, hi]; NaN passes through."""
        x = self.sel(self.gt(x, self.c(hi)), self.c(hi), x)
        return self.sel(self.lt(x, self.c(lo)), self.c(lo), x)

    # integer views
    def as_int(self, x: ir.Value) -> ir.Value:
        return self.b.bitcast(x, self.ity)

    def as_float(self, i: ir.Value) -> ir.Value:
        return self.b.bitcast(i, self.ty)

    def signbit(self, x: ir.Value) -> ir.Value:
        return self.b.icmp_signed("<", self.as_int(x), self.ic(0))

    def rint(self, x: ir.Value) -> tuple[ir.Value, ir.Value]:
        """x rounded to the nearest integer, as a float and as an integer, for
        |x| < 2**(mantissa - 1). Adding 1.5 * 2**mantissa rounds in the adder and leaves the
        integer in the low mantissa bits: no conversion instruction, no poison for NaN."""
        magic = self.c(1.5 * 2.0 ** self.fmt.mantissa)
        t = self.add(x, magic)
        return self.sub(t, magic), self.b.sub(self.as_int(t), self.as_int(magic))

    def pow2(self, k: ir.Value) -> ir.Value:
        """2**k for an integer k in the normal exponent range."""
        return self.as_float(self.b.shl(self.b.add(k, self.ic(self.fmt.bias)),
                                        self.ic(self.fmt.mantissa)))

    def ldexp(self, p: ir.Value, k: ir.Value) -> ir.Value:
        """p * 2**k for k down to twice the smallest exponent, rounded once: results that
        overflow become inf and ones that underflow round correctly to denormals. With
        `native_ldexp` that is `llvm.ldexp` (vscalef and an int-to-float conversion, where two
        factors cost eight instructions); elsewhere LLVM would call libm's ldexp per element,
        so it is two factors built from k's bits, the first product exact."""
        if self.native_ldexp:
            # An i32 exponent in both formats (k is far inside its range): converting it to
            # f64 needs no AVX-512DQ, as an i64 would.
            exponent = k if self.bits == 32 else self.b.trunc(k, self.like(ir.IntType(32)))
            return self.call(f"llvm.ldexp.{overload_name(self.ty)}.{overload_name(exponent.type)}",
                             self.ty, p, exponent)
        half = self.b.ashr(k, self.ic(1))
        return self.mul(self.mul(p, self.pow2(half)), self.pow2(self.b.sub(k, half)))

    def is_integer(self, x: ir.Value) -> ir.Value:
        """Whether x is an integer (infinities count as integers; NaN does not)."""
        big = self.c(2.0 ** self.fmt.mantissa)
        a = self.fabs(x)
        rounded = self.sub(self.add(a, big), big)
        return self.b.or_(self.ge(a, big), self.eq(rounded, a))


# exp family

def _exp_reduce(e: _Emitter, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """k, r_hi, r_lo with x = k ln2 + r_hi + r_lo, |r_hi + r_lo| <= ln2/2. r_hi = x - k ln2_hi
    is exact; keeping r_lo apart spares the result the rounding of r."""
    kf, k = e.rint(e.mul(x, e.c(_LOG2E)))
    return k, e.fma(kf, e.c(-_LN2_HI[e.bits]), x), e.mul(kf, e.c(-_LN2_LO[e.bits]))


def _expm1_tail(e: _Emitter, r_hi: ir.Value, r_lo: ir.Value) -> ir.Value:
    """expm1(r) - r_hi, the part of expm1(r) beyond its exact leading term."""
    r = e.add(r_hi, r_lo)
    return e.fma(e.mul(r, r), e.poly(r, _EXPM1[e.bits]), r_lo)


def _exp_core(e: _Emitter, x: ir.Value) -> ir.Value:
    """exp(x) for x already clamped to where 2**k stays within `ldexp`'s range."""
    k, r_hi, r_lo = _exp_reduce(e, x)
    return e.ldexp(e.add(e.c(1.0), e.add(r_hi, _expm1_tail(e, r_hi, r_lo))), k)


def _exp(e: _Emitter, x: ir.Value) -> ir.Value:
    # Beyond these bounds the result is inf or 0 already; clamping keeps k in ldexp's range.
    lo, hi = (-104.0, 89.0) if e.bits == 32 else (-746.0, 710.0)
    return _exp_core(e, e.clamp(x, lo, hi))


def _exp2(e: _Emitter, x: ir.Value) -> ir.Value:
    lo, hi = (-152.0, 129.0) if e.bits == 32 else (-1077.0, 1025.0)
    x = e.clamp(x, lo, hi)
    kf, k = e.rint(x)
    r = e.sub(x, kf)
    return e.ldexp(e.fma(r, e.poly(r, _EXP2[e.bits]), e.c(1.0)), k)


def _expm1(e: _Emitter, x: ir.Value) -> ir.Value:
    # Below the lower bound expm1 is -1 to working precision.
    lo, hi = (-25.0, 89.0) if e.bits == 32 else (-40.0, 710.0)
    k, r_hi, r_lo = _exp_reduce(e, e.clamp(x, lo, hi))
    tail = _expm1_tail(e, r_hi, r_lo)
    # 2**k (1 + r_hi + tail) - 1: the first fma is exact or nearly so for small k, which
    # leaves one rounding of note. Only k = bias + 1, where 2**k itself overflows, goes
    # through the two-factor scaling (the result is inf or near it).
    s = e.pow2(k)
    near = e.fma(s, tail, e.fma(s, r_hi, e.sub(s, e.c(1.0))))
    far = e.ldexp(e.add(e.c(1.0), e.add(r_hi, tail)), k)
    result = e.sel(e.b.icmp_signed(">", k, e.ic(e.fmt.bias)), far, near)
    return e.sel(e.eq(x, e.c(0.0)), x, result)  # keeps the sign of zero


# log family

def _log_reduce(e: _Emitter, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(k, f, g) with x = 2**k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)) and log1p(f) ~ f + g;
    f is exact, g carries the polynomial's rounding. Only meaningful for finite x > 0."""
    fmt = e.fmt
    tiny = e.lt(x, e.c(2.0 ** (1 - fmt.bias)))  # denormal: scale it into the normal range
    x = e.sel(tiny, e.mul(x, e.c(2.0 ** (fmt.mantissa + 1))), x)
    ix = e.b.sub(e.as_int(x), e.ic(_SQRT_HALF_BITS[e.bits]))
    k = e.b.add(e.b.ashr(ix, e.ic(fmt.mantissa)),
                e.sel(tiny, e.ic(-(fmt.mantissa + 1)), e.ic(0)))
    m = e.as_float(e.b.add(e.b.and_(ix, e.ic((1 << fmt.mantissa) - 1)),
                           e.ic(_SQRT_HALF_BITS[e.bits])))
    f = e.sub(m, e.c(1.0))
    if e.bits == 32:
        g = e.mul(e.mul(f, f), e.fma(f, e.poly(f, _LOG1P_32), e.c(-0.5)))
    else:
        # 2 atanh(s) = 2s + s T(z) and 2s = f - s f, so log1p(f) = f - s (f - T(z)).
        s = e.div(f, e.add(f, e.c(2.0)))
        z = e.mul(s, s)
        g = e.mul(s, e.sub(e.mul(z, e.poly(z, _ATANH_64)), f))
    return e.b.sitofp(k, e.ty), f, g


def _log_specials(e: _Emitter, x: ir.Value, result: ir.Value) -> ir.Value:
    result = e.sel(e.eq(x, e.c(_INF)), e.c(_INF), result)
    result = e.sel(e.eq(x, e.c(0.0)), e.c(-_INF), result)
    return e.sel(e.b.fcmp_unordered("<", x, e.c(0.0)), e.c(_NAN), result)  # x < 0 or NaN


def _ln_sum(e: _Emitter, k: ir.Value, f: ir.Value, g: ir.Value) -> ir.Value:
    """k ln2 + f + g, small terms first."""
    return e.fma(k, e.c(_LN2_HI[e.bits]), e.add(f, e.fma(k, e.c(_LN2_LO[e.bits]), g)))


def _log(e: _Emitter, x: ir.Value) -> ir.Value:
    return _log_specials(e, x, _ln_sum(e, *_log_reduce(e, x)))


def _scaled_log1p(e: _Emitter, f: ir.Value, g: ir.Value, hi: float, lo: float,
                  extra: ir.Value) -> ir.Value:
    """(f + g) * (hi + lo) + extra, with f cut so that its high part times `hi` is exact: the
    only large rounding is the final addition."""
    f_hi = e.as_float(e.b.and_(e.as_int(f), e.ic(_HI_MASK[e.bits])))
    f_lo = e.sub(f, f_hi)
    small = e.fma(f_lo, e.c(hi), e.fma(f, e.c(lo), e.fma(g, e.c(hi + lo), extra)))
    return e.add(e.mul(f_hi, e.c(hi)), small)


def _log2(e: _Emitter, x: ir.Value) -> ir.Value:
    k, f, g = _log_reduce(e, x)
    frac = _scaled_log1p(e, f, g, _LOG2E_HI[e.bits], _LOG2E_LO[e.bits], e.c(0.0))
    return _log_specials(e, x, e.add(k, frac))


def _log10(e: _Emitter, x: ir.Value) -> ir.Value:
    k, f, g = _log_reduce(e, x)
    frac = _scaled_log1p(e, f, g, _LOG10E_HI[e.bits], _LOG10E_LO[e.bits],
                         e.mul(k, e.c(_LOG10_2_LO[e.bits])))
    return _log_specials(e, x, e.fma(k, e.c(_LOG10_2_HI[e.bits]), frac))


def _log1p(e: _Emitter, x: ir.Value) -> ir.Value:
    u = e.add(x, e.c(1.0))
    k, f, g = _log_reduce(e, u)
    # log1p(x) = log(u) + c/u to first order, c being the rounding error of 1 + x.
    c = e.sub(x, e.sub(u, e.c(1.0)))
    result = _ln_sum(e, k, f, e.add(g, e.div(c, u)))
    result = e.sel(e.eq(x, e.c(_INF)), e.c(_INF), result)
    result = e.sel(e.eq(x, e.c(-1.0)), e.c(-_INF), result)
    result = e.sel(e.b.fcmp_unordered("<", x, e.c(-1.0)), e.c(_NAN), result)
    return e.sel(e.eq(x, e.c(0.0)), x, result)


def _pow(e: _Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    if e.bits == 64:
        return _libm(e, "pow", x, y)
    # |x|**y = exp2(y log2|x|) in f64, where the product keeps ~1e-14 relative accuracy even
    # near 128, which an f32 exp2 would amplify into many ulp; then the C99 special cases.
    d = e.with_bits(64)
    xd, yd = e.b.fpext(x, d.ty), e.b.fpext(y, d.ty)
    magnitude = e.b.fptrunc(_exp2(d, d.mul(yd, _log2(d, d.fabs(xd)))), e.ty)
    y_int = e.is_integer(y)
    y_odd = e.b.and_(y_int, e.b.not_(e.is_integer(e.mul(y, e.c(0.5)))))
    result = e.sel(e.b.and_(e.signbit(x), y_odd), e.b.fneg(magnitude), magnitude)
    negative_finite = e.b.and_(e.lt(x, e.c(0.0)), e.gt(x, e.c(-_INF)))
    result = e.sel(e.b.and_(negative_finite, e.b.not_(y_int)), e.c(_NAN), result)
    one = e.b.or_(e.eq(y, e.c(0.0)), e.eq(x, e.c(1.0)))
    one = e.b.or_(one, e.b.and_(e.eq(x, e.c(-1.0)), e.eq(e.fabs(y), e.c(_INF))))
    return e.sel(one, e.c(1.0), result)


# hyperbolic and error functions

def _tanh(e: _Emitter, x: ir.Value) -> ir.Value:
    a = e.fabs(x)
    t = e.mul(a, a)
    small = e.fma(a, e.mul(t, e.poly(t, _TANH[e.bits])), a)
    # 1 - 2 / (exp(2a) + 1), with a capped where tanh rounds to 1 (9.01 for f32, 19.1 for f64).
    cap = e.c(10.0 if e.bits == 32 else 20.0)
    a_cap = e.sel(e.gt(a, cap), cap, a)
    big = e.sub(e.c(1.0), e.div(e.c(2.0), e.add(_exp_core(e, e.add(a_cap, a_cap)), e.c(1.0))))
    return e.copysign(e.sel(e.lt(a, e.c(_TANH_SMALL[e.bits])), small, big), x)


def _erf(e: _Emitter, x: ir.Value) -> ir.Value:
    if e.bits == 64:
        return _libm(e, "erf", x)
    a = e.fabs(x)
    t = e.mul(a, a)
    # a + a (2/sqrt(pi) - 1 + t P(t)): the exact a carries most of the value, so no product
    # with a rounded leading coefficient decides the last bit.
    small = e.fma(a, e.fma(t, e.poly(t, _ERF_SMALL), e.c(_TWO_OVER_SQRTPI - 1.0)), a)
    # 1 - exp(-a**2) P(a), a capped at 4 where erf rounds to 1.
    a_cap = e.sel(e.gt(a, e.c(4.0)), e.c(4.0), a)
    damp = _exp_core(e, e.b.fneg(e.mul(a_cap, a_cap)))
    tail = e.poly(e.sub(a_cap, e.c(2.5)), _ERFC_TAIL)
    big = e.fma(e.b.fneg(damp), tail, e.c(1.0))
    return e.copysign(e.sel(e.lt(a, e.c(1.0)), small, big), x)


# trigonometric functions

def _sincos(e: _Emitter, x: ir.Value, cosine: bool) -> ir.Value:
    """sin or cos: x = k pi/2 + r in f64 (exact for f32 inputs up to large k), polynomial in
    the working precision, quadrant k mod 4 picks sin/cos of r and the sign."""
    d = e.with_bits(64)
    xd = x if e.bits == 64 else e.b.fpext(x, d.ty)
    kf, k = d.rint(d.mul(xd, d.c(_TWO_OVER_PI)))
    r_lo: ir.Value | None = None
    rd = d.fma(kf, d.c(-_PIO2_1), xd)
    rd = d.fma(kf, d.c(-_PIO2_2), rd)
    rd = d.fma(kf, d.c(-_PIO2_3), rd)
    if e.bits == 32:
        # f32 r plus what rounding it dropped: that error would otherwise be a whole ulp of
        # the result where sin r is just below a power of two and r just above.
        r = e.b.fptrunc(rd, e.ty)
        r_lo = e.b.fptrunc(d.sub(rd, e.b.fpext(r, d.ty)), e.ty)
        k = e.b.trunc(k, e.ity)
    else:
        r = rd
    if cosine:
        k = e.b.add(k, e.ic(1))
    r = e.clamp(r, -_SINCOS_R_MAX, _SINCOS_R_MAX)
    z = e.mul(r, r)
    sin_poly = e.mul(z, e.poly(z, _SIN[e.bits]))
    cos_poly = e.fma(z, e.poly(z, _COS[e.bits]), e.c(-0.5))
    if r_lo is None:
        sin_r = e.fma(r, sin_poly, r)
        cos_r = e.fma(z, cos_poly, e.c(1.0))
    else:  # sin(r + r_lo) ~ sin r + r_lo, cos(r + r_lo) ~ cos r - r r_lo
        sin_r = e.add(r, e.fma(r, sin_poly, r_lo))
        cos_r = e.add(e.c(1.0), e.fma(z, cos_poly, e.mul(e.b.fneg(r), r_lo)))
    odd = e.b.icmp_signed("!=", e.b.and_(k, e.ic(1)), e.ic(0))
    sign = e.b.shl(e.b.and_(k, e.ic(2)), e.ic(e.bits - 2))
    result = e.as_float(e.b.xor(e.as_int(e.sel(odd, cos_r, sin_r)), sign))
    return result if cosine else e.sel(e.eq(x, e.c(0.0)), x, result)


def _atan_poly(e: _Emitter, t: ir.Value) -> ir.Value:
    z = e.mul(t, t)
    return e.fma(t, e.mul(z, e.poly(z, _ATAN[e.bits])), t)


def _pio2_minus(e: _Emitter, p: ir.Value) -> ir.Value:
    return e.add(e.c(_PIO2_HI[e.bits]), e.sub(e.c(_PIO2_LO[e.bits]), p))


def _atan(e: _Emitter, x: ir.Value) -> ir.Value:
    # atan(a) = pi/2 - atan(1/a) for a > 1: one division either way.
    a = e.fabs(x)
    inverted = e.gt(a, e.c(1.0))
    t = e.div(e.sel(inverted, e.c(1.0), a), e.sel(inverted, a, e.c(1.0)))
    p = _atan_poly(e, t)
    return e.copysign(e.sel(inverted, _pio2_minus(e, p), p), x)


def _atan2(e: _Emitter, y: ir.Value, x: ir.Value) -> ir.Value:
    ay, ax = e.fabs(y), e.fabs(x)
    swapped = e.gt(ay, ax)
    num, den = e.sel(swapped, ax, ay), e.sel(swapped, ay, ax)
    t = e.div(num, den)
    t = e.sel(e.eq(den, e.c(0.0)), e.c(0.0), t)     # both zero
    t = e.sel(e.eq(num, e.c(_INF)), e.c(1.0), t)    # both infinite
    p = _atan_poly(e, t)
    p = e.sel(swapped, _pio2_minus(e, p), p)
    p = e.sel(e.signbit(x), e.add(e.c(_PI_HI[e.bits]), e.sub(e.c(_PI_LO[e.bits]), p)), p)
    result = e.copysign(p, y)
    return e.sel(e.b.or_(e.isnan(x), e.isnan(y)), e.add(x, y), result)


def _libm(e: _Emitter, name: str, *args: ir.Value) -> ir.Value:
    """The f64 libm function, lane by lane for vectors."""
    if not e.lanes:
        return e.call(name, e.ty, *args)
    result: ir.Value = ir.Constant(e.ty, None)
    for lane in range(e.lanes):
        index = ir.Constant(ir.IntType(32), lane)
        value = e.call(name, ir.DoubleType(), *(e.b.extract_element(a, index) for a in args))
        result = e.b.insert_element(result, value, index)
    return result


_FUNCTIONS: dict[str, Callable[..., ir.Value]] = {
    "exp": _exp, "exp2": _exp2, "expm1": _expm1, "log": _log, "log2": _log2, "log10": _log10,
    "log1p": _log1p, "pow": _pow, "tanh": _tanh, "erf": _erf,
    "sin": lambda e, x: _sincos(e, x, cosine=False),
    "cos": lambda e, x: _sincos(e, x, cosine=True),
    "atan": _atan, "atan2": _atan2,
}

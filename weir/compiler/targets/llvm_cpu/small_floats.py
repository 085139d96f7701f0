"""The 4-, 6- and 8-bit floats (f8E4M3FN, f8E5M2, f4E2M1FN, ...) to and from f32 with integer
operations, on scalars or vectors: they live as their bits in a byte of memory and as f32 in
registers, like f16 (halfs.py), and no conversion routine is called.

f32 -> small rounds to nearest even. What a value beyond the largest finite one becomes depends
on the type, as MLIR's arith (APFloat) defines it: infinity for the IEEE-like types (E5M2, E4M3,
E3M4), NaN for those without infinity (the FN and FNUZ types), the largest finite value for those
with neither (f4E2M1FN, f6E2M3FN, f6E3M2FN), which also take NaN to +0 (they cannot hold it).
The FNUZ types have no -0 (a negative value that rounds to zero is +0) and one NaN, 0x80.
f8E8M0FNU (an OCP MX scale: a power of two 2^(e-127), no sign, no zero, NaN 0xFF) converts as
ml_dtypes does: a tie between two powers rounds up; zero, negatives, infinity, NaN and overflow
give NaN."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Literal

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.halfs import _k, _like

I8, I32, F32 = ir.IntType(8), ir.IntType(32), ir.FloatType()

# ieee: all-ones exponent is infinity (mantissa 0) or NaN; fn: only all-ones bits are NaN;
# fnuz: NaN is the sign bit alone, no infinity, no -0; finite: neither infinity nor NaN;
# e8m0: f8E8M0FNU's own rules (module docstring).
Specials = Literal["ieee", "fn", "fnuz", "finite", "e8m0"]


@dataclass(frozen=True)
class SmallFloat:
    exponent: int  # bits
    mantissa: int  # bits
    bias: int
    specials: Specials

    @property
    def magnitude_bits(self) -> int:
        return self.exponent + self.mantissa

    @property
    def largest(self) -> int:
        """The magnitude bits of the largest finite value."""
        top = (1 << self.magnitude_bits) - 1
        if self.specials == "ieee":
            return top - (1 << self.mantissa)  # below the all-ones exponent
        return top - 1 if self.specials in ("fn", "e8m0") else top

    @property
    def nan(self) -> int:
        """The bits of the NaN a conversion gives (0 for the types that have none)."""
        if self.specials == "ieee":
            return ((1 << self.exponent) - 1) << self.mantissa | 1 << (self.mantissa - 1)
        if self.specials in ("fn", "e8m0"):
            return (1 << self.magnitude_bits) - 1
        return 1 << self.magnitude_bits if self.specials == "fnuz" else 0


SMALL_FLOATS: dict[str, SmallFloat] = {
    "f8E5M2": SmallFloat(5, 2, 15, "ieee"),
    "f8E4M3": SmallFloat(4, 3, 7, "ieee"),
    "f8E3M4": SmallFloat(3, 4, 3, "ieee"),
    "f8E4M3FN": SmallFloat(4, 3, 7, "fn"),
    "f8E4M3FNUZ": SmallFloat(4, 3, 8, "fnuz"),
    "f8E5M2FNUZ": SmallFloat(5, 2, 16, "fnuz"),
    "f8E4M3B11FNUZ": SmallFloat(4, 3, 11, "fnuz"),
    "f6E2M3FN": SmallFloat(2, 3, 1, "finite"),
    "f6E3M2FN": SmallFloat(3, 2, 3, "finite"),
    "f4E2M1FN": SmallFloat(2, 1, 1, "finite"),
    "f8E8M0FNU": SmallFloat(8, 0, 127, "e8m0"),
}


def small_to_float(b: ir.IRBuilder, raw: ir.Value, f: SmallFloat) -> ir.Value:
    """The bits of a small float (an i8, or a vector of them) as f32: exact."""
    i32, f32 = _like(raw, I32), _like(raw, F32)
    bits = b.zext(raw, i32)
    if f.specials == "e8m0":
        power = b.select(b.icmp_unsigned("==", bits, _k(i32, 0)), _k(i32, 0x00400000),
                         b.shl(bits, _k(i32, 23)))
        nan = b.icmp_unsigned("==", bits, _k(i32, f.nan))
        return b.bitcast(b.select(nan, _k(i32, 0x7FC00000), power), f32)
    magnitude = b.and_(bits, _k(i32, (1 << f.magnitude_bits) - 1))
    negative = b.icmp_unsigned("!=", b.and_(bits, _k(i32, 1 << f.magnitude_bits)), _k(i32, 0))
    # Normal: the exponent rebiased, the mantissa moved to f32's top mantissa bits.
    normal = b.add(b.shl(magnitude, _k(i32, 23 - f.mantissa)), _k(i32, (127 - f.bias) << 23))
    # Subnormal (exponent 0): magnitude ulps of 2^(1 - bias - mantissa), exact in f32.
    subnormal = b.bitcast(b.fmul(b.sitofp(magnitude, f32),
                                 _k(f32, 2.0 ** (1 - f.bias - f.mantissa))), i32)
    value = b.select(b.icmp_unsigned("<", magnitude, _k(i32, 1 << f.mantissa)), subnormal, normal)
    value = b.or_(value, b.select(negative, _k(i32, 0x80000000), _k(i32, 0)))
    quiet_nan = _k(i32, 0x7FC00000)
    if f.specials == "ieee":
        special = b.icmp_unsigned(">", magnitude, _k(i32, f.largest))
        infinity = b.or_(_k(i32, 0x7F800000), b.and_(value, _k(i32, 0x80000000)))
        is_inf = b.icmp_unsigned("==", magnitude, _k(i32, f.largest + 1))
        value = b.select(special, b.select(is_inf, infinity, quiet_nan), value)
    elif f.specials == "fn":
        value = b.select(b.icmp_unsigned("==", magnitude, _k(i32, f.nan)), quiet_nan, value)
    elif f.specials == "fnuz":
        value = b.select(b.icmp_unsigned("==", bits, _k(i32, f.nan)), quiet_nan, value)
    return b.bitcast(value, f32)


def float_to_small(b: ir.IRBuilder, value: ir.Value, f: SmallFloat) -> ir.Value:
    """f32 (scalar or vector) -> the small float's bits as i8, rounding to nearest even."""
    i8, i32, f32 = _like(value, I8), _like(value, I32), _like(value, F32)
    bits = b.bitcast(value, i32)
    if f.specials == "e8m0":
        return b.trunc(_float_to_e8m0(b, bits, i32), i8)
    a = b.and_(bits, _k(i32, 0x7FFFFFFF))
    shift = 23 - f.mantissa
    # Normal: rebias, then round the dropped mantissa bits to even (a carry moves the exponent).
    odd = b.and_(b.lshr(a, _k(i32, shift)), _k(i32, 1))
    rebiased = b.sub(a, _k(i32, (127 - f.bias) << 23))
    normal = b.lshr(b.add(rebiased, b.add(_k(i32, (1 << (shift - 1)) - 1), odd)), _k(i32, shift))
    # Below the smallest normal: adding 2^(24 - bias - mantissa), whose ulp is the small type's
    # subnormal step, leaves the rounded count of steps in the low bits (the FPU rounds to even).
    anchor = 2.0 ** (24 - f.bias - f.mantissa)
    anchor_bits = struct.unpack("<I", struct.pack("<f", anchor))[0]
    tiny = b.sub(b.bitcast(b.fadd(b.bitcast(a, f32), _k(f32, anchor)), i32), _k(i32, anchor_bits))
    smallest_normal = (127 + 1 - f.bias) << 23
    magnitude = b.select(b.icmp_unsigned("<", a, _k(i32, smallest_normal)), tiny, normal)
    overflow = {"ieee": f.largest + 1, "fn": f.nan, "fnuz": f.nan,
                "finite": f.largest}[f.specials]
    too_big = b.icmp_unsigned(">", magnitude, _k(i32, f.largest))
    magnitude = b.select(too_big, _k(i32, overflow), magnitude)
    is_inf = b.icmp_unsigned("==", a, _k(i32, 0x7F800000))
    magnitude = b.select(is_inf, _k(i32, overflow), magnitude)
    sign = b.and_(b.lshr(bits, _k(i32, 31 - f.magnitude_bits)), _k(i32, 1 << f.magnitude_bits))
    if f.specials == "fnuz":
        # No -0, and NaN (also what overflow gives) is the sign bit alone.
        keep_sign = b.and_(b.icmp_unsigned("!=", magnitude, _k(i32, 0)),
                           b.icmp_unsigned("!=", magnitude, _k(i32, f.nan)))
        sign = b.select(keep_sign, sign, _k(i32, 0))
    result = b.or_(magnitude, sign)
    is_nan = b.icmp_unsigned(">", a, _k(i32, 0x7F800000))
    nan = _k(i32, f.nan) if f.specials in ("fnuz", "finite") else b.or_(_k(i32, f.nan), sign)
    return b.trunc(b.select(is_nan, nan, result), i8)


def _float_to_e8m0(b: ir.IRBuilder, bits: ir.Value, i32: ir.Type) -> ir.Value:
    """f32 bits -> f8E8M0FNU bits (module docstring)."""
    exponent = b.lshr(bits, _k(i32, 23))  # the sign too: a negative value is >= 256 here
    mantissa = b.and_(bits, _k(i32, 0x7FFFFF))
    # Normal f32: up when the mantissa is half or more; an f32 subnormal: 2^-126 when above
    # 2^-127 (ml_dtypes' choice).
    up = b.select(b.icmp_unsigned("==", exponent, _k(i32, 0)),
                  b.icmp_unsigned(">", mantissa, _k(i32, 0x400000)),
                  b.icmp_unsigned(">=", mantissa, _k(i32, 0x400000)))
    power = b.add(exponent, b.zext(up, i32))
    nan = b.or_(b.icmp_unsigned(">", power, _k(i32, 254)),
                b.icmp_unsigned("==", b.and_(bits, _k(i32, 0x7FFFFFFF)), _k(i32, 0)))
    return b.select(nan, _k(i32, 0xFF), power)

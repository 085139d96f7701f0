"""f16 <-> f32 with integer operations, on scalars or vectors. Without F16C, LLVM lowers half
conversions to calls of `__extendhfsf2`/`__truncsfhf2`, which a Python process need not provide;
these need nothing. Both are exact (f32 -> f16 rounds to nearest even, as the hardware does) and
use no subnormal f32 arithmetic, which a flush-to-zero mode would spoil."""

from __future__ import annotations

import llvmlite.ir as ir

I16, I32, F32 = ir.IntType(16), ir.IntType(32), ir.FloatType()


def _like(value: ir.Value, element: ir.Type) -> ir.Type:
    t = value.type
    return ir.VectorType(element, t.count) if isinstance(t, ir.VectorType) else element


def _k(t: ir.Type, v: int | float) -> ir.Constant:
    if isinstance(t, ir.VectorType):
        return ir.Constant(t, [v] * t.count)
    return ir.Constant(t, v)


def half_to_float(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """`value`: f16 bits (i16, or `half` which is reinterpreted), scalar or vector."""
    i16, i32, f32 = _like(value, I16), _like(value, I32), _like(value, F32)
    half = b.zext(b.bitcast(value, i16), i32)
    magnitude = b.and_(half, _k(i32, 0x7FFF))
    shifted = b.shl(magnitude, _k(i32, 13))
    normal = b.add(shifted, _k(i32, (127 - 15) << 23))
    special = b.or_(shifted, _k(i32, 0x7F800000))
    subnormal = b.bitcast(b.fmul(b.sitofp(magnitude, f32), _k(f32, 2.0 ** -24)), i32)
    bits = b.select(b.icmp_unsigned("<", magnitude, _k(i32, 0x0400)), subnormal,
                    b.select(b.icmp_unsigned("<", magnitude, _k(i32, 0x7C00)), normal, special))
    sign = b.shl(b.and_(half, _k(i32, 0x8000)), _k(i32, 16))
    return b.bitcast(b.or_(bits, sign), f32)


def float_to_half(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """f32 -> f16 bits (i16), rounding to nearest even; NaN stays a quiet NaN."""
    i16, i32, f32 = _like(value, I16), _like(value, I32), _like(value, F32)
    bits = b.bitcast(value, i32)
    sign = b.and_(b.lshr(bits, _k(i32, 16)), _k(i32, 0x8000))
    a = b.and_(bits, _k(i32, 0x7FFFFFFF))
    odd = b.and_(b.lshr(a, _k(i32, 13)), _k(i32, 1))
    normal = b.lshr(b.add(b.sub(a, _k(i32, 112 << 23)), b.add(_k(i32, 0xFFF), odd)), _k(i32, 13))
    # Below 2^-14: adding 0.5 leaves round-to-even(|x| * 2^24) in the low mantissa bits.
    tiny = b.sub(b.bitcast(b.fadd(b.bitcast(a, f32), _k(f32, 0.5)), i32), _k(i32, 0x3F000000))
    result = b.select(b.icmp_unsigned("<", a, _k(i32, 0x38800000)), tiny, normal)
    result = b.select(b.icmp_unsigned(">=", a, _k(i32, 0x477FF000)), _k(i32, 0x7C00), result)
    result = b.select(b.icmp_unsigned(">", a, _k(i32, 0x7F800000)), _k(i32, 0x7E00), result)
    return b.trunc(b.or_(result, sign), i16)

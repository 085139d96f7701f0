"""Element types in memory and in registers, and the scalar ops of the kernel description
(weir/format/reference_kernel.py) as LLVM instructions.

f16 and bf16 are computed in f32 registers and rounded when stored or truncated, as the reference
target does; both are kept as their bits in memory and converted with integer operations
(halfs.py), so no code calls a conversion routine the process may lack. i1 is a byte in memory and an `i1` in registers. Integer division by zero gives 0
(the reference target's numpy result) instead of the trap x86 raises, so a program's bad divisor
is a wrong value, never a crashed process."""

from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.halfs import float_to_half, half_to_float
from weir.format.element_types import BY_NAME
from weir.format.vm_isa import Scalar

F32, F64 = ir.FloatType(), ir.DoubleType()
I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))

# Reductions may combine in any order (linalg leaves it unspecified), so their combiners carry
# `reassoc` and nothing else: NaN and infinity keep their meaning.
REASSOC = ("reassoc",)


def memory_type(dtype: str) -> ir.Type:
    if dtype == "f32":
        return F32
    if dtype == "f64":
        return F64
    if dtype in ("f16", "bf16"):
        return I16
    if dtype == "i1":
        return I8
    return ir.IntType(BY_NAME[dtype].bits)


def register_type(dtype: str) -> ir.Type:
    if dtype in ("f16", "bf16", "f32"):
        return F32
    if dtype == "f64":
        return F64
    return ir.IntType(BY_NAME[dtype].bits)


def is_float(dtype: str) -> bool:
    return BY_NAME[dtype].is_float


def load_element(b: ir.IRBuilder, ptr: ir.Value, dtype: str) -> ir.Value:
    return from_memory(b, b.load(ptr), dtype)


def from_memory(b: ir.IRBuilder, raw: ir.Value, dtype: str) -> ir.Value:
    """A value as memory holds it (`memory_type(dtype)`) in its register type."""
    if dtype == "f16":
        return half_to_float(b, raw)
    if dtype == "bf16":
        return b.bitcast(b.shl(b.zext(raw, I32), I32(16)), F32)
    if dtype == "i1":
        return b.trunc(raw, I1)
    return raw


def round_bf16(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """f32 -> bf16 bits, rounding to nearest even; NaN stays a (quiet) NaN."""
    bits = b.bitcast(value, I32)
    lsb = b.and_(b.lshr(bits, I32(16)), I32(1))
    rounded = b.lshr(b.add(bits, b.add(I32(0x7FFF), lsb)), I32(16))
    quiet_nan = b.or_(b.lshr(bits, I32(16)), I32(0x40))
    is_nan = b.fcmp_unordered("uno", value, value)
    return b.trunc(b.select(is_nan, quiet_nan, rounded), I16)


def to_memory(b: ir.IRBuilder, value: ir.Value, dtype: str) -> ir.Value:
    if dtype == "f16":
        return float_to_half(b, value)
    if dtype == "bf16":
        return round_bf16(b, value)
    if dtype == "i1":
        return b.zext(value, I8)
    return value


def store_element(b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, dtype: str) -> None:
    b.store(to_memory(b, value, dtype), ptr)


def constant(dtype: str, value: Scalar) -> ir.Constant:
    t = register_type(dtype)
    if is_float(dtype):
        return ir.Constant(t, float(value))  # type: ignore[arg-type]
    bits = BY_NAME[dtype].bits
    return ir.Constant(t, int(value) & ((1 << bits) - 1))  # type: ignore[arg-type]


def push_scalar(b: ir.IRBuilder, constant: ir.Value, dtype: str) -> ir.Value:
    """A 64-bit push constant read as a scalar of `dtype` (the `push` op), in its register type:
    the low bits are the value as memory holds it (a float's bits, an integer truncated)."""
    if dtype == "i1":
        return b.trunc(constant, I1)
    if dtype in ("f32", "f64"):
        bits = b.trunc(constant, I32) if dtype == "f32" else constant
        return b.bitcast(bits, register_type(dtype))
    stored = memory_type(dtype)  # i16 for f16/bf16, the integer itself otherwise
    raw = constant if stored.width == 64 else b.trunc(constant, stored)
    return from_memory(b, raw, dtype)


def intrinsic(b: ir.IRBuilder, name: str, args: list[ir.Value],
              overloads: list[ir.Type] | None = None, result: ir.Type | None = None) -> ir.Value:
    """Calls `name` mangled by `overloads` (default: the first operand's type)."""
    tys = overloads if overloads is not None else [args[0].type]
    fnty = ir.FunctionType(result or args[0].type, [a.type for a in args])
    return b.call(b.module.declare_intrinsic(name, tys, fnty), args)


def _float_binary(op: str) -> Callable[[ir.IRBuilder, list[ir.Value], tuple[str, ...]], ir.Value]:
    def emit(b: ir.IRBuilder, a: list[ir.Value], flags: tuple[str, ...]) -> ir.Value:
        return getattr(b, op)(a[0], a[1], flags=flags)  # type: ignore[no-any-return]
    return emit


def _safe_division(b: ir.IRBuilder, a: list[ir.Value], op: str) -> ir.Value:
    """x / 0 is 0, and signed MIN / -1 wraps to MIN (x86 would trap on both)."""
    x, y = a
    t = x.type
    zero = ir.Constant(t, 0)
    is_zero = b.icmp_unsigned("==", y, zero)
    bad = is_zero
    if op in ("sdiv", "srem"):
        minimum = ir.Constant(t, 1 << (t.width - 1))
        overflow = b.and_(b.icmp_unsigned("==", x, minimum),
                          b.icmp_unsigned("==", y, ir.Constant(t, -1)))
        bad = b.or_(is_zero, overflow)
    safe = b.select(bad, ir.Constant(t, 1), y)
    result = getattr(b, op)(x, safe)
    if op in ("sdiv", "srem"):
        # MIN / -1 = MIN (x / 1 gives x); MIN % -1 = 0.
        result = b.select(overflow, x if op == "sdiv" else zero, result)
    return b.select(is_zero, zero, result)


_CMPF = {"oeq": "==", "ogt": ">", "oge": ">=", "olt": "<", "ole": "<=", "one": "!=",
         "ord": "ord", "ueq": "==", "ugt": ">", "uge": ">=", "ult": "<", "ule": "<=",
         "une": "!=", "uno": "uno"}
_CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "ult": "<",
         "ule": "<=", "ugt": ">", "uge": ">="}
_MATH = {"exp", "exp2", "log", "log2", "log1p", "tanh", "sqrt", "rsqrt", "pow", "sin", "cos",
         "erf", "floor", "ceil", "round", "roundeven", "fma", "absf"}


def _cast(b: ir.IRBuilder, name: str, x: ir.Value, src: str, dst: str) -> ir.Value:
    to = register_type(dst)
    if name in ("extf", "truncf"):
        if dst == "bf16":  # keep f32 registers, but round to what bf16 can hold
            return b.bitcast(b.shl(b.zext(round_bf16(b, x), I32), I32(16)), F32)
        if dst == "f16":
            return half_to_float(b, float_to_half(b, b.fptrunc(x, F32) if x.type == F64 else x))
        if x.type == to:
            return x
        return b.fpext(x, to) if name == "extf" else b.fptrunc(x, to)
    if name == "sitofp":
        return b.sitofp(x, to)
    if name == "uitofp":
        return b.uitofp(x, to)
    if name in ("fptosi", "fptoui"):
        # Saturating: out-of-range and NaN inputs give a defined value instead of poison.
        sat = "llvm.fptosi.sat" if name == "fptosi" else "llvm.fptoui.sat"
        return intrinsic(b, sat, [x], [to, x.type], to)
    if name == "bitcast":
        # Through the bits as memory holds them (f16/bf16 are i16 there).
        return from_memory(b, b.bitcast(to_memory(b, x, src), memory_type(dst)), dst)
    # integer resizes: extsi, extui, trunci, index_cast (signed)
    if x.type.width == to.width:
        return x
    if x.type.width > to.width:
        return b.trunc(x, to)
    return b.zext(x, to) if name == "extui" else b.sext(x, to)


def emit_scalar(b: ir.IRBuilder, name: str, args: list[ir.Value], dtype: str, attr: Scalar,
                arg_dtypes: list[str], flags: tuple[str, ...] = ()) -> ir.Value:
    """One scalar op; `dtype` is its result's element type, `arg_dtypes` its operands'."""
    if name in ("addf", "subf", "mulf", "divf", "remf"):
        return _float_binary({"addf": "fadd", "subf": "fsub", "mulf": "fmul", "divf": "fdiv",
                              "remf": "frem"}[name])(b, args, flags)
    if name == "negf":
        return b.fneg(args[0])
    if name in ("maximumf", "minimumf", "maxnumf", "minnumf"):
        return intrinsic(b, {"maximumf": "llvm.maximum", "minimumf": "llvm.minimum",
                              "maxnumf": "llvm.maxnum", "minnumf": "llvm.minnum"}[name], args)
    if name in _MATH:
        from weir.compiler.targets.llvm_cpu.vmath import emit_math
        return emit_math(b, name, args)
    if name == "cmpf":
        pred = str(attr)
        if pred in ("false", "true"):
            return I1(int(pred == "true"))
        if pred[0] == "u" or pred == "uno":
            return b.fcmp_unordered(_CMPF[pred], args[0], args[1])
        return b.fcmp_ordered(_CMPF[pred], args[0], args[1])
    if name == "cmpi":
        pred = str(attr)
        if pred in ("eq", "ne") or pred[0] == "s":
            return b.icmp_signed(_CMPI[pred], args[0], args[1])
        return b.icmp_unsigned(_CMPI[pred], args[0], args[1])
    simple = {"addi": "add", "subi": "sub", "muli": "mul", "andi": "and_", "ori": "or_",
              "xori": "xor"}
    if name in simple:
        return getattr(b, simple[name])(args[0], args[1])  # type: ignore[no-any-return]
    if name in ("divsi", "divui", "remsi", "remui"):
        return _safe_division(b, args, {"divsi": "sdiv", "divui": "udiv", "remsi": "srem",
                                        "remui": "urem"}[name])
    if name in ("shli", "shrsi", "shrui"):
        # A shift by the width or more is poison in LLVM; mask it as x86 does in hardware.
        width = args[0].type.width
        amount = b.and_(args[1], ir.Constant(args[1].type, width - 1))
        return getattr(b, {"shli": "shl", "shrsi": "ashr", "shrui": "lshr"}[name])(args[0], amount)  # type: ignore[no-any-return]
    if name in ("maxsi", "minsi", "maxui", "minui"):
        return intrinsic(b, {"maxsi": "llvm.smax", "minsi": "llvm.smin", "maxui": "llvm.umax",
                              "minui": "llvm.umin"}[name], args)
    if name == "absi":
        return intrinsic(b, "llvm.abs", [args[0], I1(0)])
    if name == "select":
        return b.select(args[0], args[1], args[2])
    if name == "constant":
        return constant(dtype, attr)
    return _cast(b, name, args[0], arg_dtypes[0], dtype)

"""Element types in memory and in registers, and the scalar ops of the kernel description
(weir/format/kernel_description.py) as LLVM instructions.

f16, bf16 and the small floats (f8E4M3FN, f4E2M1FN, ...) are computed in f32 registers and
rounded to their type after every op, as the reference target does; all are kept as their bits
in memory and converted with integer operations (halfs.py, small_floats.py), so no code calls a
conversion routine the process may lack. i1, i2 and i4
are a byte in memory (their bits low, the rest zero, as weir/format's table says) and `i1`, `i2`,
`i4` in registers: loads truncate and stores zero-extend explicitly, since LLVM leaves the spare
bits of an `i4` store unspecified. Where MLIR leaves a result undefined, the code gives the one
weir/format/kernel_description.py defines: integer division by zero gives 0 (instead of the trap
x86 raises, so a program's bad divisor is a wrong value, never a crashed process), shifts past the
width give 0 or the sign, float-to-integer conversions saturate."""

from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.halfs import float_to_half, half_to_float
from weir.compiler.targets.llvm_cpu.loops import for_range
from weir.compiler.targets.llvm_cpu.small_floats import SMALL_FLOATS, float_to_small, small_to_float
from weir.format.element_types import BY_NAME
from weir.format.vm_isa import Scalar

F32, F64 = ir.FloatType(), ir.DoubleType()
I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))

# Reductions may combine in any order (linalg leaves it unspecified), so their combiners carry
# `reassoc` and nothing else: NaN and infinity keep their meaning.
REASSOC = ("reassoc",)
# Floats held in f32 registers and rounded to their type after each op.
NARROW_FLOATS = frozenset({"f16", "bf16", *SMALL_FLOATS})


def memory_type(dtype: str) -> ir.Type:
    if dtype == "f32":
        return F32
    if dtype == "f64":
        return F64
    if dtype in ("f16", "bf16"):
        return I16
    if BY_NAME[dtype].bits <= 8:  # i1, i2, i4 and the small floats are a byte each
        return I8
    return ir.IntType(BY_NAME[dtype].bits)


def _sub_byte(dtype: str) -> bool:
    return not is_float(dtype) and BY_NAME[dtype].bits < 8


def register_type(dtype: str) -> ir.Type:
    if dtype in NARROW_FLOATS or dtype == "f32":
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
    if dtype in SMALL_FLOATS:
        return small_to_float(b, raw, SMALL_FLOATS[dtype])
    if _sub_byte(dtype):
        return b.trunc(raw, register_type(dtype))
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
    if dtype in SMALL_FLOATS:
        return float_to_small(b, value, SMALL_FLOATS[dtype])
    if _sub_byte(dtype):
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
    if _sub_byte(dtype):
        return b.trunc(constant, register_type(dtype))
    if dtype in ("f32", "f64"):
        bits = b.trunc(constant, I32) if dtype == "f32" else constant
        return b.bitcast(bits, register_type(dtype))
    stored = memory_type(dtype)  # i16 for f16/bf16, i8 for the small floats, else the integer
    raw = constant if stored.width == 64 else b.trunc(constant, stored)
    return from_memory(b, raw, dtype)


def overload_name(ty: ir.Type) -> str:
    """The suffix naming an intrinsic's instance for `ty`: f32, i32, v16f32, ... (llvmlite's
    `intrinsic_name`, which spells scalar types only, with vectors spelled out here)."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{ty.element.intrinsic_name}"
    return ty.intrinsic_name


def declared(module: ir.Module, name: str, ftype: ir.FunctionType) -> ir.Function:
    """The function `name` of `module`, declared with `ftype` the first time it is asked for."""
    existing = module.globals.get(name)
    return existing if isinstance(existing, ir.Function) else ir.Function(module, ftype, name)


def intrinsic(b: ir.IRBuilder, name: str, args: list[ir.Value],
              overloads: list[ir.Type] | None = None, result: ir.Type | None = None) -> ir.Value:
    """Calls `name` mangled by `overloads` (default: the first operand's type). Vector
    overloads are mangled here (`llvm.maximum.v16f32`): llvmlite's declare_intrinsic knows
    scalar types only."""
    tys = overloads if overloads is not None else [args[0].type]
    fnty = ir.FunctionType(result or args[0].type, [a.type for a in args])
    if not any(isinstance(t, ir.VectorType) for t in tys):
        return b.call(b.module.declare_intrinsic(name, tys, fnty), args)
    return b.call(declared(b.module, ".".join([name] + [overload_name(t) for t in tys]), fnty),
                  args)


def prefetch_l2(b: ir.IRBuilder, pointer: ir.Value) -> None:
    """A read prefetch of the line at `pointer` into L2 (locality 2), for data streamed from
    memory once per call (weights) while other work runs; it never faults, past an end too."""
    _prefetch(b, pointer, write=False, locality=2)


def prefetch_write(b: ir.IRBuilder, pointer: ir.Value) -> None:
    """A write prefetch of the line at `pointer` (PREFETCHW where the CPU has it): the line is
    fetched for ownership ahead of the store that will write it; it never faults."""
    _prefetch(b, pointer, write=True, locality=3)


def _prefetch(b: ir.IRBuilder, pointer: ir.Value, write: bool, locality: int) -> None:
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fn = declared(b.module, "llvm.prefetch.p0",
                  ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
    b.call(fn, [b.bitcast(pointer, i8p), ir.Constant(i32, int(write)),
                ir.Constant(i32, locality), ir.Constant(i32, 1)])


# How far ahead of its stores a copy or elementwise loop fetches its output lines for
# ownership: 4 KiB of output, a few hundred nanoseconds of copying at L2 speed.
WRITE_AHEAD_BYTES = 4096


def write_ahead_bytes(lo: ir.Value, hi: ir.Value, dims: list[ir.Value],
                      dtype: str) -> int | None:
    """The bytes of each run [lo, hi) that a loop writing an output of `dims` (of `dtype`)
    fetches ahead (`prefetch_run_for_write`), or None where that does not pay: only runs of a
    static length from a line to WRITE_AHEAD_BYTES (a shorter run would fetch each line many
    times over; a longer one is a stream the hardware's prefetcher follows, and fetching all
    of it before the loop, as a 1-D elementwise op of 16M elements would, is 64 MiB of
    prefetches that evict each other: ew_chain_16m took 1.36x its time), in an output of at
    least four times WRITE_AHEAD_BYTES (else most prefetches land past its end; an LSTM
    step's 8 x 256 gates stay in cache)."""
    if not (isinstance(lo, ir.Constant) and isinstance(hi, ir.Constant)):
        return None
    size = BY_NAME[dtype].byte_size
    run = (hi.constant - lo.constant) * size
    if not 64 <= run <= WRITE_AHEAD_BYTES:
        return None
    if all(isinstance(d, ir.Constant) for d in dims):
        total = size
        for d in dims:
            total *= d.constant  # type: ignore[attr-defined]
        if total < 4 * WRITE_AHEAD_BYTES:
            return None
    return run


def prefetch_run_for_write(b: ir.IRBuilder, start: ir.Value, nbytes: int) -> None:
    """Write prefetches of the lines of the `nbytes` at `start` (a typed pointer, the first
    element of a run), WRITE_AHEAD_BYTES further on: output the loop reaches a few runs
    later. Output memory that no recent dispatch touched costs a read for ownership per line
    at the store, which the loop waits for: in a call, SqueezeNet's concats took 1.3-1.5x the
    time they take with their output already in cache. Fetched ahead, the loop finds the
    lines there (the concats 0.57-0.82x, the whole network 0.98x on both drivers)."""
    i8p, i64 = ir.IntType(8).as_pointer(), ir.IntType(64)
    base = b.gep(b.bitcast(start, i8p), [ir.Constant(i64, WRITE_AHEAD_BYTES)])
    def line(lb: ir.IRBuilder, n: ir.Value) -> None:
        prefetch_write(lb, lb.gep(base, [lb.mul(n, ir.Constant(i64, 64))]))
    for_range(b, ir.Constant(i64, 0), ir.Constant(i64, -(-nbytes // 64)), line, "pfw",
              unroll=False)


def _float_binary(op: str) -> Callable[[ir.IRBuilder, list[ir.Value], tuple[str, ...]], ir.Value]:
    def emit(b: ir.IRBuilder, a: list[ir.Value], flags: tuple[str, ...]) -> ir.Value:
        return getattr(b, op)(a[0], a[1], flags=flags)  # type: ignore[no-any-return]
    return emit


def _safe_division(b: ir.IRBuilder, a: list[ir.Value], op: str) -> ir.Value:
    """x / 0 is 0, and signed MIN / -1 wraps to MIN (x86 would trap on both). `op` is an LLVM
    division, or floordivsi/ceildivsi/ceildivui: the truncated quotient moved one toward -inf
    or +inf when the division is inexact and the exact quotient lies that way."""
    x, y = a
    t = x.type
    zero = ir.Constant(t, 0)
    is_zero = b.icmp_unsigned("==", y, zero)
    signed = op in ("sdiv", "srem", "floordivsi", "ceildivsi")
    bad = is_zero
    if signed:
        minimum = ir.Constant(t, 1 << (t.width - 1))
        overflow = b.and_(b.icmp_unsigned("==", x, minimum),
                          b.icmp_unsigned("==", y, ir.Constant(t, -1)))
        bad = b.or_(is_zero, overflow)
    safe = b.select(bad, ir.Constant(t, 1), y)
    divide = {"floordivsi": "sdiv", "ceildivsi": "sdiv", "ceildivui": "udiv"}.get(op, op)
    result = getattr(b, divide)(x, safe)
    if divide != op:
        inexact = b.icmp_unsigned("!=", b.mul(result, safe), x)
        if op == "ceildivui":
            toward = inexact
        else:  # the exact quotient is negative when the signs differ
            negative = b.icmp_signed("<", b.xor(x, safe), zero)
            toward = b.and_(inexact, negative if op == "floordivsi" else b.not_(negative))
        step = ir.Constant(t, -1 if op == "floordivsi" else 1)
        result = b.select(toward, b.add(result, step), result)
    if signed:
        # MIN / -1 = MIN (x / 1 gives x); MIN % -1 = 0.
        result = b.select(overflow, zero if op == "srem" else x, result)
    return b.select(is_zero, zero, result)


def _shift(b: ir.IRBuilder, name: str, x: ir.Value, amount: ir.Value) -> ir.Value:
    """A shift by the width or more is poison in LLVM; it gives 0, or the sign for shrsi."""
    t = x.type
    past = b.icmp_unsigned(">=", amount, ir.Constant(amount.type, t.width))
    safe = b.select(past, ir.Constant(amount.type, 0), amount)
    shifted = getattr(b, {"shli": "shl", "shrsi": "ashr", "shrui": "lshr"}[name])(x, safe)
    fill = b.ashr(x, ir.Constant(t, t.width - 1)) if name == "shrsi" else ir.Constant(t, 0)
    return b.select(past, fill, shifted)


def _odd_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """f64 -> f32 rounding to odd (truncate toward zero, then set the last bit if inexact):
    rounding that once more to a narrower type rounds the f64 value only once."""
    fabs = b.module.declare_intrinsic("llvm.fabs", [F64])
    magnitude = b.call(fabs, [x])
    finite = b.fcmp_ordered("<", magnitude, ir.Constant(F64, float("inf")))
    bits = b.bitcast(b.fptrunc(x, F32), I32)
    too_far = b.and_(finite, b.fcmp_ordered(">", b.call(fabs, [b.fpext(b.bitcast(bits, F32), F64)]),
                                            magnitude))
    bits = b.select(too_far, b.sub(bits, I32(1)), bits)
    inexact = b.and_(finite, b.fcmp_unordered("!=", b.fpext(b.bitcast(bits, F32), F64), x))
    return b.bitcast(b.select(inexact, b.or_(bits, I32(1)), bits), F32)


def round_to(b: ir.IRBuilder, x: ir.Value, dtype: str) -> ir.Value:
    """A float register value rounded once to `dtype`, kept in its register type."""
    if dtype not in NARROW_FLOATS:
        if x.type == register_type(dtype):
            return x
        return b.fpext(x, F64) if dtype == "f64" else b.fptrunc(x, F32)
    if x.type == F64:
        x = _odd_f32(b, x)
    if dtype == "bf16":
        return b.bitcast(b.shl(b.zext(round_bf16(b, x), I32), I32(16)), F32)
    if dtype in SMALL_FLOATS:
        return small_to_float(b, float_to_small(b, x, SMALL_FLOATS[dtype]), SMALL_FLOATS[dtype])
    return half_to_float(b, float_to_half(b, x))


_CMPF = {"oeq": "==", "ogt": ">", "oge": ">=", "olt": "<", "ole": "<=", "one": "!=",
         "ord": "ord", "ueq": "==", "ugt": ">", "uge": ">=", "ult": "<", "ule": "<=",
         "une": "!=", "uno": "uno"}
_CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "ult": "<",
         "ule": "<=", "ugt": ">", "uge": ">="}
_MATH = {"exp", "exp2", "log", "log2", "log1p", "tanh", "sqrt", "rsqrt", "pow", "sin", "cos",
         "erf", "floor", "ceil", "round", "roundeven", "fma", "absf", "expm1", "atan", "atan2",
         "acos", "acosh", "asin", "asinh", "atanh", "cbrt", "cosh", "sinh", "tan"}


def _cast(b: ir.IRBuilder, name: str, x: ir.Value, src: str, dst: str) -> ir.Value:
    to = register_type(dst)
    if name in ("extf", "truncf"):
        return round_to(b, x, dst)
    if name in ("sitofp", "uitofp"):
        # Through f64 for bf16 and the small floats, as the reference target does (exact below
        # 2^53), so the value rounds once; any integer too big for f32's 24 bits overflows f16.
        wide = F64 if dst in NARROW_FLOATS - {"f16"} else to
        converted = b.sitofp(x, wide) if name == "sitofp" else b.uitofp(x, wide)
        return round_to(b, converted, dst)
    if name in ("fptosi", "fptoui"):
        # Saturating: out-of-range and NaN inputs give a defined value instead of poison.
        sat = "llvm.fptosi.sat" if name == "fptosi" else "llvm.fptoui.sat"
        return intrinsic(b, sat, [x], [to, x.type], to)
    if name == "bitcast":
        # Through the bits as memory holds them (f16/bf16 are i16 there).
        return from_memory(b, b.bitcast(to_memory(b, x, src), memory_type(dst)), dst)
    # integer resizes: extsi, extui, trunci, index_cast (signed), index_castui (unsigned)
    if x.type.width == to.width:
        return x
    if x.type.width > to.width:
        return b.trunc(x, to)
    return b.zext(x, to) if name in ("extui", "index_castui") else b.sext(x, to)


# Ops whose f16/bf16 result needs no rounding: it is one of their operands, or already rounded.
_EXACT_IN_TYPE = frozenset({"select", "negf", "absf", "maximumf", "minimumf",
                            "maxnumf", "minnumf", "extf", "truncf", "sitofp", "uitofp",
                            "bitcast"})


def emit_scalar(b: ir.IRBuilder, name: str, args: list[ir.Value], dtype: str, attr: Scalar,
                arg_dtypes: list[str], flags: tuple[str, ...] = (),
                combiner: bool = False, native_ldexp: bool = False) -> ir.Value:
    """One scalar op; `dtype` is its result's element type, `arg_dtypes` its operands'. An
    f16/bf16 result is rounded to its type (as every op of the reference target's is), except in
    a reduction's combiner (`combiner`, or any `flags`), which accumulates in f32 there too,
    reassociated or (no flags) in order. `native_ldexp`: as for vmath.emit_math."""
    value = _emit(b, name, args, dtype, attr, arg_dtypes, flags, native_ldexp)
    if dtype in NARROW_FLOATS and name not in _EXACT_IN_TYPE and not (flags or combiner):
        return round_to(b, value, dtype)
    return value


def _emit(b: ir.IRBuilder, name: str, args: list[ir.Value], dtype: str, attr: Scalar,
          arg_dtypes: list[str], flags: tuple[str, ...], native_ldexp: bool) -> ir.Value:
    if name in ("addf", "subf", "mulf", "divf", "remf"):
        return _float_binary({"addf": "fadd", "subf": "fsub", "mulf": "fmul", "divf": "fdiv",
                              "remf": "frem"}[name])(b, args, flags)
    if name == "negf":
        return b.fneg(args[0])
    if name in ("maximumf", "minimumf", "maxnumf", "minnumf"):
        # maximumnum/minimumnum: IEEE 754-2019's, NaN-ignoring and with -0.0 below +0.0, where
        # maxnum/minnum may return either zero; a reduction (`flags`), which leaves that open,
        # keeps maxnum/minnum, whose reductions LLVM vectorizes.
        plain = {"maxnumf": "llvm.maxnum", "minnumf": "llvm.minnum"} if flags else {}
        return intrinsic(b, plain.get(name) or {
            "maximumf": "llvm.maximum", "minimumf": "llvm.minimum", "maxnumf": "llvm.maximumnum",
            "minnumf": "llvm.minimumnum"}[name], args)
    if name in _MATH:
        from weir.compiler.targets.llvm_cpu.vmath import emit_math
        return emit_math(b, name, args, native_ldexp)
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
    if name in ("divsi", "divui", "remsi", "remui", "floordivsi", "ceildivsi", "ceildivui"):
        return _safe_division(b, args, {"divsi": "sdiv", "divui": "udiv", "remsi": "srem",
                                        "remui": "urem"}.get(name, name))
    if name in ("shli", "shrsi", "shrui"):
        return _shift(b, name, args[0], args[1])
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


def freeze(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """LLVM's `freeze` of `value` (llvmlite's builder lacks it): the same value at run time, an
    opaque one to the code generator's pattern matching."""
    frozen = ir.Instruction(b.block, value.type, "freeze", [value])
    b._insert(frozen)  # type: ignore[attr-defined]
    return frozen

"""numpy implementations of the reference kernels' scalar ops, applied to whole arrays at once.

MLIR integers are signless; the op says how to read them (`divsi` signed, `divui` unsigned), so
integer ops reinterpret their operands with `as_signed`/`as_unsigned` views. f16/bf16 math is
done in f32 and rounded once at the end. Integer overflow wraps (two's complement). i2/i4
(ml_dtypes' int2/int4) are read as int8 (signed) or their bits as uint8 (unsigned) and wrap back
to their width when a result is cast to them."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from weir.format.element_types import VALUE_TYPES
from weir.format.kernel_description import SCALAR_OPS, ScalarOp
from weir.runtime.executables.reference_erf import erf

Arrays = Sequence[np.ndarray]
# impl(operands, op, result dtype) -> result array (broadcast shape of the operands)
ScalarImpl = Callable[[Arrays, ScalarOp, np.dtype], np.ndarray]

# Floats computed in f32 and rounded to their type: f16, bf16 and the small floats (f8E4M3FN...).
_LOW_PRECISION = tuple(t.dtype for t in VALUE_TYPES if t.is_float and t.bits < 32)
# Those that f64 reaches through f32 rounded to odd, so that it rounds once (f16 is exact).
_ODD_FIRST = frozenset(_LOW_PRECISION) - {np.dtype(np.float16)}
# Floats without NaN (f4E2M1FN, f6...): NaN becomes +0 there, as on llvm-cpu (ml_dtypes' own
# conversion gives a zero of the opposite sign).
_NO_NAN = frozenset(d for d in _LOW_PRECISION
                    if not np.isnan(np.asarray(np.nan, np.float32).astype(d).astype(np.float32)))
# Same-width reinterpretations, by byte size, from weir/format's element-type table.
_SIGNED = {t.byte_size: t.dtype for t in VALUE_TYPES if t.kind == "int"}
_UNSIGNED = {t.byte_size: t.dtype for t in VALUE_TYPES if t.kind == "uint"}
# Integers narrower than their byte (i2, i4), by dtype: their width in bits.
_SUB_BYTE = {t.dtype: t.bits for t in VALUE_TYPES if t.kind == "int" and t.bits < 8}


def bit_width(dtype: np.dtype) -> int:
    """The bits of an integer dtype's values (1 for i1, 4 for i4), not of its storage."""
    if dtype == np.bool_:
        return 1
    return _SUB_BYTE.get(dtype, dtype.itemsize * 8)


def compute_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in _LOW_PRECISION else dtype


def as_float(a: np.ndarray) -> np.ndarray:
    return a.astype(compute_dtype(a.dtype), copy=False)


def as_signed(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        return -(a.astype(np.int8))  # i1 true is -1 when read as signed
    if a.dtype in _SUB_BYTE:
        return a.astype(np.int8)
    if a.dtype.kind == "u":
        return a.view(_SIGNED[a.dtype.itemsize])
    return a


def as_unsigned(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    if a.dtype in _SUB_BYTE:
        return a.astype(np.int8).view(np.uint8) & np.uint8((1 << _SUB_BYTE[a.dtype]) - 1)
    if a.dtype.kind == "i":
        return a.view(_UNSIGNED[a.dtype.itemsize])
    return a


def _to(result: np.ndarray | np.generic, dtype: np.dtype) -> np.ndarray:
    """Casts a result to the op's dtype; i1 results keep only the low bit (trunci semantics)."""
    arr = np.asarray(result)
    if dtype in _NO_NAN and arr.dtype.kind not in "biu":
        arr = np.where(np.isnan(arr), np.zeros((), arr.dtype), arr)
    if dtype == np.bool_ and arr.dtype != np.bool_:
        return (as_unsigned(arr) & 1).astype(np.bool_) if arr.dtype.kind in "iu" else \
            arr.astype(np.bool_)
    return arr.astype(dtype, copy=False)


def _float_unary(fn: Callable[[np.ndarray], np.ndarray]) -> ScalarImpl:
    return lambda a, op, dt: _to(fn(as_float(a[0])), dt)


def _in_f64(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """`fn` computed in f64 for narrower floats, then rounded once: numpy's own f32 kernels
    differ by CPU (its AVX-512 expm1 is 2.1 ulp off at 88.0 on Emerald Rapids), its f64 ones
    are correctly rounded to well within an f32 ulp."""
    return lambda x: fn(x.astype(np.float64)) if x.dtype.itemsize < 8 else fn(x)


def _float_binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> ScalarImpl:
    return lambda a, op, dt: _to(fn(as_float(a[0]), as_float(a[1])), dt)


def _bits(a: np.ndarray) -> np.ndarray:
    """The operand for ops that do not read a sign (i1 as 0/1 bytes, numpy's bools do not wrap;
    i2/i4 as int8, which numpy computes with; the result wraps back in `_to`)."""
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    return a.astype(np.int8) if a.dtype in _SUB_BYTE else a


def _int_binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
                view: Callable[[np.ndarray], np.ndarray] = _bits) -> ScalarImpl:
    """`view` reads both operands (as_signed: i1 true is -1; as_unsigned: it is 1)."""
    return lambda a, op, dt: _to(fn(view(a[0]), view(a[1])), dt)


def _signed_division(rounding: str) -> ScalarImpl:
    """divsi (toward zero), floordivsi (toward -inf) and ceildivsi (toward +inf), from numpy's
    floor division; numpy gives 0 for a zero divisor and MIN for MIN / -1 (the contract)."""
    def impl(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
        x, y = as_signed(a[0]), as_signed(a[1])
        q = np.floor_divide(x, y)
        inexact = (x - q * y) != 0
        if rounding == "zero":
            q = q + (inexact & ((x < 0) != (y < 0))).astype(q.dtype)
        elif rounding == "ceil":
            q = q + inexact.astype(q.dtype)
        return _to(np.where(y == 0, 0, q), dt)
    return impl


def _ceildivui(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
    x, y = as_unsigned(a[0]), as_unsigned(a[1])
    q = np.floor_divide(x, y)
    return _to(np.where(y == 0, 0, q + ((x - q * y) != 0).astype(q.dtype)), dt)


def _shift(kind: str) -> ScalarImpl:
    """A shift by the width or more gives what shifting one bit at a time would (the contract),
    which is also what numpy's shifts give, but computed here rather than relied upon."""
    def impl(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
        x = a[0]
        bits = bit_width(x.dtype)
        amount = as_unsigned(a[1])
        past = amount >= bits
        amount = np.where(past, 0, amount).astype(np.uint8)
        if kind == "shrsi":
            v = as_signed(x)
            fill = np.where(v < 0, -1, 0).astype(v.dtype)
            return _to(np.where(past, fill, np.right_shift(v, amount.astype(v.dtype))), dt)
        v = as_unsigned(x)
        shifted = np.left_shift(v, amount.astype(v.dtype)) if kind == "shli" else \
            np.right_shift(v, amount.astype(v.dtype))
        return _to(np.where(past, 0, shifted).astype(v.dtype), dt)
    return impl


def _ordered_zeros(fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
                   larger: bool) -> ScalarImpl:
    """maximumf/minimumf (fn: numpy's NaN-propagating maximum/minimum) and maxnumf/minnumf
    (fmax/fmin), with -0.0 below +0.0, which numpy leaves to the operand order."""
    def impl(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
        x, y = as_float(a[0]), as_float(a[1])
        tie = x == y  # equal values, +0.0 and -0.0 among them
        pick_x = np.signbit(x) != larger  # the larger of a tie has no sign bit
        return _to(np.where(tie, np.where(pick_x, x, y), fn(x, y)), dt)
    return impl


def _round_half_away(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _fma(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
    wide = np.float64 if dt.itemsize <= 4 else dt
    return _to(a[0].astype(wide) * a[1].astype(wide) + a[2].astype(wide), dt)


def _cmpf(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
    x, y = as_float(a[0]), as_float(a[1])
    pred = str(op.attr)
    if pred == "false":
        return np.zeros(np.broadcast_shapes(x.shape, y.shape), dtype=np.bool_)
    if pred == "true":
        return np.ones(np.broadcast_shapes(x.shape, y.shape), dtype=np.bool_)
    unordered = np.isnan(x) | np.isnan(y)
    if pred == "ord":
        return ~unordered
    if pred == "uno":
        return unordered
    base = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
            "le": np.less_equal, "ne": np.not_equal}[pred[1:]](x, y)
    return (base & ~unordered) if pred[0] == "o" else (base | unordered)


def _cmpi(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
    pred = str(op.attr)
    x, y = a[0], a[1]
    if pred in ("eq", "ne"):
        return np.equal(x, y) if pred == "eq" else np.not_equal(x, y)
    view = as_signed if pred[0] == "s" else as_unsigned
    fn = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}[pred[1:]]
    return fn(view(x), view(y))


def _trunci(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
    return _to(a[0], dt)


def _bitcast(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
    src = np.ascontiguousarray(a[0])
    if src.dtype.itemsize != dt.itemsize:
        raise ValueError(f"bitcast from {src.dtype} to {dt} changes the element size")
    return src.view(dt)


def _float_to_int(signed: bool) -> ScalarImpl:
    """fptosi/fptoui saturate to the result's signed/unsigned range, NaN gives 0 (the
    contract): numpy's own conversion of an out-of-range float is undefined."""
    def impl(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
        x = np.trunc(as_float(a[0])).astype(np.float64)
        bits = bit_width(dt)
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        # The bounds as floats: lo is a power of two (exact); hi + 1 is one too.
        inside = (x >= float(lo)) & (x < float(hi + 1))
        wide = np.where(inside, x, 0).astype(np.int64 if signed else np.uint64)
        wide = np.where(x >= float(hi + 1), hi, np.where(x < float(lo), lo, wide))
        wide = np.where(np.isnan(x), 0, wide).astype(np.int64 if signed else np.uint64)
        return _to(wide, dt)
    return impl


def _to_float(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """A float array rounded once to the float type `dt`. numpy and ml_dtypes round f64 to
    f16/f32 once, but f64 to bf16 (and the small floats) through f32, rounding twice; here f64
    goes to f32 rounding to odd first (truncate, then set the last bit when inexact), after
    which rounding to `dt` is the single rounding of the exact value. Narrower sources round once as they are."""
    if dt not in _ODD_FIRST or x.dtype != np.float64:
        return _to(x, dt)
    f = x.astype(np.float32)
    bits = f.view(np.uint32)
    finite = np.isfinite(x)
    # Nearest rounded up in magnitude: step back one ulp toward zero (inf becomes FLT_MAX).
    too_far = finite & (np.abs(f.astype(np.float64)) > np.abs(x))
    bits = np.where(too_far, bits - np.uint32(1), bits)
    inexact = finite & (bits.view(np.float32).astype(np.float64) != x)
    bits = np.where(inexact, bits | np.uint32(1), bits).astype(np.uint32)
    return bits.view(np.float32).astype(dt)


def _int_to_float(view: Callable[[np.ndarray], np.ndarray]) -> ScalarImpl:
    """sitofp/uitofp: through f64 for bf16 and the small floats (exact below 2^53), so they
    round once there too."""
    def impl(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
        v = view(a[0])
        return _to_float(v.astype(np.float64), dt) if dt in _ODD_FIRST else _to(v, dt)
    return impl


def _float_resize(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
    return _to_float(a[0], dt)


SCALAR_IMPLS: dict[str, ScalarImpl] = {
    # float
    "addf": _float_binary(np.add),
    "subf": _float_binary(np.subtract),
    "mulf": _float_binary(np.multiply),
    "divf": _float_binary(np.divide),
    "remf": _float_binary(np.fmod),
    "negf": _float_unary(np.negative),
    "absf": _float_unary(np.abs),
    "maximumf": _ordered_zeros(np.maximum, larger=True),
    "minimumf": _ordered_zeros(np.minimum, larger=False),
    "maxnumf": _ordered_zeros(np.fmax, larger=True),
    "minnumf": _ordered_zeros(np.fmin, larger=False),
    "cmpf": _cmpf,
    "exp": _float_unary(np.exp),
    "exp2": _float_unary(np.exp2),
    "log": _float_unary(np.log),
    "log2": _float_unary(np.log2),
    "log1p": _float_unary(np.log1p),
    "tanh": _float_unary(np.tanh),
    "sqrt": _float_unary(np.sqrt),
    "rsqrt": _float_unary(lambda x: 1.0 / np.sqrt(x)),
    "pow": _float_binary(np.power),
    "sin": _float_unary(np.sin),
    "cos": _float_unary(np.cos),
    "erf": _float_unary(erf),
    "floor": _float_unary(np.floor),
    "ceil": _float_unary(np.ceil),
    "round": _float_unary(_round_half_away),
    "roundeven": _float_unary(np.rint),
    "fma": _fma,
    "expm1": _float_unary(_in_f64(np.expm1)),
    "atan": _float_unary(np.arctan),
    "atan2": _float_binary(np.arctan2),
    "acos": _float_unary(np.arccos),
    "acosh": _float_unary(np.arccosh),
    "asin": _float_unary(np.arcsin),
    "asinh": _float_unary(np.arcsinh),
    "atanh": _float_unary(np.arctanh),
    "cbrt": _float_unary(np.cbrt),
    "cosh": _float_unary(np.cosh),
    "sinh": _float_unary(np.sinh),
    "tan": _float_unary(np.tan),
    # integer
    "addi": _int_binary(np.add),
    "subi": _int_binary(np.subtract),
    "muli": _int_binary(np.multiply),
    "divsi": _signed_division("zero"),
    "floordivsi": _signed_division("floor"),
    "ceildivsi": _signed_division("ceil"),
    "divui": _int_binary(np.floor_divide, as_unsigned),
    "ceildivui": _ceildivui,
    "remsi": _int_binary(np.fmod, as_signed),
    "remui": _int_binary(np.remainder, as_unsigned),
    "andi": _int_binary(np.bitwise_and),
    "ori": _int_binary(np.bitwise_or),
    "xori": _int_binary(np.bitwise_xor),
    "shli": _shift("shli"),
    "shrsi": _shift("shrsi"),
    "shrui": _shift("shrui"),
    "maxsi": _int_binary(np.maximum, as_signed),
    "minsi": _int_binary(np.minimum, as_signed),
    "maxui": _int_binary(np.maximum, as_unsigned),
    "minui": _int_binary(np.minimum, as_unsigned),
    "cmpi": _cmpi,
    "absi": lambda a, op, dt: _to(np.abs(as_signed(a[0])), dt),
    # other
    "select": lambda a, op, dt: _to(np.where(a[0].astype(np.bool_, copy=False), a[1], a[2]), dt),
    "constant": lambda a, op, dt: _to(np.asarray(op.attr), dt),
    # `index` needs the iteration space: the body evaluator handles it.
    # casts
    "extf": _float_resize,
    "truncf": _float_resize,
    "sitofp": _int_to_float(as_signed),
    "uitofp": _int_to_float(as_unsigned),
    "fptosi": _float_to_int(signed=True),
    "fptoui": _float_to_int(signed=False),
    "extsi": lambda a, op, dt: _to(as_signed(a[0]), dt),
    "extui": lambda a, op, dt: _to(as_unsigned(a[0]), dt),
    "trunci": _trunci,
    "bitcast": _bitcast,
    "index_cast": lambda a, op, dt: _to(as_signed(a[0]), dt),
    "index_castui": lambda a, op, dt: _to(as_unsigned(a[0]), dt),
}

# `index` and `push` read the dispatch (iteration space, push constants), `extract` and `assert`
# its captured tensors and check messages: the body evaluator implements them.
assert set(SCALAR_IMPLS) | {"index", "push", "extract", "assert"} == SCALAR_OPS, \
    "every scalar op needs an impl"


def push_scalar(constant: int, dtype: np.dtype) -> np.ndarray:
    """A push constant read as a scalar of `dtype` (the `push` op): its low bits, as many as the
    dtype has, are the value (a float's bits, an integer truncated)."""
    bits = bit_width(dtype)
    low = int(constant) & ((1 << bits) - 1)
    if dtype == np.bool_:
        return np.asarray(bool(low))
    if dtype in _SUB_BYTE:
        return np.asarray(low, np.int64).astype(dtype)
    if dtype.kind == "f" or dtype in _LOW_PRECISION:
        return np.asarray(low, _UNSIGNED[dtype.itemsize]).view(dtype)
    return np.asarray(low, _UNSIGNED[dtype.itemsize]).view(_SIGNED[dtype.itemsize]).astype(
        dtype, copy=False)

# Associative combiners a reduction body may end with, and the ufunc that reduces with them.
# Signedness of min/max/... is applied by viewing the operand before reducing.
COMBINERS: dict[str, tuple[np.ufunc, Callable[[np.ndarray], np.ndarray]]] = {
    "addf": (np.add, as_float), "addi": (np.add, lambda x: x),
    "mulf": (np.multiply, as_float), "muli": (np.multiply, lambda x: x),
    "maximumf": (np.maximum, as_float), "maxnumf": (np.fmax, as_float),
    "minimumf": (np.minimum, as_float), "minnumf": (np.fmin, as_float),
    "maxsi": (np.maximum, as_signed), "minsi": (np.minimum, as_signed),
    "maxui": (np.maximum, as_unsigned), "minui": (np.minimum, as_unsigned),
    "andi": (np.bitwise_and, lambda x: x), "ori": (np.bitwise_or, lambda x: x),
    "xori": (np.bitwise_xor, lambda x: x),
}

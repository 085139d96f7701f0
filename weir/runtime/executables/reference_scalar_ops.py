"""numpy implementations of the reference kernels' scalar ops, applied to whole arrays at once.

MLIR integers are signless; the op says how to read them (`divsi` signed, `divui` unsigned), so
integer ops reinterpret their operands with `as_signed`/`as_unsigned` views. f16/bf16 math is
done in f32 and rounded once at the end. Integer overflow wraps (two's complement)."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from weir.format.element_types import VALUE_TYPES
from weir.format.reference_kernel import SCALAR_OPS, ScalarOp
from weir.runtime.executables.reference_erf import erf
from weir.runtime.hal.element_types import numpy_dtype

Arrays = Sequence[np.ndarray]
# impl(operands, op, result dtype) -> result array (broadcast shape of the operands)
ScalarImpl = Callable[[Arrays, ScalarOp, np.dtype], np.ndarray]

_LOW_PRECISION = (np.dtype(np.float16), numpy_dtype("bf16"))
# Same-width reinterpretations, by byte size, from weir/format's element-type table.
_SIGNED = {t.byte_size: t.dtype for t in VALUE_TYPES if t.kind == "int"}
_UNSIGNED = {t.byte_size: t.dtype for t in VALUE_TYPES if t.kind == "uint"}


def compute_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in _LOW_PRECISION else dtype


def as_float(a: np.ndarray) -> np.ndarray:
    return a.astype(compute_dtype(a.dtype), copy=False)


def as_signed(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        return -(a.astype(np.int8))  # i1 true is -1 when read as signed
    if a.dtype.kind == "u":
        return a.view(_SIGNED[a.dtype.itemsize])
    return a


def as_unsigned(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    if a.dtype.kind == "i":
        return a.view(_UNSIGNED[a.dtype.itemsize])
    return a


def _to(result: np.ndarray | np.generic, dtype: np.dtype) -> np.ndarray:
    """Casts a result to the op's dtype; i1 results keep only the low bit (trunci semantics)."""
    arr = np.asarray(result)
    if dtype == np.bool_ and arr.dtype != np.bool_:
        return (as_unsigned(arr) & 1).astype(np.bool_) if arr.dtype.kind in "iu" else \
            arr.astype(np.bool_)
    return arr.astype(dtype, copy=False)


def _float_unary(fn: Callable[[np.ndarray], np.ndarray]) -> ScalarImpl:
    return lambda a, op, dt: _to(fn(as_float(a[0])), dt)


def _float_binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> ScalarImpl:
    return lambda a, op, dt: _to(fn(as_float(a[0]), as_float(a[1])), dt)


def _int_binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
                view: Callable[[np.ndarray], np.ndarray] = lambda x: x) -> ScalarImpl:
    def impl(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
        x, y = a[0], a[1]
        if x.dtype == np.bool_:
            x, y = x.astype(np.uint8), y.astype(np.uint8)
        return _to(fn(view(x), view(y)), dt)
    return impl


def _divsi(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
    """Truncates toward zero like C (numpy's // floors)."""
    x, y = as_signed(a[0]), as_signed(a[1])
    q = np.floor_divide(x, y)
    r = x - q * y
    q = q + ((r != 0) & ((x < 0) != (y < 0))).astype(q.dtype)
    return _to(q, dt)


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


def _float_to_int(a: Arrays, op: ScalarOp, dt: np.dtype) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return _to(np.trunc(as_float(a[0])), dt)


SCALAR_IMPLS: dict[str, ScalarImpl] = {
    # float
    "addf": _float_binary(np.add),
    "subf": _float_binary(np.subtract),
    "mulf": _float_binary(np.multiply),
    "divf": _float_binary(np.divide),
    "remf": _float_binary(np.fmod),
    "negf": _float_unary(np.negative),
    "absf": _float_unary(np.abs),
    "maximumf": _float_binary(np.maximum),
    "minimumf": _float_binary(np.minimum),
    "maxnumf": _float_binary(np.fmax),
    "minnumf": _float_binary(np.fmin),
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
    # integer
    "addi": _int_binary(np.add),
    "subi": _int_binary(np.subtract),
    "muli": _int_binary(np.multiply),
    "divsi": _divsi,
    "divui": _int_binary(np.floor_divide, as_unsigned),
    "remsi": _int_binary(np.fmod, as_signed),
    "remui": _int_binary(np.remainder, as_unsigned),
    "andi": _int_binary(np.bitwise_and),
    "ori": _int_binary(np.bitwise_or),
    "xori": _int_binary(np.bitwise_xor),
    "shli": _int_binary(np.left_shift, as_unsigned),
    "shrsi": lambda a, op, dt: _to(np.right_shift(as_signed(a[0]), as_unsigned(a[1]).astype(
        as_signed(a[0]).dtype)), dt),
    "shrui": _int_binary(np.right_shift, as_unsigned),
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
    "extf": lambda a, op, dt: _to(a[0], dt),
    "truncf": lambda a, op, dt: _to(a[0], dt),
    "sitofp": lambda a, op, dt: _to(as_signed(a[0]), dt),
    "uitofp": lambda a, op, dt: _to(as_unsigned(a[0]), dt),
    "fptosi": _float_to_int,
    "fptoui": _float_to_int,
    "extsi": lambda a, op, dt: _to(as_signed(a[0]), dt),
    "extui": lambda a, op, dt: _to(as_unsigned(a[0]), dt),
    "trunci": _trunci,
    "bitcast": _bitcast,
    "index_cast": lambda a, op, dt: _to(as_signed(a[0]), dt),
}

# `index` and `push` read the dispatch (iteration space, push constants): the body evaluator.
assert set(SCALAR_IMPLS) | {"index", "push"} == SCALAR_OPS, "every scalar op needs an impl"


def push_scalar(constant: int, dtype: np.dtype) -> np.ndarray:
    """A push constant read as a scalar of `dtype` (the `push` op): its low bits, as many as the
    dtype has, are the value (a float's bits, an integer truncated)."""
    bits = 1 if dtype == np.bool_ else dtype.itemsize * 8
    low = int(constant) & ((1 << bits) - 1)
    if dtype == np.bool_:
        return np.asarray(bool(low))
    if dtype.kind == "f" or dtype == numpy_dtype("bf16"):
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

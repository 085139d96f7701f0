"""The value of a tensor computed only from constants, evaluated at compile time with numpy.

Why: exporters compute derived constants in the program itself (PyTorch's batch norm in eval
mode gives `1 / sqrt(var + eps)` as three elementwise generics over the running variance).
A pass that folds such a value into a weight needs its numbers. Only what the value is made of
is evaluated: constants, their reshapes and all-parallel elementwise generics whose body uses a
small set of float ops, in the element type the program states (so f32 math rounds as the
target's would). Anything else, or an assertion in a body that fails, gives None: the value is
then not a constant to the caller, which leaves the program as it was."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from weir.compiler.constant_data import constant_array
from weir.ir import ConstantStore
from weir.ir.upstream import (
    Builder,
    AffineMap,
    arith,
    cf,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerType,
    linalg,
    math,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)

# A generic evaluated here computes at most this many elements: per-channel vectors, not
# activations (a larger constant computation is the run time's to do, once per call).
MAX_GENERIC_ELEMENTS = 1 << 16

_FLOATS: dict[type, np.dtype] = {Float16Type: np.dtype(np.float16),
                                  Float32Type: np.dtype(np.float32),
                                  Float64Type: np.dtype(np.float64)}
_FLOAT_TYPES = (Float16Type(), Float32Type(), Float64Type())
_BINARY: dict[type[Operation], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    arith.AddfOp: np.add, arith.SubfOp: np.subtract, arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide, arith.MaximumfOp: np.maximum, arith.MinimumfOp: np.minimum,
}
_UNARY: dict[type[Operation], Callable[[np.ndarray], np.ndarray]] = {
    arith.NegfOp: np.negative, math.SqrtOp: np.sqrt, math.AbsFOp: np.abs,
}
# Ordered predicates are false on NaN, unordered ones true: numpy's comparisons are ordered.
_CMPF: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "oeq": np.equal, "ogt": np.greater, "oge": np.greater_equal, "olt": np.less,
    "ole": np.less_equal,
    "one": lambda a, b: np.not_equal(a, b) & ~np.isnan(a) & ~np.isnan(b),
    "une": np.not_equal,
}
_CMPF_NAMES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
               "ult", "ule", "une", "uno", "true")


def constant_value(value: SSAValue, constants: ConstantStore) -> np.ndarray | None:
    """`value`'s array (of its static shape and element type), or None when it is not one this
    module evaluates."""
    t = value.type
    if not isinstance(t, TensorType) or not t.has_static_shape() or \
            t.element_type not in _FLOAT_TYPES:
        return None
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, (DenseIntOrFPElementsAttr,
                                                                  DenseResourceAttr)):
        return constant_array(op.value, op, constants)
    if isinstance(op, (tensor.ExpandShapeOp, tensor.CollapseShapeOp)):
        source = constant_value(op.operands[0], constants)
        return None if source is None else source.reshape(tuple(t.get_shape()))
    if isinstance(op, linalg.GenericOp) and t.element_count() <= MAX_GENERIC_ELEMENTS:
        return _generic(op, constants)
    return None


def _dtype(element: object) -> np.dtype | None:
    """Floats (the values) and i1 (comparisons, select conditions) only."""
    if isinstance(element, IntegerType) and element.width.data == 1:
        return np.dtype(np.bool_)
    return _FLOATS.get(type(element))


def _generic(op: linalg.GenericOp, constants: ConstantStore) -> np.ndarray | None:
    """An elementwise generic: every map the identity, one result, a body of known ops."""
    if len(op.outputs) != 1 or len(op.res) != 1 or \
            any(str(it.data) != "parallel" for it in op.iterator_types) or \
            any(not _identity(m.data) for m in op.indexing_maps):
        return None
    shape = tuple(op.res[0].type.get_shape())  # type: ignore[attr-defined]
    inputs = [constant_value(v, constants) for v in op.inputs]
    if any(a is None or a.shape != shape for a in inputs):
        return None
    block = op.body.block
    if block.args[len(op.inputs)].uses:  # the body reads its output's old value
        return None
    values: dict[SSAValue, np.ndarray] = dict(zip(block.args, inputs))  # type: ignore[arg-type]
    with np.errstate(all="ignore"):
        for body_op in block.ops:
            if isinstance(body_op, linalg.YieldOp):
                result = values.get(body_op.operands[0])
                return None if result is None else np.broadcast_to(result, shape).copy()
            if not _step(body_op, values):
                return None
    return None


def _identity(m: AffineMap) -> bool:
    return m.num_symbols == 0 and m == AffineMap.identity(m.num_dims)


def _operand(v: SSAValue, values: dict[SSAValue, np.ndarray]) -> np.ndarray | None:
    """A body value, or a scalar constant the body reads from outside."""
    if v in values:
        return values[v]
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr):
        dtype = _dtype(v.type)
        return None if dtype is None else np.asarray(op.value.value.data, dtype=dtype)
    return None


def _step(op: Operation, values: dict[SSAValue, np.ndarray]) -> bool:
    """Evaluates one body op into `values`; False when it is not one evaluated here."""
    args = [_operand(v, values) for v in op.operands]
    if not args or any(a is None for a in args):  # (a constant made in the body: not evaluated)
        return False
    if isinstance(op, cf.AssertOp):
        return bool(np.all(args[0]))  # a failing assertion is the run time's to report
    if len(op.results) != 1:
        return False
    result_dtype = _dtype(op.results[0].type)
    if result_dtype is None:
        return False
    a = args[0]
    assert a is not None
    if type(op) in _BINARY:
        out = _BINARY[type(op)](a, args[1])
    elif type(op) in _UNARY:
        out = _UNARY[type(op)](a)
    elif isinstance(op, math.RsqrtOp):
        out = np.divide(np.asarray(1, a.dtype), np.sqrt(a))
    elif isinstance(op, (arith.TruncFOp, arith.ExtFOp)):
        out = a
    elif isinstance(op, arith.CmpfOp):
        predicate = _CMPF.get(_CMPF_NAMES[op.predicate.value.data])
        if predicate is None:
            return False
        out = predicate(a, args[1])
    elif isinstance(op, arith.SelectOp):
        out = np.where(a, args[1], args[2])  # type: ignore[arg-type]
    else:
        return False
    values[op.results[0]] = np.asarray(out).astype(result_dtype)
    return True


def fill_value(value: SSAValue) -> tuple[SSAValue, float] | None:
    """The float constant a `linalg.fill` writes to every element of `value`, as the scalar SSA
    value and its number; None for any other value."""
    fill = value.owner
    if not isinstance(fill, linalg.FillOp):
        return None
    scalar = fill.inputs[0]
    const = scalar.owner
    if not isinstance(const, arith.ConstantOp) or not isinstance(const.value, FloatAttr):
        return None
    return scalar, const.value.value.data


def resource_name(value: SSAValue, default: str) -> str:
    """The name of the resource `value` is a constant of, else `default`: a hint for the name
    of a constant derived from it."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseResourceAttr):
        return owner.value.resource_handle.data
    return default


def stored_constant(b: Builder, constants: ConstantStore, array: np.ndarray, t: TensorType,
                    hint: str) -> SSAValue:
    """`array` (of `t`'s shape and element type) stored in the module's resources under a name
    made from `hint`, as the `arith.constant` that reads it, inserted at `b`."""
    name = constants.add(np.ascontiguousarray(array).tobytes(), hint)
    return b.insert(arith.ConstantOp(DenseResourceAttr.from_params(name, t), t)).result

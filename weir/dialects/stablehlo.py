"""The few StableHLO ops weir reads, in MLIR's generic form (as IREE's tests and JAX's exports
print them when asked for it): `stablehlo.slice` and `stablehlo.reverse`. The input phase
(convert-stablehlo) writes them as tensor and linalg ops.

- slice: result[i] = operand[start + i * stride] per dimension, for start <= . < limit;
- reverse: each of `dimensions` read from its end."""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, DYNAMIC_INDEX, TensorType
from xdsl.ir import Dialect
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    ParsePropInAttrDict,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException


def _values(a: DenseArrayBase) -> list[int]:
    return [int(v) for v in a.get_values()]


def _shape(t: object) -> list[int]:
    assert isinstance(t, TensorType)
    return list(t.get_shape())


@irdl_op_definition
class SliceOp(IRDLOperation):
    name = "stablehlo.slice"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    start_indices = prop_def(DenseArrayBase)
    limit_indices = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    irdl_options = (ParsePropInAttrDict(),)

    def starts(self) -> list[int]:
        return _values(self.start_indices)

    def limits(self) -> list[int]:
        return _values(self.limit_indices)

    def steps(self) -> list[int]:
        return _values(self.strides)

    def verify_(self) -> None:
        shape = _shape(self.operand.type)
        starts, limits, steps = self.starts(), self.limits(), self.steps()
        if not len(starts) == len(limits) == len(steps) == len(shape):
            raise VerifyException(f"start_indices, limit_indices and strides must have one entry "
                                  f"per dimension of {self.operand.type}")
        expected = []
        for d, (lo, hi, step, size) in enumerate(zip(starts, limits, steps, shape)):
            if step < 1 or lo < 0 or hi < lo or (size != DYNAMIC_INDEX and hi > size):
                raise VerifyException(f"dimension {d}: [{lo}, {hi}) by {step} is not a slice of "
                                      f"a dimension of size {'?' if size < 0 else size}")
            expected.append(-(-(hi - lo) // step))
        if _shape(self.result.type) != expected or \
                self.result.type.element_type != self.operand.type.element_type:  # type: ignore[attr-defined]
            raise VerifyException(f"the result must be a tensor of shape {expected} of the "
                                  f"operand's element type, got {self.result.type}")


@irdl_op_definition
class ReverseOp(IRDLOperation):
    name = "stablehlo.reverse"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    dimensions = prop_def(DenseArrayBase)
    irdl_options = (ParsePropInAttrDict(),)

    def dims(self) -> list[int]:
        return _values(self.dimensions)

    def verify_(self) -> None:
        rank = len(_shape(self.operand.type))
        dims = self.dims()
        if len(set(dims)) != len(dims) or any(not 0 <= d < rank for d in dims):
            raise VerifyException(f"dimensions {dims} must be distinct dimensions of the "
                                  f"rank-{rank} operand")
        if self.result.type != self.operand.type:
            raise VerifyException(f"the result must have the operand's type {self.operand.type}")


DIALECT = Dialect("stablehlo", [SliceOp, ReverseOp], [])

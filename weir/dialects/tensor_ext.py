"""weir's refinement of xDSL 0.74's `tensor.reshape`: its verifier multiplies dimension sizes
with each dynamic size counted as -1, so a valid reshape of a `tensor<?x4xf32>` into
`tensor<8xf32>` is rejected. MLIR compares element counts only when both shapes are static;
so does this subclass, which `weir.ir.context` loads in place of the upstream op."""

from __future__ import annotations

import math

from xdsl.dialects import tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Dialect
from xdsl.utils.exceptions import VerifyException


class ReshapeOp(tensor.ReshapeOp):
    def verify_(self) -> None:
        self.get_irdl_definition().verify(self)
        source, shape, result = self.source.type, self.shape.type, self.result.type
        if not (isinstance(source, TensorType) and isinstance(shape, TensorType)
                and isinstance(result, TensorType)):
            raise VerifyException("source, shape and result must be ranked tensors")
        if source.element_type != result.element_type:
            raise VerifyException(f"source and result element types differ: "
                                  f"{source.element_type} vs {result.element_type}")
        if shape.get_num_dims() != 1:
            raise VerifyException(f"the shape operand must have rank 1, got {shape}")
        if shape.get_shape()[0] != result.get_num_dims():
            raise VerifyException(f"the shape operand has {shape.get_shape()[0]} elements but "
                                  f"the result has rank {result.get_num_dims()}")
        sizes = (source.get_shape(), result.get_shape())
        if all(DYNAMIC_INDEX not in s for s in sizes) and math.prod(sizes[0]) != math.prod(sizes[1]):
            raise VerifyException(f"source and result have different element counts: "
                                  f"{math.prod(sizes[0])} vs {math.prod(sizes[1])}")


DIALECT = Dialect("tensor", [ReshapeOp], [])

"""The forms of a matrix product the global-optimization passes rewrite, recognised one way for
all of them (pack-matmul-weights, fuse-horizontal-matmuls, hoist-sliced-matmuls)."""

from __future__ import annotations

import numpy as np

from weir.compiler.global_opt.constant_values import fill_value
from weir.dialects import linalg_ext
from weir.ir.upstream import Float32Type, linalg, Operation, SSAValue, TensorType

_F32 = Float32Type()


def plain_matmul(op: Operation) -> bool:
    """A 2-D product without maps of its own (linalg.matmul, or weir's with default maps), f32
    throughout."""
    if isinstance(op, linalg_ext.MatmulOp):
        if op.has_explicit_maps():
            return False
    elif not isinstance(op, linalg.MatmulOp):
        return False
    if len(op.operands) != 3 or len(op.results) != 1:
        return False
    types = [v.type for v in (*op.operands, op.results[0])]
    return all(isinstance(t, TensorType) and t.element_type == _F32 for t in types)


def zero_fill(value: SSAValue) -> SSAValue | None:
    """The +0 scalar that `value` is a fill of, else None: a product accumulated onto it is the
    product alone."""
    found = fill_value(value)
    if found is None or found[1] != 0.0 or np.signbit(found[1]):
        return None
    return found[0]

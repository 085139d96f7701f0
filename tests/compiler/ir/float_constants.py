"""The values of the one constant a test program holds, for the float-literal tests."""

from __future__ import annotations

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr

from weir.ir import parse_module


def constant_values(src: str, filename: str = "f.mlir") -> tuple[float, ...]:
    module = parse_module(src, filename)
    (op,) = module.body.block.ops
    assert isinstance(op, ConstantOp)
    value = op.value
    if isinstance(value, FloatAttr):
        return (value.value.data,)
    assert isinstance(value, DenseIntOrFPElementsAttr)
    return tuple(value.get_values())

"""Elementwise named linalg ops MLIR has and xDSL 0.74 lacks (DESIGN.md §3), written like
xDSL's own (`linalg.exp`, `linalg.sqrt`): the op's body is implied by its name, and the input
phase (`generalize-named-ops`) makes each a parallel generic with that body.

    %n = linalg.negf ins(%x : tensor<4xf32>) outs(%init : tensor<4xf32>) -> tensor<4xf32>
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.linalg.abstract_ops import ElementwiseOperation
from xdsl.dialects.linalg.ops import YieldOp
from xdsl.ir import Attribute, BlockArgument, Region, SSAValue
from xdsl.irdl import irdl_op_definition


@irdl_op_definition
class NegfOp(ElementwiseOperation):
    """`linalg.negf`: -x elementwise, on floats (the sign bit flips: -0.0 for 0.0, NaNs too)."""

    name = "linalg.negf"

    def __init__(self, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue] = (),
                 res: Sequence[Attribute] | None = None,
                 attributes: dict[str, Attribute] | None = None) -> None:
        super().__init__(
            ins=inputs, outs=outputs,
            result_types=tuple(o.type for o in outputs) if res is None else res,
            attributes=attributes, hidden_region=self.get_hidden_region(inputs, outputs))

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue],
                          outputs: Sequence[SSAValue]) -> Region:
        @Builder.implicit_region(cls.body_arg_types((*inputs, *outputs)))
        def body(args: tuple[BlockArgument, ...]) -> None:
            YieldOp(arith.NegfOp(args[0]))

        return body


OPS = (NegfOp,)

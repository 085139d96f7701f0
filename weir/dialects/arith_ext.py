"""weir's refinements of xDSL 0.74's `arith` ops, and `arith.remf`, which it lacks: MLIR lets comparisons, casts and `select` work
elementwise on tensors (`arith.cmpf olt, %a, %b : tensor<4xf32>` gives `tensor<4xi1>`), xDSL
accepts only scalars for them. Real programs exported from JAX or PyTorch use the tensor forms,
so weir accepts them and `convert-elementwise-to-linalg` turns them into generics like every
other elementwise op.

Each class is a plain subclass of the upstream op (so `isinstance(op, arith.CmpfOp)` holds and
`weir.ir.context` replaces the upstream op with it) whose operation definition widens the
operand/result constraints to "the scalar, or a tensor of it"; verification then also checks
that shapes agree, which the scalar-only upstream verifiers could not need to.
"""

from __future__ import annotations

import dataclasses
from functools import cache

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloatConstr,
    IndexType,
    IntegerType,
    ShapedType,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import AnyOf, irdl_op_definition, OpDef, OperandDef, ResultDef, base, traits_def
from xdsl.irdl.constraints import AttrConstraint
from xdsl.parser import Parser
from xdsl.traits import Pure
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

_INT = AnyOf.get(IntegerType, IndexType)
_FLOAT = AnyFloatConstr


def _scalar_or_tensor(element: AttrConstraint) -> AttrConstraint:
    return AnyOf.get(element, TensorType.constr(element))


def _element(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, TensorType) else t  # type: ignore[return-value]


def _shape(t: Attribute) -> tuple[int, ...] | None:
    return tuple(t.get_shape()) if isinstance(t, ShapedType) else None


def _with_element(like: Attribute, element: Attribute) -> Attribute:
    if isinstance(like, TensorType):
        return TensorType(element, like.get_shape(), like.encoding)
    return element


def _widened(upstream: type, operands: dict[str, AttrConstraint],
             results: dict[str, AttrConstraint]) -> OpDef:
    d = upstream.get_irdl_definition()
    return dataclasses.replace(
        d,
        operands=[(n, OperandDef(operands[n]) if n in operands else od) for n, od in d.operands],
        results=[(n, ResultDef(results[n]) if n in results else rd) for n, rd in d.results])


def _same_shapes(*values: SSAValue) -> None:
    shapes = {_shape(v.type) for v in values}
    if len(shapes) != 1:
        kinds = ", ".join(str(v.type) for v in values)
        raise VerifyException(f"needs operands and result of one shape (all scalars "
                              f"or tensors of the same shape), got {kinds}")


def _comparison_of_shape(parsed: arith.IRDLOperation) -> arith.IRDLOperation:
    """The upstream parser always types the result i1; rebuilt with the operands' shape."""
    operands = list(parsed.operands)
    result = _with_element(operands[0].type, i1)
    if result == parsed.results[0].type:
        return parsed
    op = type(parsed).create(operands=operands, result_types=[result],
                             properties=dict(parsed.properties), attributes=dict(parsed.attributes))
    parsed.erase()
    return op


# --- comparisons ------------------------------------------------------------------------------

class CmpfOp(arith.CmpfOp):
    @classmethod
    @cache
    def get_irdl_definition(cls) -> OpDef:
        return _widened(arith.CmpfOp, {}, {"result": _scalar_or_tensor(base(IntegerType))})

    @classmethod
    def parse(cls, parser: Parser) -> CmpfOp:
        return _comparison_of_shape(super().parse(parser))  # type: ignore[return-value]

    def verify_(self) -> None:
        if _element(self.result.type) != i1:
            raise VerifyException(f"gives i1 elements, not {self.result.type}")
        _same_shapes(self.lhs, self.rhs, self.result)


class CmpiOp(arith.CmpiOp):
    @classmethod
    @cache
    def get_irdl_definition(cls) -> OpDef:
        return _widened(arith.CmpiOp, {}, {"result": _scalar_or_tensor(base(IntegerType))})

    @classmethod
    def parse(cls, parser: Parser) -> CmpiOp:
        return _comparison_of_shape(super().parse(parser))  # type: ignore[return-value]

    def verify_(self) -> None:
        if _element(self.result.type) != i1:
            raise VerifyException(f"gives i1 elements, not {self.result.type}")
        _same_shapes(self.lhs, self.rhs, self.result)


# --- select -----------------------------------------------------------------------------------

class SelectOp(arith.SelectOp):
    """MLIR spells a tensor condition `arith.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>`;
    a scalar i1 condition may also pick between whole tensors."""

    @classmethod
    @cache
    def get_irdl_definition(cls) -> OpDef:
        return _widened(arith.SelectOp, {"cond": _scalar_or_tensor(base(IntegerType))}, {})

    @classmethod
    def parse(cls, parser: Parser) -> SelectOp:
        cond = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        first = parser.parse_type()
        if parser.parse_optional_punctuation(",") is not None:
            cond_type, value_type = first, parser.parse_type()
        else:
            cond_type, value_type = i1, first
        c, a, b = parser.resolve_operands([cond, lhs, rhs], [cond_type, value_type, value_type],
                                          parser.pos)
        op = cls(c, a, b)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self.cond, self.lhs, self.rhs], printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if isinstance(self.cond.type, TensorType):
            printer.print_attribute(self.cond.type)
            printer.print_string(", ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        if _element(self.cond.type) != i1:
            raise VerifyException(f"needs an i1 condition, got {self.cond.type}")
        if isinstance(self.cond.type, TensorType):
            _same_shapes(self.cond, self.lhs, self.result)


# --- casts ------------------------------------------------------------------------------------

def _cast(upstream: type, source: AttrConstraint, target: AttrConstraint,
          check: str | None) -> type:
    """A cast op accepting tensors; `check` is "wider"/"narrower" for width-changing casts."""

    class Cast(upstream):  # type: ignore[misc, valid-type]
        @classmethod
        @cache
        def get_irdl_definition(cls) -> OpDef:
            return _widened(upstream, {"input": _scalar_or_tensor(source)},
                            {"result": _scalar_or_tensor(target)})

        def verify_(self) -> None:
            _same_shapes(self.input, self.result)
            if check is None:
                return
            src, dst = _element(self.input.type), _element(self.result.type)
            src_w, dst_w = _width(src), _width(dst)
            if (check == "wider" and dst_w <= src_w) or (check == "narrower" and dst_w >= src_w):
                relation = "larger" if check == "wider" else "smaller"
                raise VerifyException(f"the result's bit width must be {relation} "
                                      f"than the input's ({src} to {dst})")

    Cast.__name__ = Cast.__qualname__ = upstream.__name__
    return Cast


def _width(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return t.width.data
    return t.bitwidth  # type: ignore[attr-defined]


ExtSIOp = _cast(arith.ExtSIOp, base(IntegerType), base(IntegerType), "wider")
ExtUIOp = _cast(arith.ExtUIOp, base(IntegerType), base(IntegerType), "wider")
TruncIOp = _cast(arith.TruncIOp, base(IntegerType), base(IntegerType), "narrower")
SIToFPOp = _cast(arith.SIToFPOp, base(IntegerType), _FLOAT, None)
UIToFPOp = _cast(arith.UIToFPOp, base(IntegerType), _FLOAT, None)
FPToSIOp = _cast(arith.FPToSIOp, _FLOAT, base(IntegerType), None)
FPToUIOp = _cast(arith.FPToUIOp, _FLOAT, base(IntegerType), None)
IndexCastOp = _cast(arith.IndexCastOp, _INT, _INT, None)

# --- ops xDSL lacks ---------------------------------------------------------------------------

@irdl_op_definition
class RemFOp(arith.FloatingPointLikeBinaryOperation):
    """`arith.remf`: the remainder of a division truncated toward zero (C's fmod); the sign is
    the dividend's."""

    name = "arith.remf"
    traits = traits_def(Pure())


DIALECT = Dialect("arith", [RemFOp, CmpfOp, CmpiOp, SelectOp, ExtSIOp, ExtUIOp, TruncIOp, SIToFPOp,
                            UIToFPOp, FPToSIOp, FPToUIOp, IndexCastOp], [])

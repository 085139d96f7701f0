"""weir's refinements of xDSL 0.74's `arith` ops, and `arith.remf`, which it lacks: MLIR lets comparisons, casts and `select` work
elementwise on tensors (`arith.cmpf olt, %a, %b : tensor<4xf32>` gives `tensor<4xi1>`), xDSL
accepts only scalars for them. Real programs exported from JAX or PyTorch use the tensor forms,
so weir accepts them and `convert-elementwise-to-linalg` turns them into generics like every
other elementwise op.

Each class is a plain subclass of the upstream op (so `isinstance(op, arith.CmpfOp)` holds and
`weir.ir.context` replaces the upstream op with it) whose operation definition widens the
operand/result constraints to "the scalar, or a tensor of it"; verification then also checks
that shapes agree, which the scalar-only upstream verifiers could not need to.

Some refinements also accept the flags MLIR prints that xDSL does not parse: `exact` on
divsi/divui/shrsi/shrui, `overflow<...>` on trunci, `fastmath<...>` on extf/truncf, and truncf's
rounding mode. `exact` and the overflow flags only make results poison that weir computes anyway
(a refinement MLIR allows), fastmath permits what weir's exact results already satisfy, and a
rounding mode other than `to_nearest_even` parses but is refused by check-supported-ops (weir
rounds to nearest even only). The ops xDSL lacks altogether are in arith_extra.py.
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
    UnitAttr,
    i1,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import AnyOf, OpDef, OperandDef, OptPropertyDef, PropertyDef, ResultDef, base
from xdsl.irdl.constraints import AttrConstraint
from xdsl.irdl.declarative_assembly_format import FormatProgram
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from weir.dialects.arith_extra import (
    float_width_changes,
    IndexCastUIOp,
    parse_truncation,
    print_truncation,
    RemFOp,
    ScalingExtFOp,
    ScalingTruncFOp,
    verify_rounding_mode,
)

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
             results: dict[str, AttrConstraint],
             properties: dict[str, PropertyDef] | None = None,
             assembly_format: str | None = None) -> OpDef:
    """`upstream`'s definition with wider operand/result constraints and, for the flags xDSL
    does not know, extra properties and the assembly format that spells them."""
    d = upstream.get_irdl_definition()
    props = properties or {}
    return dataclasses.replace(
        d,
        operands=[(n, OperandDef(operands[n]) if n in operands else od) for n, od in d.operands],
        results=[(n, ResultDef(results[n]) if n in results else rd) for n, rd in d.results],
        properties={**d.properties, **props},
        accessor_names={**d.accessor_names, **{n: (n, "property") for n in props}},
        assembly_format=assembly_format or d.assembly_format)


class _Refined:
    """Parses, prints and verifies with the refined definition: the upstream class's methods
    hold the upstream one (its format, its properties)."""

    @classmethod
    def parse(cls, parser: Parser) -> arith.IRDLOperation:
        return _program(cls).parse(parser, cls)  # type: ignore[arg-type]

    def print(self, printer: Printer) -> None:
        _program(type(self)).print(printer, self)  # type: ignore[arg-type]

    def verify_(self) -> None:
        type(self).get_irdl_definition().verify(self)  # type: ignore[attr-defined]


@cache
def _program(cls: type) -> FormatProgram:
    definition = cls.get_irdl_definition()  # type: ignore[attr-defined]
    return FormatProgram.from_str(definition.assembly_format, definition)


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
        quoted = parser.parse_optional_str_literal()
        if quoted is None:
            return _comparison_of_shape(super().parse(parser))  # type: ignore[return-value]
        # The predicate as a string (`arith.cmpi "sgt", %a, %b : i8`), as MLIR also accepts.
        parser.parse_punctuation(",")
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        a, b = parser.resolve_operands([lhs, rhs], [t, t], parser.pos)
        return _comparison_of_shape(cls(a, b, quoted))  # type: ignore[return-value]

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
          check: str | None, properties: dict[str, PropertyDef] | None = None,
          assembly_format: str | None = None) -> type:
    """A cast op accepting tensors; `check` is "wider"/"narrower" for width-changing casts,
    "index" for casts between index and an integer."""

    class Cast(_Refined, upstream):  # type: ignore[misc, valid-type]
        @classmethod
        @cache
        def get_irdl_definition(cls) -> OpDef:
            return _widened(upstream, {"input": _scalar_or_tensor(source)},
                            {"result": _scalar_or_tensor(target)}, properties, assembly_format)

        def verify_(self) -> None:
            super().verify_()
            _same_shapes(self.input, self.result)
            src, dst = _element(self.input.type), _element(self.result.type)
            if check == "index":
                if isinstance(src, IndexType) == isinstance(dst, IndexType):
                    raise VerifyException(f"casts between index and an integer, not {src} to "
                                          f"{dst}")
                return
            if check is None:
                return
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


_OVERFLOW = {"overflowFlags": OptPropertyDef(base(arith.IntegerOverflowAttr))}
_FASTMATH = {"fastmath": OptPropertyDef(base(arith.FastMathFlagsAttr))}

ExtSIOp = _cast(arith.ExtSIOp, base(IntegerType), base(IntegerType), "wider")
ExtUIOp = _cast(arith.ExtUIOp, base(IntegerType), base(IntegerType), "wider")
TruncIOp = _cast(arith.TruncIOp, base(IntegerType), base(IntegerType), "narrower", _OVERFLOW,
                 "$input (`overflow` `` $overflowFlags^)? attr-dict `:` type($input) `to` "
                 "type($result)")
SIToFPOp = _cast(arith.SIToFPOp, base(IntegerType), _FLOAT, None)
UIToFPOp = _cast(arith.UIToFPOp, base(IntegerType), _FLOAT, None)
FPToSIOp = _cast(arith.FPToSIOp, _FLOAT, base(IntegerType), None)
FPToUIOp = _cast(arith.FPToUIOp, _FLOAT, base(IntegerType), None)
IndexCastOp = _cast(arith.IndexCastOp, _INT, _INT, "index")
ExtFOp = _cast(arith.ExtFOp, _FLOAT, _FLOAT, "wider", _FASTMATH,
               "$input (`fastmath` `` $fastmath^)? attr-dict `:` type($input) `to` type($result)")


class TruncFOp(_Refined, arith.TruncFOp):
    """truncf with MLIR's optional rounding mode and fastmath flags."""

    @classmethod
    @cache
    def get_irdl_definition(cls) -> OpDef:
        return _widened(arith.TruncFOp, {}, {}, {
            "roundingmode": OptPropertyDef(base(arith.IntegerAttr)), **_FASTMATH})

    @classmethod
    def parse(cls, parser: Parser) -> TruncFOp:
        return parse_truncation(parser, cls, scaled=False)  # type: ignore[return-value]

    def print(self, printer: Printer) -> None:
        print_truncation(self, printer)

    def verify_(self) -> None:
        super().verify_()
        _same_shapes(self.input, self.result)
        float_width_changes(self.input.type, self.result.type, wider=False)
        verify_rounding_mode(self)


class AddUIExtendedOp(arith.AddUIExtendedOp):
    """MLIR's addui_extended also takes `index` (its overflow is i1), which xDSL refuses."""

    def verify_(self) -> None:
        type(self).get_irdl_definition().verify(self)
        if _element(self.overflow.type) != i1:
            raise VerifyException(f"gives an i1 overflow, not {self.overflow.type}")
        _same_shapes(self.lhs, self.overflow)


# --- `exact` ----------------------------------------------------------------------------------

def _exact(upstream: type) -> type:
    """A division or right shift that also spells MLIR's `exact` (a unit property)."""

    class Exact(_Refined, upstream):  # type: ignore[misc, valid-type]
        @classmethod
        @cache
        def get_irdl_definition(cls) -> OpDef:
            return _widened(upstream, {}, {}, {"isExact": OptPropertyDef(base(UnitAttr))},
                            "$lhs `,` $rhs (`exact` $isExact^)? attr-dict `:` type($result)")

    Exact.__name__ = Exact.__qualname__ = upstream.__name__
    return Exact


DivSIOp = _exact(arith.DivSIOp)
DivUIOp = _exact(arith.DivUIOp)
ShRSIOp = _exact(arith.ShRSIOp)
ShRUIOp = _exact(arith.ShRUIOp)

DIALECT = Dialect("arith", [
    RemFOp, CmpfOp, CmpiOp, SelectOp, ExtSIOp, ExtUIOp, TruncIOp, SIToFPOp, UIToFPOp, FPToSIOp,
    FPToUIOp, IndexCastOp, ExtFOp, TruncFOp, DivSIOp, DivUIOp, ShRSIOp, ShRUIOp, IndexCastUIOp,
    ScalingExtFOp, ScalingTruncFOp, AddUIExtendedOp,
], [])

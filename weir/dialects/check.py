"""The `check` dialect: test assertions inside a program, with IREE's textual syntax, so test
programs written for iree-check-module read the same here:

    check.expect_true(%flag) : i32
    check.expect_all_true(%mask) : tensor<4xi1>
    check.expect_eq(%result, %expected) : tensor<4xi32>
    check.expect_eq_const(%result, dense<[1, 2]> : tensor<2xi32>) : tensor<2xi32>
    check.expect_almost_eq(%result, %expected, atol 1.0e-04, rtol 0.0) : tensor<4xf32>
    check.expect_almost_eq_const(%result, dense<1.0> : tensor<4xf32>) : tensor<4xf32>

A failed check does not stop the program: the abi phase (`lower-checks`) turns each op into a
call of the runtime's `check` module, which records the failure with the values that differ.
IREE's optional `<%device>` operand is not accepted: weir's buffers are host-visible, so the
check module never needs a device to read them."""

from __future__ import annotations

import math

from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    FloatAttr,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from weir.dialects.util import value_type

DEFAULT_ATOL = 1.0e-4
"""IREE's default absolute tolerance for the almost-eq checks (an f32 attribute)."""
DEFAULT_RTOL = 0.0
"""IREE's default relative tolerance: zero, so large values compare almost exactly."""


def _f32(value: float) -> FloatAttr:
    return FloatAttr(value, Float32Type())


F32_MAX = 3.4028234663852886e38


def _parse_tolerance(parser: Parser, key: str) -> FloatAttr:
    """A tolerance is an f32 attribute: a number beyond f32's range is refused at its position
    (xDSL would fail packing it, with no position)."""
    pos = parser.pos
    value = float(parser.parse_number())
    if math.isfinite(value) and abs(value) > F32_MAX:
        parser.raise_error(f"{key} {value} is out of range for f32", pos)
    return _f32(value)


def _is_signless_int(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNLESS


def _parse_device_refusal(parser: Parser, name: str) -> None:
    """IREE's `check.op<%device>(...)` form: refused with a reason instead of a bare parse error."""
    if parser.parse_optional_punctuation("<") is not None:
        parser.raise_error(f"'{name}' with a device operand is not supported: weir's check "
                           "module reads every buffer on the host")


class _UnaryCheck(IRDLOperation):
    """`check.op(%v) : type`; subclasses define `operand` and what it may be."""

    @classmethod
    def parse(cls, parser: Parser) -> Operation:
        _parse_device_refusal(parser, cls.name)
        parser.parse_punctuation("(")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls.build(operands=[parser.resolve_operand(unresolved, parser.parse_type())])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        operand = self.operands[0]
        printer.print_string("(")
        printer.print_operand(operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(operand.type)


class _ScalarCheck(_UnaryCheck):
    """One signless integer (IREE's runtime takes it as i32)."""

    operand = operand_def(IntegerType)

    def verify_(self) -> None:
        if not _is_signless_int(self.operand.type):
            raise VerifyException(f"operand must be a signless integer, got {self.operand.type}")


@irdl_op_definition
class ExpectTrueOp(_ScalarCheck):
    """Checks that the operand is non-zero."""

    name = "check.expect_true"


@irdl_op_definition
class ExpectFalseOp(_ScalarCheck):
    """Checks that the operand is zero."""

    name = "check.expect_false"


@irdl_op_definition
class ExpectAllTrueOp(_UnaryCheck):
    """Checks that every element of an integer tensor is non-zero."""

    name = "check.expect_all_true"
    operand = operand_def(TensorType)

    def verify_(self) -> None:
        t = self.operand.type
        if not isinstance(t, TensorType) or not _is_signless_int(t.element_type):
            raise VerifyException(f"operand must be a tensor of signless integers, got {t}")


class _PairCheck(IRDLOperation):
    """`check.op(%lhs, <rhs>[, atol A][, rtol R]) : type`, where <rhs> is an operand or, for the
    `_const` forms, an elements attribute; both sides have the one type after the colon."""

    lhs = operand_def(TensorType)
    CONST_RHS: ClassVar[bool] = False
    TOLERANCES: ClassVar[bool] = False
    FLOAT_ONLY: ClassVar[bool] = False

    # --- parsing and printing ----------------------------------------------------------------

    @classmethod
    def parse(cls, parser: Parser) -> Operation:
        _parse_device_refusal(parser, cls.name)
        parser.parse_punctuation("(")
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs: object = parser.parse_attribute() if cls.CONST_RHS else \
            parser.parse_unresolved_operand()
        tolerances: dict[str, Attribute] = {}
        if cls.TOLERANCES:
            allowed = ["atol", "rtol"]
            while allowed and parser.parse_optional_punctuation(",") is not None:
                key = parser.parse_keyword_in(allowed, f" in {cls.name} (atol comes before rtol)")
                allowed = allowed[allowed.index(key) + 1:]
                tolerances[key] = _parse_tolerance(parser, key)
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        operands: list[SSAValue] = [parser.resolve_operand(lhs, t)]
        properties: dict[str, Attribute] = dict(tolerances)
        if cls.CONST_RHS:
            assert isinstance(rhs, Attribute)
            properties["value"] = rhs
        else:
            operands.append(parser.resolve_operand(rhs, t))  # type: ignore[arg-type]
        op = cls.build(operands=operands, properties=properties)
        op.attributes.update(attrs)
        return op

    def print_rhs(self, printer: Printer) -> None:
        raise NotImplementedError

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        self.print_rhs(printer)
        if self.TOLERANCES:
            # Like MLIR's printer for default-valued attributes: only what differs is shown.
            atol, rtol = self.tolerance_values()
            for key, value, default in (("atol", atol, _f32(DEFAULT_ATOL).value.data),
                                        ("rtol", rtol, DEFAULT_RTOL)):
                if value != default:
                    printer.print_string(f", {key} ")
                    printer.print_float(value, Float32Type())
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)

    # --- shared queries and checks -----------------------------------------------------------

    def tolerance_values(self) -> tuple[float, float]:
        """(atol, rtol) as f32 values, IREE's defaults where the op gives none."""
        atol = self.properties.get("atol")
        rtol = self.properties.get("rtol")
        return (atol.value.data if isinstance(atol, FloatAttr) else _f32(DEFAULT_ATOL).value.data,
                rtol.value.data if isinstance(rtol, FloatAttr) else DEFAULT_RTOL)

    def rhs_type(self) -> Attribute | None:
        raise NotImplementedError

    def verify_(self) -> None:
        lhs_type = self.lhs.type
        rhs_type = self.rhs_type()
        if rhs_type != lhs_type:
            raise VerifyException(f"lhs and rhs must have the same type, got {lhs_type} and "
                                  f"{rhs_type}")
        assert isinstance(lhs_type, TensorType)
        if self.FLOAT_ONLY and not isinstance(lhs_type.element_type, AnyFloat):
            raise VerifyException(f"operands must be tensors of floats, got {lhs_type} (use "
                                  f"check.expect_eq{'_const' if self.CONST_RHS else ''} for "
                                  "integers)")
        for key in ("atol", "rtol"):
            value = self.properties.get(key)
            if value is None:
                continue
            if not isinstance(value, FloatAttr) or not isinstance(value.type, Float32Type):
                raise VerifyException(f"{key} must be an f32 attribute, got {value}")
            if not value.value.data >= 0.0:  # also refuses NaN
                raise VerifyException(f"{key} must be non-negative, got {value.value.data}")


class _OperandPair(_PairCheck):
    rhs = operand_def(TensorType)

    def print_rhs(self, printer: Printer) -> None:
        printer.print_operand(self.rhs)

    def rhs_type(self) -> Attribute | None:
        return self.rhs.type


class _ConstPair(_PairCheck):
    value = prop_def(Attribute)
    CONST_RHS: ClassVar[bool] = True

    def print_rhs(self, printer: Printer) -> None:
        printer.print_attribute(self.value)

    def rhs_type(self) -> Attribute | None:
        found = value_type(self.value)
        if not isinstance(found, TensorType):
            raise VerifyException(f"the expected value must be a dense<...> or dense_resource<...> "
                                  f"elements attribute, got {self.value}")
        return found


@irdl_op_definition
class ExpectEqOp(_OperandPair):
    """Checks that two tensors have the same shape, element type and bits."""

    name = "check.expect_eq"


@irdl_op_definition
class ExpectEqConstOp(_ConstPair):
    """`check.expect_eq` against a constant."""

    name = "check.expect_eq_const"


@irdl_op_definition
class ExpectAlmostEqOp(_OperandPair):
    """Checks `|lhs - rhs| <= atol + rtol * |rhs|` element by element (NaN equals NaN)."""

    name = "check.expect_almost_eq"
    atol = prop_def(FloatAttr, default_value=_f32(DEFAULT_ATOL))
    rtol = prop_def(FloatAttr, default_value=_f32(DEFAULT_RTOL))
    TOLERANCES: ClassVar[bool] = True
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class ExpectAlmostEqConstOp(_ConstPair):
    """`check.expect_almost_eq` against a constant."""

    name = "check.expect_almost_eq_const"
    atol = prop_def(FloatAttr, default_value=_f32(DEFAULT_ATOL))
    rtol = prop_def(FloatAttr, default_value=_f32(DEFAULT_RTOL))
    TOLERANCES: ClassVar[bool] = True
    FLOAT_ONLY: ClassVar[bool] = True


CHECK = Dialect(
    "check",
    [ExpectTrueOp, ExpectFalseOp, ExpectAllTrueOp, ExpectEqOp, ExpectEqConstOp,
     ExpectAlmostEqOp, ExpectAlmostEqConstOp],
    [],
)
DIALECT = CHECK

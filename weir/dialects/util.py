"""The `util` dialect: what IREE's util dialect offers input programs. For now that is
`util.unfoldable_constant`, a constant the compiler must treat as a value computed at run time,
so a test of an op really runs the op instead of checking a result the compiler folded:

    %x = util.unfoldable_constant dense<[1.0, -2.0]> : tensor<2xf32>
    %n = util.unfoldable_constant 7 : i32

The input phase (`lower-unfoldable-constants`) turns a tensor one into a constant that lives in
the module's rodata, which no later pass clones or folds into a dispatch."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, result_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


def value_type(value: Attribute) -> Attribute | None:
    """The type a constant attribute carries, or None for attributes that are not constants."""
    if isinstance(value, DenseIntOrFPElementsAttr):
        return value.get_type()
    if isinstance(value, DenseResourceAttr | IntegerAttr | FloatAttr):
        return value.type
    return None


@irdl_op_definition
class UnfoldableConstantOp(IRDLOperation):
    """`util.unfoldable_constant [attr-dict] <typed value>`: the value's type is the result's."""

    name = "util.unfoldable_constant"
    value = prop_def(Attribute)
    result = result_def()

    @classmethod
    def parse(cls, parser: Parser) -> UnfoldableConstantOp:
        attrs = parser.parse_optional_attr_dict()
        start = parser.pos
        value = parser.parse_attribute()
        t = value_type(value)
        if t is None:
            parser.raise_error("util.unfoldable_constant takes a typed constant (dense<...> : "
                               f"tensor<...>, 5 : i32, 2.5 : f32), got {value}", start, parser.pos)
        op = cls.build(result_types=[t], properties={"value": value})
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        printer.print_attribute(self.value)

    def verify_(self) -> None:
        t = value_type(self.value)
        if t is None:
            raise VerifyException(f"value must be a typed constant, got {self.value}")
        if t != self.result.type:
            raise VerifyException(f"the value's type {t} differs from the result type "
                                  f"{self.result.type}")
        if isinstance(t, TensorType) and not t.has_static_shape():
            raise VerifyException(f"the constant's type {t} must have a static shape")


UTIL = Dialect("util", [UnfoldableConstantOp], [])
DIALECT = UTIL

"""The `arith` ops of upstream MLIR that xDSL 0.74 lacks: `remf`, `index_castui`, `scaling_extf`
and `scaling_truncf`, and the spelling of `truncf`'s rounding mode, which the scaling truncation
shares. Each accepts scalars or tensors (elementwise), as MLIR's do; `arith_ext.DIALECT` registers
them with the refined upstream ops."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

_INT_LIKE = arith.signlessIntegerLike
_FLOAT_LIKE = arith.floatingPointLike

# MLIR's `Arith_RoundingModeAttr` cases, by their i32 value (`roundingmode = 1 : i32` in the
# generic form, the bare keyword in the custom one).
ROUNDING_MODES: tuple[str, ...] = ("to_nearest_even", "downward", "upward", "toward_zero",
                                   "to_nearest_away")


def element(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, TensorType) else t  # type: ignore[return-value]


def same_shapes(*values: SSAValue) -> None:
    shapes = {tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else None
              for v in values}
    if len(shapes) != 1:
        kinds = ", ".join(str(v.type) for v in values)
        raise VerifyException(f"needs operands and result of one shape (all scalars "
                              f"or tensors of the same shape), got {kinds}")


def float_width_changes(src: Attribute, dst: Attribute, wider: bool) -> None:
    """MLIR's extf/truncf rule: the result is strictly wider (narrower) than the input."""
    a, b = element(src).bitwidth, element(dst).bitwidth  # type: ignore[attr-defined]
    if (wider and b <= a) or (not wider and b >= a):
        relation = "larger" if wider else "smaller"
        raise VerifyException(f"the result's bit width must be {relation} than the input's "
                              f"({element(src)} to {element(dst)})")


def rounding_mode(op: IRDLOperation) -> str:
    """The op's rounding mode by name (`to_nearest_even` when it states none)."""
    attr = op.properties.get("roundingmode")
    if attr is None:
        return ROUNDING_MODES[0]
    value = attr.value.data  # type: ignore[attr-defined]
    return ROUNDING_MODES[value] if 0 <= value < len(ROUNDING_MODES) else str(value)


def verify_rounding_mode(op: IRDLOperation) -> None:
    attr = op.properties.get("roundingmode")
    if attr is None:
        return
    if not (isinstance(attr, IntegerAttr) and 0 <= attr.value.data < len(ROUNDING_MODES)):
        raise VerifyException(f"roundingmode must be one of {', '.join(ROUNDING_MODES)}, "
                              f"got {attr}")


def parse_truncation(parser: Parser, cls: type[IRDLOperation], scaled: bool) -> IRDLOperation:
    """`%in [, %scale] [mode] [fastmath<...>] attr-dict : T [, S] to R`."""
    unresolved = [parser.parse_unresolved_operand()]
    if scaled:
        parser.parse_punctuation(",")
        unresolved.append(parser.parse_unresolved_operand())
    props: dict[str, Attribute] = {}
    for value, name in enumerate(ROUNDING_MODES):
        if parser.parse_optional_keyword(name) is not None:
            props["roundingmode"] = IntegerAttr(value, i32)
            break
    if parser.parse_optional_keyword("fastmath") is not None:
        props["fastmath"] = arith.FastMathFlagsAttr.new(
            arith.FastMathFlagsAttr.parse_parameter(parser))
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    types = [parser.parse_type()]
    if scaled:
        parser.parse_punctuation(",")
        types.append(parser.parse_type())
    parser.parse_keyword("to")
    result = parser.parse_type()
    operands = parser.resolve_operands(unresolved, types, parser.pos)
    op = cls.create(operands=operands, result_types=[result], properties=props,
                    attributes=attrs)
    return op


def print_truncation(op: IRDLOperation, printer: Printer) -> None:
    printer.print_string(" ")
    printer.print_list(op.operands, printer.print_operand)
    if "roundingmode" in op.properties:
        printer.print_string(f" {rounding_mode(op)}")
    fastmath = op.properties.get("fastmath")
    if fastmath is not None:
        printer.print_string(" fastmath")
        fastmath.print_parameter(printer)  # type: ignore[attr-defined]
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : ")
    printer.print_list([v.type for v in op.operands], printer.print_attribute)
    printer.print_string(" to ")
    printer.print_attribute(op.results[0].type)


@irdl_op_definition
class RemFOp(arith.FloatingPointLikeBinaryOperation):
    """`arith.remf`: the remainder of a division truncated toward zero (C's fmod); the sign is
    the dividend's."""

    name = "arith.remf"
    traits = traits_def(Pure())


@irdl_op_definition
class IndexCastUIOp(IRDLOperation):
    """`arith.index_castui`: between `index` and an integer, zero-extending when it widens (where
    `index_cast` sign-extends) and truncating when it narrows."""

    name = "arith.index_castui"
    input = operand_def(_INT_LIKE)
    result = result_def(_INT_LIKE)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def verify_(self) -> None:
        same_shapes(self.input, self.result)
        src, dst = element(self.input.type), element(self.result.type)
        if isinstance(src, IndexType) == isinstance(dst, IndexType):
            raise VerifyException(f"casts between index and an integer, not {src} to {dst}")


@irdl_op_definition
class ScalingExtFOp(IRDLOperation):
    """`arith.scaling_extf %in, %scale`: `extf(in) * 2^e`, where the power of two is what the
    scale holds as an OCP MX scale (f8E8M0FNU): the exponent field of the scale read as f32
    (sign and mantissa ignored; NaN when the field is all ones). weir has no 8-bit float types,
    so its scales are f16, bf16, f32 or f64 values."""

    name = "arith.scaling_extf"
    input = operand_def(_FLOAT_LIKE)
    scale = operand_def(_FLOAT_LIKE)
    result = result_def(_FLOAT_LIKE)
    fastmath = opt_prop_def(arith.FastMathFlagsAttr)
    traits = traits_def(Pure())
    assembly_format = ("$input `,` $scale (`fastmath` `` $fastmath^)? attr-dict `:` "
                       "type($input) `,` type($scale) `to` type($result)")

    def verify_(self) -> None:
        same_shapes(self.input, self.scale, self.result)
        float_width_changes(self.input.type, self.result.type, wider=True)


@irdl_op_definition
class ScalingTruncFOp(IRDLOperation):
    """`arith.scaling_truncf %in, %scale`: `truncf(in / 2^e)` with the power of two of
    `scaling_extf`."""

    name = "arith.scaling_truncf"
    input = operand_def(_FLOAT_LIKE)
    scale = operand_def(_FLOAT_LIKE)
    result = result_def(_FLOAT_LIKE)
    roundingmode = opt_prop_def(IntegerAttr)
    fastmath = opt_prop_def(arith.FastMathFlagsAttr)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> ScalingTruncFOp:
        return parse_truncation(parser, cls, scaled=True)  # type: ignore[return-value]

    def print(self, printer: Printer) -> None:
        print_truncation(self, printer)

    def verify_(self) -> None:
        same_shapes(self.input, self.scale, self.result)
        float_width_changes(self.input.type, self.result.type, wider=False)
        verify_rounding_mode(self)

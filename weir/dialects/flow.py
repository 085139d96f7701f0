"""The `flow` dialect: the program as data flow between dispatches, still on tensors. Dispatch
regions group the math that will run as one kernel; outlining moves each into an executable and
leaves a `flow.dispatch` on the host."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IndexType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from weir.ir.hal_attrs import DeviceAffinityAttr, DevicePromiseAttr


@irdl_op_definition
class DispatchRegionOp(IRDLOperation):
    """A group of ops that will become one dispatch; values from above are captured implicitly
    until outlining makes them explicit bindings."""

    name = "flow.dispatch.region"
    result_dims = var_operand_def(IndexType)
    results_ = var_result_def(TensorType)
    body = region_def("single_block")


@irdl_op_definition
class ReturnOp(IRDLOperation):
    name = "flow.return"
    values = var_operand_def()
    traits = traits_def(IsTerminator())


@irdl_op_definition
class ExecutableOp(IRDLOperation):
    """Holds one outlined dispatch function in a nested `builtin.module`."""

    name = "flow.executable"
    sym_name = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), NoTerminator(), IsolatedFromAbove())


@irdl_op_definition
class ExecutableExportOp(IRDLOperation):
    name = "flow.executable.export"
    sym_name = prop_def(StringAttr)
    function_ref = prop_def(SymbolRefAttr)
    traits = traits_def(SymbolOpInterface())


@irdl_op_definition
class DispatchOp(IRDLOperation):
    """Runs `entry_point` (@executable::@export) over `arguments`; dynamic result dims are
    passed so the host can size the results."""

    name = "flow.dispatch"
    entry_point = prop_def(SymbolRefAttr)
    arguments = var_operand_def()
    result_dims = var_operand_def(IndexType)
    results_ = var_result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class TensorTransferOp(IRDLOperation):
    """Moves a tensor to the device named by `target` (`#hal.device.promise<@name>`): the one
    place a program says where its data must be; everything else is placed by the stream phase.

        %b = flow.tensor.transfer %a : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
    """

    name = "flow.tensor.transfer"
    source = operand_def(TensorType)
    source_dims = var_operand_def(IndexType)
    result = result_def(TensorType)
    target = prop_def(Attribute)

    def verify_(self) -> None:
        if not isinstance(self.target, DevicePromiseAttr | DeviceAffinityAttr):
            raise VerifyException(f"flow.tensor.transfer target must be #hal.device.promise<@name>, "
                                  f"got {self.target}")
        if self.source.type != self.result.type:
            raise VerifyException("flow.tensor.transfer must not change the tensor type")
        t = self.source.type
        assert isinstance(t, TensorType)
        dynamic = sum(1 for d in t.get_shape() if d < 0)
        if len(self.source_dims) != dynamic:
            raise VerifyException(f"flow.tensor.transfer of {t} needs {dynamic} dynamic "
                                  f"dimension(s) in {{...}}, got {len(self.source_dims)}")

    @classmethod
    def parse(cls, parser: Parser) -> TensorTransferOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        source = parser.resolve_operand(unresolved, t)
        dims = _parse_dims(parser)
        parser.parse_keyword("to")
        target = parser.parse_attribute()
        attrs = parser.parse_optional_attr_dict()
        op = cls.build(operands=[source, dims], result_types=[t], properties={"target": target})
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        _print_dims(printer, self.source_dims)
        printer.print_string(" to ")
        printer.print_attribute(self.target)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class TensorDynamicConstantOp(IRDLOperation):
    """A constant whose type hides (some of) its static shape, so the program is compiled for
    sizes known only at run time; the input phase (`lower-dynamic-constants`) lowers it.

        %c = flow.tensor.dynamic_constant dense<[1.0, 2.0]> : tensor<2xf32> -> tensor<?xf32>
    """

    name = "flow.tensor.dynamic_constant"
    value = prop_def(Attribute)
    result = result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser) -> TensorDynamicConstantOp:
        attrs = parser.parse_optional_attr_dict()
        start = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            parser.raise_error("flow.tensor.dynamic_constant takes a tensor constant "
                               f"(dense<...> : tensor<...>), got {value}", start, parser.pos)
        parser.parse_punctuation("->")
        op = cls.build(result_types=[parser.parse_type()], properties={"value": value})
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        if not isinstance(self.value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            raise VerifyException(f"value must be a tensor constant, got {self.value}")
        static = self.value.get_type() if isinstance(self.value, DenseIntOrFPElementsAttr) \
            else self.value.type
        t = self.result.type
        assert isinstance(static, TensorType) and isinstance(t, TensorType)
        sizes, dims = static.get_shape(), t.get_shape()
        if static.element_type != t.element_type or len(sizes) != len(dims) or \
                any(d >= 0 and d != s for s, d in zip(sizes, dims)):
            raise VerifyException(f"the result type {t} is not the constant's type {static} "
                                  "with some sizes made dynamic")


def _parse_dims(parser: Parser) -> list[SSAValue]:
    """`{%a, %b}` after a type: the values of its dynamic sizes (none without braces)."""
    if parser.parse_optional_punctuation("{") is None:
        return []
    dims = parser.parse_comma_separated_list(parser.Delimiter.NONE,
                                             lambda: parser.parse_operand(IndexType()))
    parser.parse_punctuation("}")
    return dims


def _print_dims(printer: Printer, dims: Sequence[SSAValue]) -> None:
    if dims:
        printer.print_string("{")
        printer.print_list(dims, printer.print_operand)
        printer.print_string("}")


def _check_dims(t: Attribute, dims: Sequence[SSAValue], what: str) -> None:
    assert isinstance(t, TensorType)
    dynamic = sum(1 for d in t.get_shape() if d < 0)
    if len(dims) != dynamic:
        raise VerifyException(f"the {what} type {t} needs {dynamic} dynamic dimension(s) in "
                              f"{{...}}, got {len(dims)}")


class TensorReinterpret(IRDLOperation):
    """What flow.tensor.bitcast and flow.tensor.reshape share: `%x : T{dims} -> U{dims}`, the
    same data read as another type, dynamic sizes in braces."""

    source = operand_def(TensorType)
    source_dims = var_operand_def(IndexType)
    result_dims = var_operand_def(IndexType)
    result = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @classmethod
    def parse(cls, parser: Parser) -> TensorReinterpret:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        source = parser.resolve_operand(unresolved, parser.parse_type())
        source_dims = _parse_dims(parser)
        parser.parse_punctuation("->")
        t = parser.parse_type()
        result_dims = _parse_dims(parser)
        attrs = parser.parse_optional_attr_dict()
        op = cls.build(operands=[source, source_dims, result_dims], result_types=[t])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        _print_dims(printer, self.source_dims)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)
        _print_dims(printer, self.result_dims)
        printer.print_op_attributes(self.attributes, reserved_attr_names=("operandSegmentSizes",))

    def verify_(self) -> None:
        _check_dims(self.source.type, self.source_dims, "source")
        _check_dims(self.result.type, self.result_dims, "result")
        src, dst = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        if src.has_static_shape() and dst.has_static_shape():
            sizes = [bits(t) for t in (src, dst)]
            if None not in sizes and sizes[0] != sizes[1]:
                raise VerifyException(f"{src} holds {sizes[0]} bits but {dst} holds {sizes[1]}")


@irdl_op_definition
class TensorBitCastOp(TensorReinterpret):
    """The bytes of `source` read as a tensor of another element type and shape (the sizes of
    both in bits must agree; the dynamic ones are given in braces). The input phase
    (`lower-tensor-bitcasts`) lowers it.

        %f = flow.tensor.bitcast %i : tensor<4xi32> -> tensor<2x2xf32>
        %g = flow.tensor.bitcast %j : tensor<?xi16>{%n} -> tensor<?xf16>{%n}
    """

    name = "flow.tensor.bitcast"


@irdl_op_definition
class TensorReshapeOp(TensorReinterpret):
    """`source`'s elements, in order, as a tensor of another shape: a bitcast that keeps the
    element type (`lower-tensor-bitcasts` lowers both).

        %m = flow.tensor.reshape %t : tensor<8x8x1x1xf32> -> tensor<8x8xf32>
    """

    name = "flow.tensor.reshape"

    def verify_(self) -> None:
        super().verify_()
        src, dst = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        if src.element_type != dst.element_type:
            raise VerifyException(f"a reshape keeps the element type: {src} -> {dst}")


def bits(t: TensorType) -> int | None:
    """How many bits a static tensor's elements take together; None for element types of no
    fixed width (index)."""
    width = getattr(t.element_type, "bitwidth", None)
    if not isinstance(width, int) or isinstance(t.element_type, IndexType):
        return None
    return width * math.prod(t.get_shape())


@irdl_op_definition
class TensorTieShapeOp(IRDLOperation):
    """Names the values of a tensor's dynamic sizes; the value itself passes through. Weir tracks
    sizes itself, so the input phase (`drop-tie-shapes`) replaces it by its operand.

        %t = flow.tensor.tie_shape %x : tensor<?x?xi32>{%h, %w}
    """

    name = "flow.tensor.tie_shape"
    operand = operand_def(TensorType)
    dynamic_dims = var_operand_def(IndexType)
    result = result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser) -> TensorTieShapeOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        dims = _parse_dims(parser)
        attrs = parser.parse_optional_attr_dict()
        op = cls.build(operands=[parser.resolve_operand(unresolved, t), dims], result_types=[t])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.operand)
        printer.print_string(" : ")
        printer.print_attribute(self.operand.type)
        _print_dims(printer, self.dynamic_dims)
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        if self.operand.type != self.result.type:
            raise VerifyException("flow.tensor.tie_shape must not change the tensor type")
        _check_dims(self.operand.type, self.dynamic_dims, "operand")


FLOW = Dialect(
    "flow",
    [DispatchRegionOp, ReturnOp, ExecutableOp, ExecutableExportOp, DispatchOp, TensorTransferOp,
     TensorDynamicConstantOp, TensorBitCastOp, TensorReshapeOp, TensorTieShapeOp],
    [],
)
DIALECT = FLOW

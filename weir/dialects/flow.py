"""The `flow` dialect: the program as data flow between dispatches, still on tensors. Dispatch
regions group the math that will run as one kernel; outlining moves each into an executable and
leaves a `flow.dispatch` on the host."""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, StringAttr, SymbolRefAttr, TensorType
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
        dims: list[SSAValue] = []
        if parser.parse_optional_punctuation("{") is not None:
            dims = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, lambda: parser.parse_operand(IndexType()))
            parser.parse_punctuation("}")
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
        if self.source_dims:
            printer.print_string("{")
            printer.print_list(self.source_dims, printer.print_operand)
            printer.print_string("}")
        printer.print_string(" to ")
        printer.print_attribute(self.target)
        printer.print_op_attributes(self.attributes)


FLOW = Dialect(
    "flow",
    [DispatchRegionOp, ReturnOp, ExecutableOp, ExecutableExportOp, DispatchOp, TensorTransferOp],
    [],
)
DIALECT = FLOW

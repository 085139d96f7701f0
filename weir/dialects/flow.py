"""The `flow` dialect: the program as data flow between dispatches, still on tensors. Dispatch
regions group the math that will run as one kernel; outlining moves each into an executable and
leaves a `flow.dispatch` on the host."""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, StringAttr, SymbolRefAttr, TensorType
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator, SymbolOpInterface


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
    """Moves a tensor to the device named by `target` (`#hal.device.promise<@name>`)."""

    name = "flow.tensor.transfer"
    source = operand_def(TensorType)
    source_dims = var_operand_def(IndexType)
    result = result_def(TensorType)
    target = prop_def(Attribute)
    affinity = opt_prop_def(Attribute)


FLOW = Dialect(
    "flow",
    [DispatchRegionOp, ReturnOp, ExecutableOp, ExecutableExportOp, DispatchOp, TensorTransferOp],
    [],
)
DIALECT = FLOW

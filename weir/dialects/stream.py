"""The `stream` dialect: tensors become sized resources with lifetimes, work becomes command
sequences executed asynchronously and ordered by timepoints. This is where allocation and
scheduling are explicit while the IR is still target-independent."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IndexType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from weir.dialects.hal import BufferViewType, FenceType

# `external` resources cross the ABI (arguments, results); `transient` ones live only inside an
# invocation; `constant` ones are read-only data of the module file.
LIFETIMES = ("external", "transient", "constant")


@irdl_attr_definition
class ResourceType(ParametrizedAttribute, TypeAttribute):
    name = "stream.resource"
    lifetime: StringAttr = param_def(StringAttr)

    def __init__(self, lifetime: str):
        super().__init__(StringAttr(lifetime))

    @classmethod
    def parse_parameters(cls, parser) -> Sequence[Attribute]:  # type: ignore[no-untyped-def]
        parser.parse_punctuation("<")
        lifetime = parser.parse_identifier()
        parser.parse_punctuation(">")
        return (StringAttr(lifetime),)

    def print_parameters(self, printer) -> None:  # type: ignore[no-untyped-def]
        printer.print_string(f"<{self.lifetime.data}>")

    def verify(self) -> None:
        if self.lifetime.data not in LIFETIMES:
            raise VerifyException(f"unknown resource lifetime '{self.lifetime.data}'")


@irdl_attr_definition
class TimepointType(ParametrizedAttribute, TypeAttribute):
    name = "stream.timepoint"


@irdl_op_definition
class ExecutableOp(IRDLOperation):
    name = "stream.executable"
    sym_name = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), NoTerminator(), IsolatedFromAbove())


@irdl_op_definition
class ExecutableExportOp(IRDLOperation):
    name = "stream.executable.export"
    sym_name = prop_def(StringAttr)
    function_ref = prop_def(SymbolRefAttr)
    traits = traits_def(SymbolOpInterface())


@irdl_op_definition
class TensorImportOp(IRDLOperation):
    """An argument's buffer view as an external resource, after its type and shape are checked."""

    name = "stream.tensor.import"
    source = operand_def(BufferViewType)
    dims = var_operand_def(IndexType)
    result = result_def(ResourceType)
    encoding = prop_def(TensorType)
    arg_name = prop_def(StringAttr, prop_name="name")
    affinity = opt_prop_def(Attribute)


@irdl_op_definition
class TensorExportOp(IRDLOperation):
    name = "stream.tensor.export"
    source = operand_def(ResourceType)
    dims = var_operand_def(IndexType)
    result = result_def(BufferViewType)
    encoding = prop_def(TensorType)
    affinity = opt_prop_def(Attribute)


@irdl_op_definition
class TensorSizeOfOp(IRDLOperation):
    """The byte size of a tensor of `encoding` with the given dynamic dims."""

    name = "stream.tensor.sizeof"
    dims = var_operand_def(IndexType)
    result = result_def(IndexType)
    encoding = prop_def(TensorType)


@irdl_op_definition
class ResourceAllocaOp(IRDLOperation):
    name = "stream.resource.alloca"
    size = operand_def(IndexType)
    await_timepoint = opt_operand_def(TimepointType)
    result = result_def(ResourceType)
    result_timepoint = result_def(TimepointType)
    # The device (or, after transfer elision, `#hal.device.optimal<[...]>` devices) using it.
    affinity = opt_prop_def(Attribute)


@irdl_op_definition
class ResourceSubviewOp(IRDLOperation):
    """`length` bytes of `source` from `offset`: a transient's place in its execute's slab."""

    name = "stream.resource.subview"
    source = operand_def(ResourceType)
    offset = operand_def(IndexType)
    length = operand_def(IndexType)
    result = result_def(ResourceType)


@irdl_op_definition
class ResourceConstantOp(IRDLOperation):
    """Constant data stored once in the module file and mapped at run time."""

    name = "stream.resource.constant"
    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    result = result_def(ResourceType)
    affinity = opt_prop_def(Attribute)


@irdl_op_definition
class CmdExecuteOp(IRDLOperation):
    """A sequence of commands submitted together once `await_timepoint` is reached."""

    name = "stream.cmd.execute"
    await_timepoint = opt_operand_def(TimepointType)
    result_timepoint = result_def(TimepointType)
    body = region_def("single_block")
    # The one device whose queue runs the commands.
    affinity = opt_prop_def(Attribute)
    traits = traits_def(NoTerminator())


@irdl_op_definition
class CmdDispatchOp(IRDLOperation):
    name = "stream.cmd.dispatch"
    entry_point = prop_def(SymbolRefAttr)
    workload = var_operand_def(IndexType)
    push_constants = var_operand_def(IndexType)
    resources = var_operand_def(ResourceType)
    access = prop_def(ArrayAttr[StringAttr])
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class CmdCopyOp(IRDLOperation):
    name = "stream.cmd.copy"
    source = operand_def(ResourceType)
    target = operand_def(ResourceType)
    length = operand_def(IndexType)


@irdl_op_definition
class CmdBarrierOp(IRDLOperation):
    """Orders the commands before it before the commands after it within one execute."""

    name = "stream.cmd.barrier"


@irdl_op_definition
class TimepointAwaitOp(IRDLOperation):
    """Blocks the host until the timepoints are reached (the synchronous ABI's end)."""

    name = "stream.timepoint.await"
    timepoints = var_operand_def(TimepointType)


@irdl_op_definition
class TimepointJoinOp(IRDLOperation):
    name = "stream.timepoint.join"
    timepoints = var_operand_def(TimepointType)
    result = result_def(TimepointType)


@irdl_op_definition
class TimepointImmediateOp(IRDLOperation):
    name = "stream.timepoint.immediate"
    result = result_def(TimepointType)


@irdl_op_definition
class TimepointImportOp(IRDLOperation):
    """A fence from outside (the caller's wait fence, a coarse-fences callee's signal fence) as a
    timepoint work can be ordered after."""

    name = "stream.timepoint.import"
    fence = operand_def(FenceType)
    result = result_def(TimepointType)


@irdl_op_definition
class TimepointChainExternalOp(IRDLOperation):
    """Signals an outside fence when `timepoint` is reached, without the host waiting."""

    name = "stream.timepoint.chain_external"
    timepoint = operand_def(TimepointType)
    fence = operand_def(FenceType)
    affinity = opt_prop_def(Attribute)


@irdl_op_definition
class AsyncTransferOp(IRDLOperation):
    """Makes the contents of `source` (on `source_affinity`) available on `target_affinity` once
    `await_timepoint` is reached. Between devices that share memory the elision pass removes it
    (the one allocation becomes usable by both); otherwise the HAL lowers it to a queue copy on
    the source device's queue, whose signal the target device's work waits on."""

    name = "stream.async.transfer"
    source = operand_def(ResourceType)
    size = operand_def(IndexType)
    await_timepoint = opt_operand_def(TimepointType)
    result = result_def(ResourceType)
    result_timepoint = result_def(TimepointType)
    source_affinity = prop_def(Attribute)
    target_affinity = prop_def(Attribute)


@irdl_op_definition
class ResourceLoadOp(IRDLOperation):
    """Reads one element of a resource on the host, at a byte offset (`tensor.extract`); a
    `stream.timepoint.await` before it makes sure the contents are ready."""

    name = "stream.resource.load"
    source = operand_def(ResourceType)
    offset = operand_def(IndexType)
    result = result_def()


@irdl_op_definition
class YieldOp(IRDLOperation):
    name = "stream.yield"
    traits = traits_def(IsTerminator())


STREAM = Dialect(
    "stream",
    [
        ExecutableOp, ExecutableExportOp, TensorImportOp, TensorExportOp, TensorSizeOfOp,
        ResourceAllocaOp, ResourceSubviewOp, ResourceConstantOp, CmdExecuteOp, CmdDispatchOp,
        CmdCopyOp,
        CmdBarrierOp, TimepointAwaitOp, TimepointJoinOp, TimepointImmediateOp, TimepointImportOp,
        TimepointChainExternalOp, AsyncTransferOp, ResourceLoadOp, YieldOp,
    ],
    [ResourceType, TimepointType],
)
DIALECT = STREAM

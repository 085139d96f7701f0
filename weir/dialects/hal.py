"""The `hal` dialect: buffers, views, fences, command buffers and queue operations as the host
program sees them at the `hal` phase. Each op lowers to one call into the runtime's `hal` module,
so the names follow that module's functions (docs/contracts.md)."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
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
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
    operand_def,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.traits import IsolatedFromAbove, NoTerminator, SymbolOpInterface

from weir.format.kernel_description import PushDim
from weir.format.workgroups import WorkgroupGrid
from weir.ir.hal_attrs import HAL_ATTRIBUTES


@irdl_attr_definition
class BufferViewType(ParametrizedAttribute, TypeAttribute):
    name = "hal.buffer_view"


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    name = "hal.buffer"


@irdl_attr_definition
class DeviceType(ParametrizedAttribute, TypeAttribute):
    name = "hal.device"


@irdl_attr_definition
class FenceType(ParametrizedAttribute, TypeAttribute):
    name = "hal.fence"


@irdl_attr_definition
class CommandBufferType(ParametrizedAttribute, TypeAttribute):
    name = "hal.command_buffer"


@irdl_attr_definition
class ExecutableType(ParametrizedAttribute, TypeAttribute):
    name = "hal.executable"


# --- ABI boundary ops (present from the `abi` phase on) ---------------------------------------


@irdl_op_definition
class TensorImportOp(IRDLOperation):
    """A buffer view entering the program as a tensor; `name` is used in shape/type errors.
    With `wait`, the contents are valid only once that fence is reached (coarse-fences ABI)."""

    name = "hal.tensor.import"
    source = operand_def(BufferViewType)
    target_dims = var_operand_def(IndexType)
    wait = opt_operand_def(FenceType)
    result = result_def(TensorType)
    arg_name = prop_def(StringAttr, prop_name="name")
    # Where the caller promises the buffer lives (`iree.abi.affinity`); None: the default device.
    affinity = opt_prop_def(Attribute)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class TensorExportOp(IRDLOperation):
    """A tensor leaving the program as a buffer view. The view may be handed out before its
    contents are ready only when a `hal.tensor.barrier` reports their readiness to a fence."""

    name = "hal.tensor.export"
    source = operand_def(TensorType)
    source_dims = var_operand_def(IndexType)
    result = result_def(BufferViewType)
    arg_name = prop_def(StringAttr, prop_name="name")
    # Where the caller expects the result (`iree.abi.affinity`); None: the default device.
    affinity = opt_prop_def(Attribute)


@irdl_op_definition
class TensorAliasOp(IRDLOperation):
    """The tensor's contents placed in a caller-provided buffer view (`iree.abi.output`): the
    result is the same value, now living in `storage`."""

    name = "hal.tensor.alias"
    source = operand_def(TensorType)
    source_dims = var_operand_def(IndexType)
    storage = operand_def(BufferViewType)
    result = result_def(TensorType)
    # Where the caller's storage lives (its `iree.abi.affinity`); None: where the source is.
    affinity = opt_prop_def(Attribute)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def verify_(self) -> None:
        if self.source.type != self.result.type:
            raise VerifyException("hal.tensor.alias must not change the tensor type")


@irdl_op_definition
class TensorBarrierOp(IRDLOperation):
    """Signals `signal` once every source tensor is ready; the results are the same tensors.
    This is how the coarse-fences ABI tells a caller (or a callee) when contents are valid
    without the host waiting for them."""

    name = "hal.tensor.barrier"
    sources = var_operand_def(TensorType)
    signal = operand_def(FenceType)
    results_ = var_result_def(TensorType)
    # The device whose queue signals `signal`; None: the default device.
    affinity = opt_prop_def(Attribute)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def verify_(self) -> None:
        if [v.type for v in self.sources] != [r.type for r in self.results_]:
            raise VerifyException("hal.tensor.barrier results must match its sources")


# --- executables -----------------------------------------------------------------------------


@irdl_op_definition
class ExecutableOp(IRDLOperation):
    name = "hal.executable"
    sym_name = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), NoTerminator(), IsolatedFromAbove())


@irdl_op_definition
class ExecutableBinaryOp(IRDLOperation):
    """One target's serialised payload. `data` is the payload itself for text formats and a key
    into the compilation's blob store for binary ones."""

    name = "hal.executable.binary"
    sym_name = prop_def(StringAttr)
    target = prop_def(StringAttr)
    format = prop_def(StringAttr)
    entry_points = prop_def(ArrayAttr[StringAttr])
    data = prop_def(StringAttr)
    # Per entry point, how its dispatches split into workgroups (weir/format/workgroups.py):
    # [extent, tile] with a static extent, or ["push", k, tile] for the value of push constant
    # k. Absent: the target runs the whole iteration space at once, whatever the count.
    workgroup_grids = opt_prop_def(ArrayAttr)
    traits = traits_def(SymbolOpInterface())

    def grids(self) -> tuple[WorkgroupGrid, ...] | None:
        if self.workgroup_grids is None:
            return None
        return tuple(_grid_from_attr(g) for g in self.workgroup_grids.data)

    def verify_(self) -> None:
        if self.workgroup_grids is None:
            return
        grids = self.workgroup_grids.data
        if len(grids) != len(self.entry_points.data):
            raise VerifyException(f"{len(grids)} workgroup grids for "
                                  f"{len(self.entry_points.data)} entry points")
        for g in grids:
            _grid_from_attr(g)


def grid_attr(grid: WorkgroupGrid) -> ArrayAttr:
    """`grid` as an element of `hal.executable.binary`'s `workgroup_grids`."""
    tile = IntegerAttr(grid.tile, IndexType())
    if isinstance(grid.extent, PushDim):
        return ArrayAttr([StringAttr("push"), IntegerAttr(grid.extent.index, IndexType()), tile])
    return ArrayAttr([IntegerAttr(grid.extent, IndexType()), tile])


def _grid_from_attr(attr: Attribute) -> WorkgroupGrid:
    items = attr.data if isinstance(attr, ArrayAttr) else ()
    numbers = [a.value.data for a in items if isinstance(a, IntegerAttr)]
    if len(items) == 2 and len(numbers) == 2 and numbers[0] >= 0 and numbers[1] >= 1:
        return WorkgroupGrid(numbers[0], numbers[1])
    if len(items) == 3 and items[0] == StringAttr("push") and len(numbers) == 2 and \
            numbers[0] >= 0 and numbers[1] >= 1:
        return WorkgroupGrid(PushDim(numbers[0]), numbers[1])
    raise VerifyException(f"a workgroup grid is [extent, tile] or [\"push\", k, tile] with "
                          f"tile >= 1, not {attr}")


# --- host ops --------------------------------------------------------------------------------


@irdl_op_definition
class DeviceGetOp(IRDLOperation):
    name = "hal.device.get"
    ordinal = prop_def(IntegerAttr)
    result = result_def(DeviceType)


@irdl_op_definition
class ExecutableLookupOp(IRDLOperation):
    name = "hal.executable.lookup"
    device = operand_def(DeviceType)
    executable = prop_def(SymbolRefAttr)
    result = result_def(ExecutableType)


@irdl_op_definition
class BufferLoadOp(IRDLOperation):
    """One element read by the host at a byte offset; its type is the result's."""

    name = "hal.buffer.load"
    source = operand_def(BufferType)
    offset = operand_def(IndexType)
    result = result_def()


@irdl_op_definition
class BufferViewAssertOp(IRDLOperation):
    """Checks an argument's element type and shape (-1 in `shape` = dynamic)."""

    name = "hal.buffer_view.assert"
    view = operand_def(BufferViewType)
    message = prop_def(StringAttr)
    element_type = prop_def(Attribute)
    shape = prop_def(ArrayAttr[IntegerAttr])


@irdl_op_definition
class BufferViewBufferOp(IRDLOperation):
    name = "hal.buffer_view.buffer"
    view = operand_def(BufferViewType)
    result = result_def(BufferType)


@irdl_op_definition
class BufferViewDimOp(IRDLOperation):
    name = "hal.buffer_view.dim"
    view = operand_def(BufferViewType)
    index = prop_def(IntegerAttr)
    result = result_def(IndexType)


@irdl_op_definition
class BufferViewCreateOp(IRDLOperation):
    name = "hal.buffer_view.create"
    buffer = operand_def(BufferType)
    dims = var_operand_def(IndexType)
    element_type = prop_def(Attribute)
    result = result_def(BufferViewType)


@irdl_op_definition
class AllocatorAllocateOp(IRDLOperation):
    name = "hal.allocator.allocate"
    device = operand_def(DeviceType)
    size = operand_def(IndexType)
    result = result_def(BufferType)


@irdl_op_definition
class BufferSubspanOp(IRDLOperation):
    """`length` bytes of `source` from `offset`, as a buffer of its own (no copy). Inside a
    memoized command buffer's recording, a subspan of a binding slot is that slot at an offset."""

    name = "hal.buffer.subspan"
    source = operand_def(BufferType)
    offset = operand_def(IndexType)
    length = operand_def(IndexType)
    result = result_def(BufferType)


@irdl_op_definition
class AllocatorImportRodataOp(IRDLOperation):
    """Wraps a constant of the module file as a read-only buffer, without a copy."""

    name = "hal.allocator.import_rodata"
    device = operand_def(DeviceType)
    rodata = prop_def(StringAttr)
    result = result_def(BufferType)


@irdl_op_definition
class CommandBufferCreateOp(IRDLOperation):
    name = "hal.command_buffer.create"
    device = operand_def(DeviceType)
    result = result_def(CommandBufferType)


@irdl_op_definition
class CommandBufferDispatchOp(IRDLOperation):
    name = "hal.command_buffer.dispatch"
    command_buffer = operand_def(CommandBufferType)
    executable = operand_def(ExecutableType)
    workgroups = var_operand_def(IndexType)
    constants = var_operand_def(IndexType)
    bindings = var_operand_def(BufferType)
    entry_point = prop_def(IntegerAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class CommandBufferCopyOp(IRDLOperation):
    name = "hal.command_buffer.copy_buffer"
    command_buffer = operand_def(CommandBufferType)
    source = operand_def(BufferType)
    target = operand_def(BufferType)
    length = operand_def(IndexType)


@irdl_op_definition
class CommandBufferBarrierOp(IRDLOperation):
    name = "hal.command_buffer.execution_barrier"
    command_buffer = operand_def(CommandBufferType)


@irdl_op_definition
class CommandBufferFinalizeOp(IRDLOperation):
    name = "hal.command_buffer.finalize"
    command_buffer = operand_def(CommandBufferType)


@irdl_op_definition
class CommandBufferMemoizeOp(IRDLOperation):
    """A command buffer recorded once, when the module is initialised, and replayed by every
    execution with that execution's buffers bound to its slots (IREE's reusable command buffers
    with binding tables, recorded where `hal.device.memoize` would hoist them). The region
    records it: its block arguments are the command buffer, then one `!hal.buffer` per binding
    slot; it uses nothing defined outside itself but `device`'s ordinal."""

    name = "hal.command_buffer.memoize"
    device = operand_def(DeviceType)
    result = result_def(CommandBufferType)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), IsolatedFromAbove())

    @property
    def slot_count(self) -> int:
        return len(self.body.block.args) - 1


@irdl_op_definition
class FenceCreateOp(IRDLOperation):
    name = "hal.fence.create"
    device = operand_def(DeviceType)
    result = result_def(FenceType)


@irdl_op_definition
class FenceJoinOp(IRDLOperation):
    name = "hal.fence.join"
    fences = var_operand_def(FenceType)
    result = result_def(FenceType)


# hal.fence.await's timeout meaning "the runtime's default deadline" (interruptible, never a
# silent forever).
DEFAULT_TIMEOUT_MS = -1


@irdl_op_definition
class FenceAwaitOp(IRDLOperation):
    name = "hal.fence.await"
    fences = var_operand_def(FenceType)
    timeout_ms = prop_def(IntegerAttr)


@irdl_op_definition
class QueueExecuteOp(IRDLOperation):
    """Submits command buffers; runs once `wait` is reached (no wait: at once), signals `signal`."""

    name = "hal.device.queue.execute"
    device = operand_def(DeviceType)
    wait = opt_operand_def(FenceType)
    signal = operand_def(FenceType)
    command_buffers = var_operand_def(CommandBufferType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class QueueExecuteIndirectOp(IRDLOperation):
    """Submits a memoized command buffer with `bindings` in its slots, in slot order."""

    name = "hal.device.queue.execute.indirect"
    device = operand_def(DeviceType)
    wait = opt_operand_def(FenceType)
    signal = operand_def(FenceType)
    command_buffer = operand_def(CommandBufferType)
    bindings = var_operand_def(BufferType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class QueueBarrierOp(IRDLOperation):
    """Signals `signal` once `wait` is reached, without work: how a timepoint is chained onto a
    fence someone else (the caller, a custom module) waits on."""

    name = "hal.device.queue.barrier"
    device = operand_def(DeviceType)
    wait = opt_operand_def(FenceType)
    signal = operand_def(FenceType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class QueueCopyOp(IRDLOperation):
    """Copies `length` bytes from `source` to `target` on `device`'s queue once `wait` is reached,
    then signals `signal`: a transfer between devices that do not share memory (the source
    device pushes; the target device's work waits on `signal`)."""

    name = "hal.device.queue.copy"
    device = operand_def(DeviceType)
    wait = opt_operand_def(FenceType)
    signal = operand_def(FenceType)
    source = operand_def(BufferType)
    target = operand_def(BufferType)
    length = operand_def(IndexType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


HAL = Dialect(
    "hal",
    [
        TensorImportOp, TensorExportOp, TensorAliasOp, TensorBarrierOp, QueueBarrierOp, QueueCopyOp, ExecutableOp, ExecutableBinaryOp, DeviceGetOp,
        ExecutableLookupOp, BufferLoadOp, BufferViewAssertOp, BufferViewBufferOp,
        BufferViewDimOp,
        BufferViewCreateOp, BufferSubspanOp, AllocatorAllocateOp, AllocatorImportRodataOp, CommandBufferCreateOp,
        CommandBufferDispatchOp, CommandBufferCopyOp, CommandBufferBarrierOp,
        CommandBufferFinalizeOp, CommandBufferMemoizeOp, FenceCreateOp, FenceJoinOp, FenceAwaitOp,
        QueueExecuteOp, QueueExecuteIndirectOp,
    ],
    [BufferViewType, BufferType, DeviceType, FenceType, CommandBufferType, ExecutableType,
     *HAL_ATTRIBUTES],
)
DIALECT = HAL

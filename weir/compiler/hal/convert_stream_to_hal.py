"""Lowers resources and timepoints onto the HAL: resources become buffers, each execute region
becomes a command buffer submitted to the device queue with a wait fence and a signal fence, and
awaits become fence waits. The host code now says exactly what the runtime will do.

Each affinity becomes the device it names (`hal.device.get` by its binding ordinal, one handle
per device per function). Fences are plain semaphores any device's queue can wait on, so work
on one device ordered after another's needs nothing but the other's signal fence; a transfer
left by the elision pass is a queue copy on the source device.

Host control flow stays structured here too (weir/compiler/host_control_flow.py): regions are
lowered in place, and resources and timepoints crossing a region boundary become buffers and
fences."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from weir.compiler.constant_data import constant_bytes
from weir.compiler.devices import execution_device
from weir.compiler.host_control_flow import (
    carried_arguments,
    carried_operands,
    erase_arguments,
    exit_values,
    expand_arguments,
    HOST_CONTROL_FLOW,
    nested_blocks,
    rebuild,
    rebuild_exit,
    REGION_EXITS,
)
from weir.compiler.hal.record_commands import CommandRecorder
from weir.compiler.hal.workgroup_counts import entry_grids, index_constant
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.targets.element_types import dtype_name
from weir.dialects import hal, stream
from weir.format.element_types import BY_NAME
from weir.format.workgroups import WorkgroupGrid
from weir.ir import ConstantStore, constants_of
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    arith,
    ArrayAttr,
    Attribute,
    Block,
    BlockArgument,
    Builder,
    func,
    IndexType,
    InsertPoint,
    IntegerAttr,
    ModuleOp,
    Operation,
    SSAValue,
    StringAttr,
    TensorType,
)


class ConvertStreamToHal(Pass):
    flag = "convert-stream-to-hal"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        entry_ordinals = _entry_ordinals(module)
        grids = entry_grids(module)
        constants = constants_of(module)
        for fn in module.body.block.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                _FunctionLowering(fn.body.block, state, entry_ordinals, grids, constants).run()


def _entry_ordinals(module: ModuleOp) -> dict[tuple[str, str], int]:
    ordinals: dict[tuple[str, str], int] = {}
    for op in module.body.block.ops:
        if isinstance(op, hal.ExecutableOp):
            for binary in op.body.block.ops:
                if isinstance(binary, hal.ExecutableBinaryOp):
                    for i, name in enumerate(binary.entry_points.data):
                        ordinals[(op.sym_name.data, name.data)] = i
    return ordinals


class _FunctionLowering:
    def __init__(self, block: Block, state: CompilationState,
                 entry_ordinals: dict[tuple[str, str], int],
                 grids: dict[tuple[str, str], WorkgroupGrid], constants: ConstantStore):
        self.block = block
        self.constants = constants
        self.state = state
        self.entry_ordinals = entry_ordinals
        self.grids = grids
        self.buffers: dict[SSAValue, SSAValue] = {}
        self.fences: dict[SSAValue, SSAValue | None] = {}
        self.dead: list[Operation] = []
        self.table = state.devices
        self.devices: dict[int, SSAValue] = {}  # binding ordinal -> this function's handle
        # Packed transients: their slab and place in it, turned into buffers where recorded.
        self.subviews: dict[SSAValue, stream.ResourceSubviewOp] = {}
        # Resource block arguments of host regions, replaced by buffer arguments.
        self.dead_args: list[BlockArgument] = []
        # Constant resources: their bytes' rodata key and their device's ordinal.
        self.constant_keys: dict[SSAValue, tuple[str, int]] = {}
        self.recorder = CommandRecorder(entry_ordinals, grids, self.buffers, self.subviews,
                                        self.constant_keys)
        # Fences awaited so far in each block: awaiting one again there is a no-op.
        self.awaited: dict[Block, set[SSAValue]] = {}

    def _device(self, affinity: Attribute | None) -> SSAValue:
        """The handle of the device work with `affinity` runs on, got once at the function's
        start."""
        name = execution_device(affinity, self.table)
        ordinal = self.table.ordinal(name)
        assert ordinal is not None, f"device @{name} escaped materialize-target-devices"
        return self._device_by_ordinal(ordinal)

    def _device_by_ordinal(self, ordinal: int) -> SSAValue:
        if ordinal not in self.devices:
            self.devices[ordinal] = Builder(InsertPoint.at_start(self.block)).insert(
                hal.DeviceGetOp.build(result_types=[hal.DeviceType()],
                                      properties={"ordinal": IntegerAttr(ordinal, IndexType())})
            ).result
        return self.devices[ordinal]

    def run(self) -> None:
        self._lower_block(self.block)
        for op in reversed(self.dead):
            op.detach()
            op.erase()
        # Constants that only memoized recordings bind: they import their own.
        for buffer in self.buffers.values():
            owner = buffer.owner
            if isinstance(owner, hal.AllocatorImportRodataOp) and not buffer.uses and \
                    owner.parent is not None:
                owner.detach()
                owner.erase()
        erase_arguments(self.dead_args)
        # Device handles in binding order at the top, whatever order work first asked for them.
        for ordinal in sorted(self.devices, reverse=True):
            get = self.devices[ordinal].owner
            assert isinstance(get, Operation)
            get.detach()
            first = self.block.first_op
            assert first is not None  # a function body ends with its return
            self.block.insert_op_before(get, first)

    def _lower_block(self, block: Block) -> None:
        for op in list(block.ops):
            b = Builder(InsertPoint.before(op))
            if isinstance(op, HOST_CONTROL_FLOW):
                self._control_flow(op)
                continue
            if isinstance(op, REGION_EXITS):
                self._region_exit(op)
                continue
            if isinstance(op, hal.DeviceGetOp) and op.result not in self.devices.values():
                # Earlier phases (coarse-fences calls) asked for a device too: one handle each.
                op.result.replace_all_uses_with(self._device_by_ordinal(op.ordinal.value.data))
                self.dead.append(op)
                continue
            handler = _HANDLERS.get(type(op))
            if handler is None:
                if op.name.startswith("stream."):
                    raise error_at(op, f"'{op.name}' has no lowering to the HAL")
                continue
            handler(self, op, b)
            self.dead.append(op)

    # --- host control flow: resources and timepoints crossing a region boundary -------------

    @staticmethod
    def _crossing_types(value: SSAValue) -> list[Attribute] | None:
        """A resource crosses a region boundary as its buffer, a timepoint as its fence; other
        values as they are (None)."""
        if isinstance(value.type, stream.ResourceType):
            return [hal.BufferType()]
        if isinstance(value.type, stream.TimepointType):
            return [hal.FenceType()]
        return None

    @staticmethod
    def _crosses(values: list[SSAValue]) -> bool:
        return any(isinstance(v.type, stream.ResourceType | stream.TimepointType) for v in values)

    def _passed(self, values: list[SSAValue], b: Builder) -> list[SSAValue]:
        """The HAL values passing `values` on. A timepoint already reached has no fence; where it
        crosses a boundary it is passed as a fence with no points (reached, and waitable like
        any other), so a carried fence is always a real one."""
        out: list[SSAValue] = []
        for v in values:
            if isinstance(v.type, stream.ResourceType):
                out.append(self.buffers[v])
            elif isinstance(v.type, stream.TimepointType):
                fence = self.fences[v]
                if fence is None:
                    fence = b.insert(hal.FenceJoinOp.build(
                        operands=[[]], result_types=[hal.FenceType()])).result
                out.append(fence)
            else:
                out.append(v)
        return out

    def _received(self, old: SSAValue, new: SSAValue) -> None:
        if isinstance(old.type, stream.ResourceType):
            self.buffers[old] = new
        elif isinstance(old.type, stream.TimepointType):
            self.fences[old] = new
        else:
            old.replace_all_uses_with(new)

    def _control_flow(self, op: Operation) -> None:
        """Lowers the regions of `op` in place and rebuilds it with buffers and fences where
        resources and timepoints cross its boundary."""
        crosses = self._crosses([*carried_operands(op), *op.results])
        if crosses:
            for block, args in carried_arguments(op):
                for old, new in expand_arguments(block, args, self._crossing_types).items():
                    self._received(old, new[0])
                    self.dead_args.append(old)
        for block in nested_blocks(op):
            self._lower_block(block)
        if not crosses:
            return
        result_types = [(self._crossing_types(r) or [r.type])[0] for r in op.results]
        passed = self._passed(carried_operands(op), Builder(InsertPoint.before(op)))
        rebuilt = rebuild(op, passed, result_types)
        for old, new in zip(op.results, rebuilt.results, strict=True):
            self._received(old, new)
        self.dead.append(op)

    def _region_exit(self, op: Operation) -> None:
        values = exit_values(op)
        if self._crosses(values):
            rebuild_exit(op, self._passed(values, Builder(InsertPoint.before(op))))
            self.dead.append(op)

    def _all_dims(self, t: TensorType, dynamic: list[SSAValue], b: Builder) -> list[SSAValue]:
        it = iter(dynamic)
        return [next(it) if d < 0 else index_constant(b, d) for d in t.get_shape()]

    def _stream_tensor_import(self, op: stream.TensorImportOp, b: Builder) -> None:
        t = op.encoding
        b.insert(hal.BufferViewAssertOp.build(operands=[op.source], properties={
            "message": op.arg_name,
            "element_type": t.element_type,
            "shape": ArrayAttr([IntegerAttr(max(d, -1), IndexType()) for d in t.get_shape()]),
        }))
        buffer = b.insert(hal.BufferViewBufferOp.build(
            operands=[op.source], result_types=[hal.BufferType()]))
        self.buffers[op.result] = buffer.result

    def _stream_tensor_sizeof(self, op: stream.TensorSizeOfOp, b: Builder) -> None:
        t = op.encoding
        static = BY_NAME[dtype_name(t.element_type, op)].byte_size
        for d in t.get_shape():
            if d >= 0:
                static *= d
        size = index_constant(b, static)
        for d in op.dims:
            size = b.insert(arith.MuliOp(size, d)).result
        op.result.replace_all_uses_with(size)

    def _stream_resource_alloca(self, op: stream.ResourceAllocaOp, b: Builder) -> None:
        buffer = b.insert(hal.AllocatorAllocateOp.build(
            operands=[self._device(op.affinity), op.size], result_types=[hal.BufferType()]))
        self.buffers[op.result] = buffer.result
        self.fences[op.result_timepoint] = None

    def _stream_resource_subview(self, op: stream.ResourceSubviewOp, b: Builder) -> None:
        self.subviews[op.result] = op

    def _stream_resource_constant(self, op: stream.ResourceConstantOp, b: Builder) -> None:
        key = self.state.blobs.add("constant", constant_bytes(op.value, op, self.constants))
        device = self._device(op.affinity)
        buffer = b.insert(hal.AllocatorImportRodataOp.build(
            operands=[device], result_types=[hal.BufferType()],
            properties={"rodata": StringAttr(key)}))
        self.buffers[op.result] = buffer.result
        self.constant_keys[op.result] = (key, device.owner.ordinal.value.data)  # type: ignore[union-attr]

    def _fences(self, timepoints: list[SSAValue]) -> list[SSAValue]:
        """The fences behind `timepoints`; a timepoint that is reached already has none."""
        return [f for t in timepoints if (f := self.fences[t]) is not None]

    def _fence_of(self, timepoints: list[SSAValue], b: Builder) -> SSAValue | None:
        fences = self._fences(timepoints)
        if not fences:
            return None
        if len(fences) == 1:
            return fences[0]
        return b.insert(hal.FenceJoinOp.build(operands=[fences],
                                               result_types=[hal.FenceType()])).result

    def _stream_timepoint_join(self, op: stream.TimepointJoinOp, b: Builder) -> None:
        self.fences[op.result] = self._fence_of(list(op.timepoints), b)

    def _stream_timepoint_immediate(self, op: stream.TimepointImmediateOp, b: Builder) -> None:
        self.fences[op.result] = None

    def _stream_timepoint_await(self, op: stream.TimepointAwaitOp, b: Builder) -> None:
        """A wait on the fences not yet awaited in this block (each export of a call's results
        awaits the one execute that made them all)."""
        block = op.parent_block()
        assert block is not None
        awaited = self.awaited.setdefault(block, set())
        fences = [f for f in dict.fromkeys(self._fences(list(op.timepoints))) if f not in awaited]
        awaited.update(fences)
        if fences:
            b.insert(hal.FenceAwaitOp.build(operands=[fences], properties={
                "timeout_ms": IntegerAttr(hal.DEFAULT_TIMEOUT_MS, IndexType())}))

    def _stream_timepoint_import(self, op: stream.TimepointImportOp, b: Builder) -> None:
        self.fences[op.result] = op.fence

    def _stream_timepoint_chain_external(self, op: stream.TimepointChainExternalOp,
                                         b: Builder) -> None:
        wait = self._fence_of([op.timepoint], b)
        b.insert(hal.QueueBarrierOp.build(
            operands=[self._device(op.affinity), [wait] if wait is not None else [], op.fence]))

    def _stream_async_transfer(self, op: stream.AsyncTransferOp, b: Builder) -> None:
        source = self._device(op.source_affinity)
        buffer = b.insert(hal.AllocatorAllocateOp.build(
            operands=[self._device(op.target_affinity), op.size],
            result_types=[hal.BufferType()])).result
        wait = self._fence_of([op.await_timepoint] if op.await_timepoint else [], b)
        signal = b.insert(hal.FenceCreateOp.build(
            operands=[source], result_types=[hal.FenceType()])).result
        b.insert(hal.QueueCopyOp.build(operands=[
            source, [wait] if wait is not None else [], signal, self.buffers[op.source], buffer,
            op.size]))
        self.buffers[op.result] = buffer
        self.fences[op.result_timepoint] = signal

    def _stream_cmd_execute(self, op: stream.CmdExecuteOp, b: Builder) -> None:
        device = self._device(op.affinity)
        wait = self._fence_of([op.await_timepoint] if op.await_timepoint else [], b)
        recorder = self.recorder
        ordinal = device.owner.ordinal.value.data  # type: ignore[union-attr]
        slots = recorder.memoizable_slots(op, ordinal) if self.state.options.hal_memoization \
            else None
        if slots is not None:
            # Recorded once at initialisation; each execution only binds its buffers.
            cb = b.insert(recorder.memoized(op, device, slots)).result
            signal = b.insert(hal.FenceCreateOp.build(
                operands=[device], result_types=[hal.FenceType()])).result
            b.insert(hal.QueueExecuteIndirectOp.build(operands=[
                device, [wait] if wait is not None else [], signal, cb,
                [self.buffers[r] for r in slots]]))
            self.fences[op.result_timepoint] = signal
            return
        cb = b.insert(hal.CommandBufferCreateOp.build(
            operands=[device], result_types=[hal.CommandBufferType()])).result
        recorder.record(op, device, cb, recorder.bind_buffer, b)
        signal = b.insert(hal.FenceCreateOp.build(
            operands=[device], result_types=[hal.FenceType()])).result
        b.insert(hal.QueueExecuteOp.build(
            operands=[device, [wait] if wait is not None else [], signal, [cb]]))
        self.fences[op.result_timepoint] = signal

    def _stream_resource_load(self, op: stream.ResourceLoadOp, b: Builder) -> None:
        load = b.insert(hal.BufferLoadOp.build(operands=[self.buffers[op.source], op.offset],
                                               result_types=[op.result.type]))
        op.result.replace_all_uses_with(load.result)

    def _stream_tensor_export(self, op: stream.TensorExportOp, b: Builder) -> None:
        view = b.insert(hal.BufferViewCreateOp.build(
            operands=[self.buffers[op.source], self._all_dims(op.encoding, list(op.dims), b)],
            result_types=[hal.BufferViewType()],
            properties={"element_type": op.encoding.element_type}))
        op.result.replace_all_uses_with(view.result)


# Which lowering handles which stream op (ops not listed pass through unchanged).
_HANDLERS: dict[type[Operation], Callable[[_FunctionLowering, Any, Builder], None]] = {
    stream.TensorImportOp: _FunctionLowering._stream_tensor_import,
    stream.TensorSizeOfOp: _FunctionLowering._stream_tensor_sizeof,
    stream.ResourceAllocaOp: _FunctionLowering._stream_resource_alloca,
    stream.ResourceConstantOp: _FunctionLowering._stream_resource_constant,
    stream.ResourceSubviewOp: _FunctionLowering._stream_resource_subview,
    stream.TimepointJoinOp: _FunctionLowering._stream_timepoint_join,
    stream.TimepointImmediateOp: _FunctionLowering._stream_timepoint_immediate,
    stream.TimepointAwaitOp: _FunctionLowering._stream_timepoint_await,
    stream.TimepointImportOp: _FunctionLowering._stream_timepoint_import,
    stream.TimepointChainExternalOp: _FunctionLowering._stream_timepoint_chain_external,
    stream.CmdExecuteOp: _FunctionLowering._stream_cmd_execute,
    stream.AsyncTransferOp: _FunctionLowering._stream_async_transfer,
    stream.TensorExportOp: _FunctionLowering._stream_tensor_export,
    stream.ResourceLoadOp: _FunctionLowering._stream_resource_load,
}

"""Turns host tensors into resources and dispatches into command sequences ordered by
timepoints. Every tensor value maps to (resource, dynamic dims, timepoint at which its contents
are ready); each dispatch waits for exactly the timepoints of what it reads. Results get
explicit, sized allocations: `external` when they leave the function, `transient` otherwise.

A buffer view leaves the function only once its contents are ready (the host awaits), unless a
`hal.tensor.barrier` already chained that readiness onto a fence the receiver waits on: that is
the whole difference between the synchronous ABI and coarse fences.

Every allocation and execute region is on one device (the affinity analysis says which), so
execution is partitioned per device and ordered across devices by timepoints only. A value used
on a device other than its own goes through `stream.async.transfer`: explicitly for
`flow.tensor.transfer`, implicitly where a dispatch or an export needs it elsewhere.

Host control flow (scf.for/if/index_switch/while) stays structured: the converter walks into
its regions (values from outside are visible there as they are) and re-types only what crosses a
region boundary, each tensor as (external resource, ready timepoint, dynamic dims). A carried
resource lives as long as the loop needs it, so it is `external`, never `transient`."""

from __future__ import annotations

from dataclasses import dataclass

from weir.compiler.devices import DeviceTable
from weir.compiler.host_control_flow import (
    carried_arguments,
    carried_operands,
    erase_arguments,
    exit_targets,
    exit_values,
    expand_arguments,
    HOST_CONTROL_FLOW,
    nested_blocks,
    rebuild,
    rebuild_exit,
    REGION_EXITS,
)
from weir.compiler.pass_base import Pass
from weir.compiler.stream.affinity_analysis import place, Placement
from weir.compiler.stream.async_regions import AsyncRegionConversion
from weir.compiler.stream.push_constants import encode_push_constant
from weir.compiler.shapes import dims_per_result
from weir.compiler.tensor_shapes import check_reshape_at_run_time, RESHAPE_OPS, reshaped_dims
from weir.compiler.state import CompilationState
from weir.compiler.targets.element_types import dtype_name
from weir.dialects import async_, flow, hal, stream
from weir.format.element_types import BY_NAME
from weir.ir.diagnostics import error_at
from weir.ir.hal_attrs import DeviceAffinityAttr
from weir.ir.upstream import (
    arith,
    ArrayAttr,
    Attribute,
    Block,
    BlockArgument,
    Builder,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DimOp,
    EmptyOp,
    func,
    IndexType,
    InsertPoint,
    IntegerAttr,
    ModuleOp,
    Operation,
    Region,
    SSAValue,
    StringAttr,
    tensor,
    TensorType,
)


@dataclass
class Resource:
    value: SSAValue
    dims: list[SSAValue]
    ready: SSAValue | None  # a !stream.timepoint, None when ready now
    device: str | None  # where the contents live; None for constants (usable anywhere)
    # True once a barrier reported `ready` to an outside fence: exporting needs no host wait.
    fenced: bool = False


def _on(device: str) -> DeviceAffinityAttr:
    return DeviceAffinityAttr(device)


def _leaves_function(value: SSAValue) -> bool:
    for use in value.uses:
        user = use.operation
        if isinstance(user, hal.TensorExportOp) and use.index == 0:
            return True
        if isinstance(user, hal.TensorBarrierOp) and use.index < len(user.results_) and \
                _leaves_function(user.results_[use.index]):
            return True
        if isinstance(user, flow.TensorTransferOp) and _leaves_function(user.result):
            return True
        if isinstance(user, (*REGION_EXITS, *HOST_CONTROL_FLOW, async_.YieldOp)):
            return True  # carried across a region boundary: lives as long as the loop needs it
    return False


class ConvertToStream(Pass):
    flag = "convert-to-stream"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for fn in module.body.block.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                if len(fn.body.blocks) != 1:
                    raise error_at(fn, "a function body of several blocks is not supported "
                                       "(use scf ops for control flow)")
                block = fn.body.block
                _FunctionConverter(block, place(block, state.devices), state.devices).run()


class _FunctionConverter(AsyncRegionConversion):
    def __init__(self, block: Block, placement: Placement, table: DeviceTable):
        self.block = block
        self.placement = placement
        self.table = table
        self.resources: dict[SSAValue, Resource] = {}
        # Implicit transfers made so far, so every use on one device shares one copy.
        self.moved: dict[tuple[SSAValue, str], Resource] = {}
        self.fence_timepoints: dict[SSAValue, SSAValue] = {}  # one timepoint per outside fence
        self.dead: list[Operation] = []
        # Tensor block arguments of host regions, replaced by resource + dims arguments.
        self.dead_args: list[BlockArgument] = []
        # What each region exit passes values on to, noted before block arguments change.
        self.exit_targets: dict[Operation | None, list[SSAValue]] = {}
        self.frontier: SSAValue | None = None
        self.ready_at: dict[SSAValue, SSAValue | None] = {}
        self.scalar_values: dict[SSAValue, SSAValue] = {}
        self.regions_seen = 0

    def run(self) -> None:
        self._convert_block(self.block)
        for op in reversed(self.dead):
            op.detach()
            op.erase()
        erase_arguments(self.dead_args)
        for op in reversed(list(self.block.walk())):  # joins that flattened joins replaced
            if isinstance(op, stream.TimepointJoinOp) and not op.result.uses:
                op.detach()
                op.erase()

    def _convert_block(self, block: Block) -> None:
        for op in list(block.ops):
            b = Builder(InsertPoint.before(op))
            if isinstance(op, HOST_CONTROL_FLOW):
                self._control_flow(op, b)
            elif isinstance(op, REGION_EXITS):
                self._region_exit(op, b)
            elif isinstance(op, async_.ExecuteOp):
                self._async_execute(op, b)
            elif isinstance(op, async_.AwaitOp):
                self._async_await(op, b)
            elif isinstance(op, hal.TensorImportOp):
                self._import(op, b)
            elif isinstance(op, EmptyOp):
                self._empty(op, b)
            elif isinstance(op, arith.ConstantOp) and isinstance(op.result.type, TensorType):
                self._constant(op, b)
            elif isinstance(op, flow.DispatchOp):
                self._dispatch(op, b)
            elif isinstance(op, hal.TensorAliasOp):
                self._alias(op, b)
            elif isinstance(op, hal.TensorBarrierOp):
                self._barrier(op, b)
            elif isinstance(op, hal.TensorExportOp):
                self._export(op, b)
            elif isinstance(op, DimOp):
                self._dim(op, b)
            elif isinstance(op, tensor.ExtractOp):
                self._extract(op, b)
            elif isinstance(op, flow.TensorTransferOp):
                self._transfer(op, b)
            elif isinstance(op, RESHAPE_OPS):
                self._reshape(op, b)
            elif isinstance(op, async_.YieldOp):
                pass  # read by the enclosing region's conversion
            elif any(isinstance(v.type, TensorType) for v in (*op.operands, *op.results)):
                raise error_at(op, f"'{op.name}' on tensors cannot run on the host")

    # --- host control flow: scf.for / scf.if / scf.while stay structured ----------------------

    def _carried_types(self, value: SSAValue) -> list[Attribute] | None:
        """What a tensor becomes where it crosses a region boundary: an external resource, the
        timepoint at which its contents are ready, and its dynamic dims (carried along, as a
        loop may change them). Other values cross as they are (None)."""
        t = value.type
        if not isinstance(t, TensorType):
            return None
        dynamic = sum(1 for d in t.get_shape() if d < 0)
        return [stream.ResourceType("external"), stream.TimepointType(),
                *([IndexType()] * dynamic)]

    def _carried_resource(self, values: list[SSAValue], device: str) -> Resource:
        """The Resource that (resource, timepoint, dims...) values received at a region
        boundary stand for."""
        return Resource(values[0], list(values[2:]), values[1], device)

    def _carried_device(self, target: SSAValue) -> str:
        return self.placement.value_device.get(target, self.table.devices[0].name)

    def _carry(self, values: list[SSAValue], targets: list[SSAValue], user: Operation,
               b: Builder) -> list[SSAValue]:
        """The operands that pass `values` on to `targets` (entry-block arguments or results of
        host control flow): each tensor as an external resource on the target's device, its
        readiness and its dynamic dims, other values as they are.

        Why carry the timepoint rather than have the host await it at the boundary: a loop then
        only schedules work (iteration k+1's dispatch waits on iteration k's timepoint on the
        device queue), so the host runs ahead instead of stalling every iteration, and an
        async-external function with a loop still returns before its wait fence is signalled
        (awaiting an argument's readiness there would never end if the caller signals after the
        call returns)."""
        out: list[SSAValue] = []
        for value, target in zip(values, targets, strict=True):
            t = value.type
            if not isinstance(t, TensorType):
                out.append(value)
                continue
            device = self._carried_device(target)
            resource = self._resource(value, user)
            if resource.device is not None and resource.device != device:
                resource = self._transfer_resource(resource, t, device, "external", b)
            elif resource.value.type != stream.ResourceType("external"):
                resource = self._copy_to_external(resource, t, device, b)
            ready = resource.ready
            if ready is None:
                ready = b.insert(stream.TimepointImmediateOp.build(
                    result_types=[stream.TimepointType()])).result
            out.extend([resource.value, ready, *resource.dims])
        return out

    def _copy_to_external(self, source: Resource, t: TensorType, device: str,
                          b: Builder) -> Resource:
        """A copy of a constant (read-only module data) in a fresh external allocation, so a
        carried value has one resource type whichever way it arrives."""
        target = self._alloca(t, source.dims, "external", device, b)
        body = Block()
        body.add_op(stream.CmdCopyOp.build(
            operands=[source.value, target.value, self._sizeof(t, source.dims, b)]))
        done = self._execute(body, [source, target], device, b)
        return Resource(target.value, source.dims, done, device)

    def _control_flow(self, op: Operation, b: Builder) -> None:
        """Converts the regions of `op` in place, then rebuilds `op` with every carried tensor
        as (resource, timepoint, dims...): in its operands, its entry-block arguments and its
        results."""
        self.exit_targets.update({block.last_op: exit_targets(block.last_op)
                                  for block in nested_blocks(op)
                                  if isinstance(block.last_op, REGION_EXITS)})
        crosses = any(isinstance(v.type, TensorType)
                      for v in (*carried_operands(op), *op.results))
        carried = carried_operands(op)
        if crosses:
            targets = carried_arguments(op)[0][1] if carried else []
            carried = self._carry(carried, list(targets), op, b)
            for block, args in carried_arguments(op):
                for old, new in expand_arguments(block, args, self._carried_types).items():
                    self.resources[old] = self._carried_resource(list(new),
                                                                 self._carried_device(old))
                    self.dead_args.append(old)
        outer_moved, outer_frontier = self.moved, self.frontier
        for block in nested_blocks(op):
            # A transfer made inside a region is not visible after it, nor is a token awaited.
            self.moved = dict(outer_moved)
            self._convert_block(block)
            self.frontier = outer_frontier
        self.moved = outer_moved
        if not crosses:
            return
        result_types = [t for r in op.results for t in (self._carried_types(r) or [r.type])]
        new_results = iter(rebuild(op, carried, result_types).results)
        for r in op.results:
            types = self._carried_types(r)
            if types is None:
                r.replace_all_uses_with(next(new_results))
                continue
            self.resources[r] = self._carried_resource([next(new_results) for _ in types],
                                                       self._carried_device(r))
        self.dead.append(op)

    def _region_exit(self, op: Operation, b: Builder) -> None:
        values = exit_values(op)
        if not any(isinstance(v.type, TensorType) for v in values):
            return
        rebuild_exit(op, self._carry(values, self.exit_targets[op], op, b))
        self.dead.append(op)

    def _sizeof(self, t: TensorType, dims: list[SSAValue], b: Builder) -> SSAValue:
        return b.insert(stream.TensorSizeOfOp.build(
            operands=[dims], result_types=[IndexType()], properties={"encoding": t})).result

    def _alloca(self, t: TensorType, dims: list[SSAValue], lifetime: str, device: str,
                b: Builder) -> Resource:
        size = self._sizeof(t, dims, b)
        alloca = b.insert(stream.ResourceAllocaOp.build(
            operands=[size, []],
            result_types=[stream.ResourceType(lifetime), stream.TimepointType()],
            properties={"affinity": _on(device)}))
        return Resource(alloca.result, dims, alloca.result_timepoint, device)

    def _import(self, op: hal.TensorImportOp, b: Builder) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        imported = b.insert(stream.TensorImportOp.build(
            operands=[op.source, list(op.target_dims)],
            result_types=[stream.ResourceType("external")],
            properties={"encoding": t, "name": op.arg_name,
                        "affinity": _on(self.placement.op_device[op])}))
        ready = None
        if op.wait is not None:
            ready = self.fence_timepoints.get(op.wait)
            if ready is None:
                ready = b.insert(stream.TimepointImportOp.build(
                    operands=[op.wait], result_types=[stream.TimepointType()])).result
                self.fence_timepoints[op.wait] = ready
        self.resources[op.result] = Resource(imported.result, list(op.target_dims), ready,
                                             self.placement.op_device[op])
        self.dead.append(op)

    def _empty(self, op: EmptyOp, b: Builder) -> None:
        t = op.tensor.type
        assert isinstance(t, TensorType)
        lifetime = "external" if _leaves_function(op.tensor) else "transient"
        self.resources[op.tensor] = self._alloca(t, list(op.dynamic_sizes), lifetime,
                                                 self.placement.op_device[op], b)
        self.dead.append(op)

    def _constant(self, op: arith.ConstantOp, b: Builder) -> None:
        value = op.value
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            raise error_at(op, f"tensor constant {value} is not supported")
        devices = self.placement.constant_devices(op.result) or {self.table.devices[0].name}
        const = b.insert(stream.ResourceConstantOp.build(
            result_types=[stream.ResourceType("constant")],
            properties={"value": value, "affinity": self.table.affinity(devices)}))
        self.resources[op.result] = Resource(const.result, [], None, None)
        self.dead.append(op)

    def _resource(self, value: SSAValue, user: Operation) -> Resource:
        if value not in self.resources:
            raise error_at(user, "internal: a tensor operand has no resource")
        return self.resources[value]

    def _resource_on(self, value: SSAValue, device: str, user: Operation,
                     b: Builder) -> Resource:
        """`value`'s resource as `device` sees it: transferred there if it lives elsewhere."""
        source = self._resource(value, user)
        if source.device is None or source.device == device:
            return source
        key = (value, device)
        if key not in self.moved:
            t = value.type
            assert isinstance(t, TensorType)
            self.moved[key] = self._transfer_resource(source, t, device, "transient", b)
        return self.moved[key]

    def _transfer_resource(self, source: Resource, t: TensorType, device: str, lifetime: str,
                           b: Builder) -> Resource:
        assert source.device is not None
        size = self._sizeof(t, source.dims, b)
        wait = self._join([source.ready, self.frontier], b)
        transfer = b.insert(stream.AsyncTransferOp.build(
            operands=[source.value, size, [wait] if wait is not None else []],
            result_types=[stream.ResourceType(lifetime), stream.TimepointType()],
            properties={"source_affinity": _on(source.device), "target_affinity": _on(device)}))
        return Resource(transfer.result, source.dims, transfer.result_timepoint, device)

    def _reshape(self, op: Operation, b: Builder) -> None:
        """collapse_shape/expand_shape/reshape/cast keep the bytes and change the shape (IREE's
        flow.tensor.reshape): the result is the source's resource under new dims, no copy."""
        source = self._resource(op.operands[0], op)
        dims = reshaped_dims(op, source.dims, b)
        check_reshape_at_run_time(op, source.dims, dims, b)
        self.resources[op.results[0]] = Resource(source.value, dims, source.ready, source.device,
                                                 source.fenced)
        self.dead.append(op)

    def _transfer(self, op: flow.TensorTransferOp, b: Builder) -> None:
        source = self._resource(op.source, op)
        device = self.placement.op_device[op]
        t = op.source.type
        assert isinstance(t, TensorType)
        if source.device is None or source.device == device:
            self.resources[op.result] = source
        else:
            lifetime = "external" if _leaves_function(op.result) else "transient"
            self.resources[op.result] = self._transfer_resource(source, t, device, lifetime, b)
        self.dead.append(op)

    def _await_all(self, resources: list[Resource], b: Builder) -> SSAValue | None:
        """When `resources` are ready and everything the current scope waits for has run."""
        return self._join([*(r.ready for r in resources), self.frontier], b)

    def _execute(self, body: Block, after: list[Resource], device: str, b: Builder) -> SSAValue:
        """Submits the commands in `body` to `device`'s queue once every resource in `after` is
        ready; returns the timepoint at which they have run."""
        wait = self._await_all(after, b)
        execute = b.insert(stream.CmdExecuteOp.build(
            operands=[[wait] if wait is not None else []],
            result_types=[stream.TimepointType()], regions=[Region(body)],
            properties={"affinity": _on(device)}))
        return execute.result_timepoint

    def _dispatch(self, op: flow.DispatchOp, b: Builder) -> None:
        device = self.placement.op_device[op]
        inputs = [self._resource_on(v, device, op, b) for v in op.arguments
                  if isinstance(v.type, TensorType)]
        push = [encode_push_constant(v, op, b) for v in op.arguments
                if not isinstance(v.type, TensorType)]
        outputs: list[Resource] = []
        for r, r_dims in zip(op.results, dims_per_result(op), strict=True):
            t = r.type
            assert isinstance(t, TensorType)
            lifetime = "external" if _leaves_function(r) else "transient"
            outputs.append(self._alloca(t, r_dims, lifetime, device, b))
        body = Block()
        body.add_op(stream.CmdDispatchOp.build(
            operands=[[], push, [r.value for r in inputs + outputs]],
            properties={
                "entry_point": op.entry_point,
                "access": ArrayAttr([StringAttr("ro")] * len(inputs) +
                                    [StringAttr("wo")] * len(outputs)),
            }))
        done = self._execute(body, inputs + outputs, device, b)
        for r, out in zip(op.results, outputs, strict=True):
            self.resources[r] = Resource(out.value, out.dims, done, device)
        self.dead.append(op)

    def _alias(self, op: hal.TensorAliasOp, b: Builder) -> None:
        device = self.placement.op_device[op]
        source = self._resource_on(op.source, device, op, b)
        t = op.source.type
        assert isinstance(t, TensorType)
        storage = b.insert(stream.TensorImportOp.build(
            operands=[op.storage, list(op.source_dims)],
            result_types=[stream.ResourceType("external")],
            properties={"encoding": t, "name": StringAttr("output storage"),
                        "affinity": _on(device)}))
        size = self._sizeof(t, list(op.source_dims), b)
        body = Block()
        body.add_op(stream.CmdCopyOp.build(operands=[source.value, storage.result, size]))
        self.resources[op.result] = Resource(storage.result, list(op.source_dims),
                                              self._execute(body, [source], device, b), device)
        self.dead.append(op)

    def _barrier(self, op: hal.TensorBarrierOp, b: Builder) -> None:
        # Each result first moves to the device its export promises, so the fence covers the
        # transfer too and the export needs no host wait.
        sources = [self._exported_from(v, r, op, b) for v, r in zip(op.sources, op.results_,
                                                                     strict=True)]
        ready = self._await_all(sources, b)
        if ready is None:
            ready = b.insert(stream.TimepointImmediateOp.build(
                result_types=[stream.TimepointType()])).result
        b.insert(stream.TimepointChainExternalOp.build(
            operands=[ready, op.signal],
            properties={"affinity": _on(self.placement.op_device[op])}))
        for result, source in zip(op.results_, sources, strict=True):
            self.resources[result] = Resource(source.value, source.dims, source.ready,
                                              source.device, fenced=True)
        self.dead.append(op)

    def _exported_from(self, source: SSAValue, result: SSAValue, barrier: hal.TensorBarrierOp,
                       b: Builder) -> Resource:
        resource = self._resource(source, barrier)
        exports = [u.operation for u in result.uses if isinstance(u.operation, hal.TensorExportOp)]
        if not exports or resource.device is None:
            return resource
        device = self.placement.op_device[exports[0]]
        if device == resource.device:
            return resource
        t = source.type
        assert isinstance(t, TensorType)
        return self._transfer_resource(resource, t, device, "external", b)

    def _export(self, op: hal.TensorExportOp, b: Builder) -> None:
        device = self.placement.op_device[op]
        source = self._resource(op.source, op)
        t = op.source.type
        assert isinstance(t, TensorType)
        if source.device is not None and source.device != device:
            # The caller expects the result on `device`: an implicit transfer, behind which the
            # host waits (a barrier's fence covered only the source's readiness).
            source = self._transfer_resource(source, t, device, "external", b)
        if source.ready is not None and not source.fenced:
            b.insert(stream.TimepointAwaitOp.build(operands=[[source.ready]]))
        exported = b.insert(stream.TensorExportOp.build(
            operands=[source.value, list(op.source_dims)],
            result_types=[hal.BufferViewType()],
            properties={"encoding": t, "affinity": _on(device)}))
        op.result.replace_all_uses_with(exported.result)
        self.dead.append(op)

    def _extract(self, op: tensor.ExtractOp, b: Builder) -> None:
        """`tensor.extract` on the host: wait until the tensor is ready, then read the element
        at its row-major byte offset (the host needs the value now, e.g. for a loop condition)."""
        t = op.tensor.type
        assert isinstance(t, TensorType)
        source = self._resource(op.tensor, op)
        if source.ready is not None:
            b.insert(stream.TimepointAwaitOp.build(operands=[[source.ready]]))
        def const(value: int) -> SSAValue:
            return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result

        dynamic = iter(source.dims)
        linear: SSAValue | None = None
        for size, index in zip(t.get_shape(), op.indices, strict=True):
            extent = next(dynamic) if size < 0 else None  # dynamic dims come in order
            if linear is None:
                linear = index
                continue
            scaled = b.insert(arith.MuliOp(linear, extent or const(size))).result
            linear = b.insert(arith.AddiOp(scaled, index)).result
        element_size = BY_NAME[dtype_name(t.element_type, op)].byte_size
        # A 0-d tensor's one element is at offset 0.
        offset = const(0) if linear is None else b.insert(
            arith.MuliOp(linear, const(element_size))).result
        load = b.insert(stream.ResourceLoadOp.build(
            operands=[source.value, offset], result_types=[op.result.type]))
        op.result.replace_all_uses_with(load.result)
        self.dead.append(op)

    def _dim(self, op: DimOp, b: Builder) -> None:
        t = op.source.type
        assert isinstance(t, TensorType)
        index_op = op.index.owner
        if not isinstance(index_op, arith.ConstantOp):
            raise error_at(op, "tensor.dim needs a constant dimension index")
        index = index_op.value.value.data  # type: ignore[attr-defined]
        shape = t.get_shape()
        if shape[index] >= 0:
            replacement = b.insert(arith.ConstantOp(IntegerAttr(shape[index], IndexType()))).result
        else:
            dynamic_before = sum(1 for d in shape[:index] if d < 0)
            replacement = self._resource(op.source, op).dims[dynamic_before]
        op.result.replace_all_uses_with(replacement)
        self.dead.append(op)

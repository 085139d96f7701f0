"""Turns host tensors into resources and dispatches into command sequences ordered by
timepoints. Every tensor value maps to (resource, dynamic dims, timepoint at which its contents
are ready); each dispatch waits for exactly the timepoints of what it reads. Results get
explicit, sized allocations: `external` when they leave the function, `transient` otherwise.

A buffer view leaves the function only once its contents are ready (the host awaits), unless a
`hal.tensor.barrier` already chained that readiness onto a fence the receiver waits on: that is
the whole difference between the synchronous ABI and coarse fences."""

from __future__ import annotations

from dataclasses import dataclass

from weir.compiler.pass_base import Pass
from weir.compiler.shapes import dims_per_result
from weir.compiler.state import CompilationState
from weir.dialects import flow, hal, stream
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    arith,
    ArrayAttr,
    Block,
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
    TensorType,
)


@dataclass
class Resource:
    value: SSAValue
    dims: list[SSAValue]
    ready: SSAValue | None  # a !stream.timepoint, None when ready now
    # True once a barrier reported `ready` to an outside fence: exporting needs no host wait.
    fenced: bool = False


def _leaves_function(value: SSAValue) -> bool:
    for use in value.uses:
        user = use.operation
        if isinstance(user, hal.TensorExportOp) and use.index == 0:
            return True
        if isinstance(user, hal.TensorBarrierOp) and use.index < len(user.results_) and \
                _leaves_function(user.results_[use.index]):
            return True
    return False


class ConvertToStream(Pass):
    flag = "convert-to-stream"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for fn in module.body.block.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                if len(fn.body.blocks) != 1:
                    raise error_at(fn, "control flow on the host is not supported yet")
                _FunctionConverter(fn.body.block).run()


class _FunctionConverter:
    def __init__(self, block: Block):
        self.block = block
        self.resources: dict[SSAValue, Resource] = {}
        self.fence_timepoints: dict[SSAValue, SSAValue] = {}  # one timepoint per outside fence
        self.dead: list[Operation] = []

    def run(self) -> None:
        for op in list(self.block.ops):
            b = Builder(InsertPoint.before(op))
            if isinstance(op, hal.TensorImportOp):
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
            elif isinstance(op, flow.TensorTransferOp):
                raise error_at(op, "flow.tensor.transfer needs multi-device support, which is "
                                   "not implemented yet")
            elif any(isinstance(v.type, TensorType) for v in (*op.operands, *op.results)):
                raise error_at(op, f"'{op.name}' on tensors cannot run on the host")
        for op in reversed(self.dead):
            op.detach()
            op.erase()

    def _sizeof(self, t: TensorType, dims: list[SSAValue], b: Builder) -> SSAValue:
        return b.insert(stream.TensorSizeOfOp.build(
            operands=[dims], result_types=[IndexType()], properties={"encoding": t})).result

    def _alloca(self, t: TensorType, dims: list[SSAValue], lifetime: str,
                b: Builder) -> tuple[SSAValue, SSAValue]:
        size = self._sizeof(t, dims, b)
        alloca = b.insert(stream.ResourceAllocaOp.build(
            operands=[size, []],
            result_types=[stream.ResourceType(lifetime), stream.TimepointType()]))
        return alloca.result, alloca.result_timepoint

    def _import(self, op: hal.TensorImportOp, b: Builder) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        imported = b.insert(stream.TensorImportOp.build(
            operands=[op.source, list(op.target_dims)],
            result_types=[stream.ResourceType("external")],
            properties={"encoding": t, "name": op.arg_name}))
        ready = None
        if op.wait is not None:
            ready = self.fence_timepoints.get(op.wait)
            if ready is None:
                ready = b.insert(stream.TimepointImportOp.build(
                    operands=[op.wait], result_types=[stream.TimepointType()])).result
                self.fence_timepoints[op.wait] = ready
        self.resources[op.result] = Resource(imported.result, list(op.target_dims), ready)
        self.dead.append(op)

    def _empty(self, op: EmptyOp, b: Builder) -> None:
        t = op.tensor.type
        assert isinstance(t, TensorType)
        lifetime = "external" if _leaves_function(op.tensor) else "transient"
        value, ready = self._alloca(t, list(op.dynamic_sizes), lifetime, b)
        self.resources[op.tensor] = Resource(value, list(op.dynamic_sizes), ready)
        self.dead.append(op)

    def _constant(self, op: arith.ConstantOp, b: Builder) -> None:
        value = op.value
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            raise error_at(op, f"tensor constant {value} is not supported")
        const = b.insert(stream.ResourceConstantOp.build(
            result_types=[stream.ResourceType("constant")], properties={"value": value}))
        self.resources[op.result] = Resource(const.result, [], None)
        self.dead.append(op)

    def _resource(self, value: SSAValue, user: Operation) -> Resource:
        if value not in self.resources:
            raise error_at(user, "internal: a tensor operand has no resource")
        return self.resources[value]

    def _await_all(self, resources: list[Resource], b: Builder) -> SSAValue | None:
        points = [r.ready for r in resources if r.ready is not None]
        unique = list(dict.fromkeys(points))
        if not unique:
            return None
        if len(unique) == 1:
            return unique[0]
        return b.insert(stream.TimepointJoinOp.build(
            operands=[unique], result_types=[stream.TimepointType()])).result

    def _execute(self, body: Block, after: list[Resource], b: Builder) -> SSAValue:
        """Submits the commands in `body` once every resource in `after` is ready; returns the
        timepoint at which they have run."""
        wait = self._await_all(after, b)
        execute = b.insert(stream.CmdExecuteOp.build(
            operands=[[wait] if wait is not None else []],
            result_types=[stream.TimepointType()], regions=[Region(body)]))
        return execute.result_timepoint

    def _dispatch(self, op: flow.DispatchOp, b: Builder) -> None:
        inputs = [self._resource(v, op) for v in op.arguments if isinstance(v.type, TensorType)]
        push = [v for v in op.arguments if isinstance(v.type, IndexType)]
        outputs: list[Resource] = []
        for r, r_dims in zip(op.results, dims_per_result(op), strict=True):
            t = r.type
            assert isinstance(t, TensorType)
            lifetime = "external" if _leaves_function(r) else "transient"
            value, ready = self._alloca(t, r_dims, lifetime, b)
            outputs.append(Resource(value, r_dims, ready))
        body = Block()
        body.add_op(stream.CmdDispatchOp.build(
            operands=[[], push, [r.value for r in inputs + outputs]],
            properties={
                "entry_point": op.entry_point,
                "access": ArrayAttr([StringAttr("ro")] * len(inputs) +
                                    [StringAttr("wo")] * len(outputs)),
            }))
        done = self._execute(body, inputs + outputs, b)
        for r, out in zip(op.results, outputs, strict=True):
            self.resources[r] = Resource(out.value, out.dims, done)
        self.dead.append(op)

    def _alias(self, op: hal.TensorAliasOp, b: Builder) -> None:
        source = self._resource(op.source, op)
        t = op.source.type
        assert isinstance(t, TensorType)
        storage = b.insert(stream.TensorImportOp.build(
            operands=[op.storage, list(op.source_dims)],
            result_types=[stream.ResourceType("external")],
            properties={"encoding": t, "name": StringAttr("output storage")}))
        size = self._sizeof(t, list(op.source_dims), b)
        body = Block()
        body.add_op(stream.CmdCopyOp.build(operands=[source.value, storage.result, size]))
        self.resources[op.result] = Resource(storage.result, list(op.source_dims),
                                              self._execute(body, [source], b))
        self.dead.append(op)

    def _barrier(self, op: hal.TensorBarrierOp, b: Builder) -> None:
        sources = [self._resource(v, op) for v in op.sources]
        ready = self._await_all(sources, b)
        if ready is None:
            ready = b.insert(stream.TimepointImmediateOp.build(
                result_types=[stream.TimepointType()])).result
        b.insert(stream.TimepointChainExternalOp.build(operands=[ready, op.signal]))
        for result, source in zip(op.results_, sources, strict=True):
            self.resources[result] = Resource(source.value, source.dims, source.ready,
                                              fenced=True)
        self.dead.append(op)

    def _export(self, op: hal.TensorExportOp, b: Builder) -> None:
        source = self._resource(op.source, op)
        t = op.source.type
        assert isinstance(t, TensorType)
        if source.ready is not None and not source.fenced:
            b.insert(stream.TimepointAwaitOp.build(operands=[[source.ready]]))
        exported = b.insert(stream.TensorExportOp.build(
            operands=[source.value, list(op.source_dims)],
            result_types=[hal.BufferViewType()], properties={"encoding": t}))
        op.result.replace_all_uses_with(exported.result)
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

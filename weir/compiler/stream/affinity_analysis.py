"""Places every host tensor and every piece of work on a device before the stream conversion
makes them resources and queue submissions.

The program states placement in two places only: the `iree.abi.affinity` of arguments and results
(carried by `hal.tensor.import`/`export`/`barrier`) and the target of `flow.tensor.transfer`.
Everything else follows the data forward: a dispatch runs where its first placed operand lives
(operands living elsewhere are transferred to it), its results live there too, and anything with
no placed input runs on the module's default device. Constants are not placed: they are read-only
module data, made available wherever they are consumed. Host control flow is placed region by
region, in program order, so a value defined outside a region is placed before its uses inside.

An `async.execute` region may say where its work runs (`stream.affinity`): every dispatch and
allocation in it then runs on that device, and operands living elsewhere are transferred there.
Its values live where the region's yields put them."""

from __future__ import annotations

from dataclasses import dataclass, field

from weir.compiler.devices import DeviceTable, execution_device
from weir.dialects import async_, flow, hal
from weir.compiler.host_control_flow import BRANCHES, HOST_CONTROL_FLOW, nested_blocks
from weir.ir.upstream import Block, EmptyOp, Operation, scf, SSAValue, TensorType


@dataclass
class Placement:
    # The device each placed host tensor lives on (constants are absent: they live anywhere).
    value_device: dict[SSAValue, str] = field(default_factory=dict)
    # The device whose queue runs each dispatch, transfer, barrier, export and allocation.
    op_device: dict[Operation, str] = field(default_factory=dict)

    def constant_devices(self, value: SSAValue) -> set[str]:
        """The devices a constant is consumed on."""
        return {self.op_device[u.operation] for u in value.uses if u.operation in self.op_device}


def place(block: Block, table: DeviceTable) -> Placement:
    placement = Placement()
    _place_block(block, table, placement, None)
    return placement


def _place_async(op: async_.ExecuteOp, table: DeviceTable, placement: Placement,
                 forced: str | None) -> None:
    values = placement.value_device
    affinity = op.attributes.get(async_.AFFINITY_ATTR)
    if affinity is not None:
        forced = execution_device(affinity, table)
    for operand, arg in zip(op.body_operands, op.body.block.args, strict=True):
        if operand in values:
            values[arg] = values[operand]
    _place_block(op.body.block, table, placement, forced)
    yield_op = op.body.block.last_op
    assert isinstance(yield_op, async_.YieldOp)
    for result, value in zip(op.values, yield_op.values, strict=True):
        if value in values:
            values[result] = values[value]


def _place_control_flow(op: Operation, table: DeviceTable, placement: Placement,
                        forced: str | None) -> None:
    """A tensor carried through host control flow lives on one device throughout: the device of
    its initial value (scf.for, scf.while), or of what the first region yields (scf.if,
    scf.index_switch). A value reaching a carried position from elsewhere is transferred there
    by the stream conversion."""
    default = forced or table.devices[0].name
    values = placement.value_device

    def carry(sources: list[SSAValue], targets: list[SSAValue]) -> None:
        for source, target in zip(sources, targets, strict=True):
            if isinstance(target.type, TensorType):
                values[target] = values.get(source, default)

    if isinstance(op, scf.ForOp):
        carry(list(op.iter_args), list(op.body.block.args[1:]))
        carry(list(op.iter_args), list(op.results))
        _place_block(op.body.block, table, placement, forced)
    elif isinstance(op, scf.WhileOp):
        carry(list(op.arguments), list(op.before_region.block.args))
        _place_block(op.before_region.block, table, placement, forced)
        condition = op.before_region.block.last_op
        assert isinstance(condition, scf.ConditionOp)
        carry(list(condition.args), list(op.after_region.block.args))
        carry(list(condition.args), list(op.results))
        _place_block(op.after_region.block, table, placement, forced)
    elif isinstance(op, BRANCHES):
        for block in nested_blocks(op):
            _place_block(block, table, placement, forced)
        yields = [b.last_op for b in nested_blocks(op) if isinstance(b.last_op, scf.YieldOp)]
        for i, result in enumerate(op.results):
            placed = [values[y.operands[i]] for y in yields if y.operands[i] in values]
            if isinstance(result.type, TensorType):
                values[result] = placed[0] if placed else default


def _place_block(block: Block, table: DeviceTable, placement: Placement,
                 forced: str | None) -> None:
    """`forced`: the device of the enclosing async region that names one, else None."""
    default = forced or table.devices[0].name
    values = placement.value_device
    for op in block.ops:
        device: str | None = None
        if isinstance(op, HOST_CONTROL_FLOW):
            _place_control_flow(op, table, placement, forced)
        elif isinstance(op, async_.ExecuteOp):
            _place_async(op, table, placement, forced)
        elif isinstance(op, async_.AwaitOp):
            if op.result is not None and op.operand in values:
                values[op.result] = values[op.operand]
        elif isinstance(op, hal.TensorImportOp):
            device = execution_device(op.affinity, table)
            values[op.result] = device
        elif isinstance(op, flow.TensorTransferOp):
            device = execution_device(op.target, table)
            values[op.result] = device
        elif isinstance(op, flow.DispatchOp):
            placed = [values[v] for v in op.arguments if v in values]
            device = forced or (placed[0] if placed else default)
            for r in op.results:
                values[r] = device
        elif isinstance(op, hal.TensorAliasOp):
            device = execution_device(op.affinity, table) if op.affinity is not None else \
                values.get(op.source, default)
            values[op.result] = device
        elif isinstance(op, hal.TensorBarrierOp):
            device = execution_device(op.affinity, table)
            for source, result in zip(op.sources, op.results_, strict=True):
                if source in values:
                    values[result] = values[source]
        elif isinstance(op, hal.TensorExportOp):
            device = execution_device(op.affinity, table)
        elif isinstance(op, EmptyOp):
            device = default
            values[op.tensor] = device
        if device is not None:
            placement.op_device[op] = device

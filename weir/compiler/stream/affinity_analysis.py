"""Places every host tensor and every piece of work on a device before the stream conversion
makes them resources and queue submissions.

The program states placement in two places only: the `iree.abi.affinity` of arguments and results
(carried by `hal.tensor.import`/`export`/`barrier`) and the target of `flow.tensor.transfer`.
Everything else follows the data forward: a dispatch runs where its first placed operand lives
(operands living elsewhere are transferred to it), its results live there too, and anything with
no placed input runs on the module's default device. Constants are not placed: they are read-only
module data, made available wherever they are consumed."""

from __future__ import annotations

from dataclasses import dataclass, field

from weir.compiler.devices import DeviceTable, execution_device
from weir.dialects import flow, hal
from weir.ir.upstream import Block, EmptyOp, Operation, SSAValue


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
    default = table.devices[0].name
    values = placement.value_device
    for op in block.ops:
        device: str | None = None
        if isinstance(op, hal.TensorImportOp):
            device = execution_device(op.affinity, table)
            values[op.result] = device
        elif isinstance(op, flow.TensorTransferOp):
            device = execution_device(op.target, table)
            values[op.result] = device
        elif isinstance(op, flow.DispatchOp):
            placed = [values[v] for v in op.arguments if v in values]
            device = placed[0] if placed else default
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
    return placement

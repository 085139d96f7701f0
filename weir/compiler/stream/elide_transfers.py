"""Removes transfers between devices that share memory (all local devices share the host's): the
consumer reads the producer's allocation directly, ordered by the producer's timepoint instead of
a copy's, and every allocation then records all the devices that use it
(`#hal.device.optimal<[...]>`), so a later allocator can place it where each of them can reach it.

Transfers between devices that do not share memory stay and become queue copies in the HAL; the
pass can be turned off (`--weir-stream-elide-transfers=false`) to see and test that path."""

from __future__ import annotations

from weir.compiler.devices import DeviceTable, device_names, execution_device
from weir.compiler.host_control_flow import host_blocks_innermost_first
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import stream
from weir.ir.upstream import Block, Builder, func, InsertPoint, ModuleOp, Operation, SSAValue


class ElideTransfers(Pass):
    flag = "elide-transfers"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        table = state.devices
        for fn in module.body.block.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                # Transfers inside host loops and branches too (their regions, inner first).
                blocks = host_blocks_innermost_first(fn.body.block)
                if any([self._elide(block, table) for block in blocks]):
                    for block in blocks:
                        _widen_allocations(block, table)

    def _elide(self, block: Block, table: DeviceTable) -> bool:
        elided = False
        for op in list(block.ops):
            if not isinstance(op, stream.AsyncTransferOp):
                continue
            source = execution_device(op.source_affinity, table)
            target = execution_device(op.target_affinity, table)
            if not table.shares_memory(source, target):
                continue
            ready = op.await_timepoint
            if ready is None:
                ready = Builder(InsertPoint.before(op)).insert(stream.TimepointImmediateOp.build(
                    result_types=[stream.TimepointType()])).result
            op.result.replace_all_uses_with(op.source)
            op.result_timepoint.replace_all_uses_with(ready)
            size = op.size.owner
            op.detach()
            op.erase()
            if isinstance(size, stream.TensorSizeOfOp) and not size.result.uses:
                size.detach()
                size.erase()
            elided = True
        return elided


def _users_devices(value: SSAValue, table: DeviceTable) -> set[str]:
    """The devices whose work reads or writes `value`."""
    devices: set[str] = set()
    for use in value.uses:
        user: Operation | None = use.operation
        while user is not None and not isinstance(user, stream.CmdExecuteOp):
            user = user.parent_op()
        if isinstance(user, stream.CmdExecuteOp):
            devices.add(execution_device(user.affinity, table))
        elif isinstance(use.operation, stream.TensorExportOp):
            devices.add(execution_device(use.operation.affinity, table))
        elif isinstance(use.operation, stream.AsyncTransferOp):
            devices.add(execution_device(use.operation.source_affinity, table))
    return devices


def _widen_allocations(block: Block, table: DeviceTable) -> None:
    for op in block.ops:
        if isinstance(op, stream.ResourceAllocaOp | stream.ResourceConstantOp):
            devices = _users_devices(op.result, table) | set(device_names(op.affinity))
            if devices:
                op.affinity = table.affinity(devices)

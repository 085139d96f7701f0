"""Names the program's devices in the IR before anything is placed: the module records its
default device (`stream.affinity.default`, the first `--iree-hal-target-device`), and every
affinity the program states (`iree.abi.affinity` on arguments and results, the target of
`flow.tensor.transfer`, the `stream.affinity` of an `async.execute` region) must name one of the
declared devices, so a misspelt device is an error at its position instead of a device the
runtime cannot bind."""

from __future__ import annotations

from weir.compiler.devices import DeviceTable, device_names
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import async_, flow
from weir.ir.diagnostics import error_at
from weir.ir.hal_attrs import DeviceAffinityAttr, DevicePromiseAttr
from weir.ir.upstream import ArrayAttr, Attribute, DictionaryAttr, func, ModuleOp, Operation

AFFINITY_ATTR = "iree.abi.affinity"


def abi_affinity(attrs: ArrayAttr[DictionaryAttr] | None, index: int) -> Attribute | None:
    """The `iree.abi.affinity` of argument/result `index`, if it has one."""
    if attrs is None or index >= len(attrs.data):
        return None
    return attrs.data[index].data.get(AFFINITY_ATTR)


class MaterializeTargetDevices(Pass):
    flag = "materialize-target-devices"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        table = state.devices
        module.attributes["stream.affinity.default"] = table.default
        for op in module.walk():
            if isinstance(op, func.FuncOp):
                for attrs in (op.arg_attrs, op.res_attrs):
                    for i in range(len(attrs.data) if attrs is not None else 0):
                        self._check(abi_affinity(attrs, i), op, table)
            elif isinstance(op, flow.TensorTransferOp):
                self._check(op.target, op, table)
            elif isinstance(op, async_.ExecuteOp):
                self._check(op.attributes.get(async_.AFFINITY_ATTR), op, table)

    def _check(self, affinity: Attribute | None, where: Operation, table: DeviceTable) -> None:
        if affinity is None:
            return
        if not isinstance(affinity, DevicePromiseAttr | DeviceAffinityAttr):
            raise error_at(where, f"{AFFINITY_ATTR} must be #hal.device.promise<@name>, "
                                  f"got {affinity}")
        for name in device_names(affinity):
            if table.ordinal(name) is None:
                raise error_at(where, f"device @{name} is not a target device (declared: "
                                      f"{', '.join('@' + n for n in table.names)}); add "
                                      f"--iree-hal-target-device={name}=local[N]")

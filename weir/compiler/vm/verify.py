"""Exit contract of `vm`: the module holds one `vm.module` and only VM ops (plus executables)."""

from __future__ import annotations

from weir.compiler.state import CompilationState
from weir.dialects import hal, vm
from weir.ir.diagnostics import error_at
from weir.ir.upstream import ModuleOp


def verify_vm(module: ModuleOp, state: CompilationState) -> None:
    ops = list(module.body.block.ops)
    if len(ops) != 1 or not isinstance(ops[0], vm.ModuleOp):
        raise error_at(module, "expected exactly one vm.module after the vm phase")
    for op in ops[0].body.block.ops:
        if isinstance(op, hal.ExecutableOp):
            continue
        for inner in op.walk():
            if not inner.name.startswith("vm."):
                raise error_at(inner, f"'{inner.name}' is left over after the vm phase")

"""Exit contract of `hal`: no stream op or type is left; every executable has a binary."""

from __future__ import annotations

from weir.compiler.state import CompilationState
from weir.dialects import hal, stream
from weir.ir.diagnostics import error_at
from weir.ir.upstream import ModuleOp


def verify_hal(module: ModuleOp, state: CompilationState) -> None:
    for op in module.walk():
        if op.name.startswith("stream.") or any(
            isinstance(v.type, stream.ResourceType | stream.TimepointType)
            for v in (*op.operands, *op.results)
        ):
            raise error_at(op, f"'{op.name}' is left over from the stream phase")
        if isinstance(op, hal.ExecutableOp) and op.body.block.first_op is None:
            raise error_at(op, f"executable @{op.sym_name.data} has no binary")

"""Exit contract of `stream`: no tensor value and no async region is left on the host."""

from __future__ import annotations

from weir.compiler.state import CompilationState
from weir.ir.diagnostics import error_at
from weir.ir.upstream import func, ModuleOp, TensorType


def verify_stream(module: ModuleOp, state: CompilationState) -> None:
    for fn in module.body.block.ops:
        if not isinstance(fn, func.FuncOp):
            continue
        for op in fn.walk():
            if op.name.startswith("async."):
                raise error_at(op, f"'{op.name}' is left after the stream phase (async regions "
                                   "become timepoints there)")
            if any(isinstance(v.type, TensorType) for v in (*op.operands, *op.results)):
                raise error_at(op, f"'{op.name}' still holds a tensor after the stream phase")

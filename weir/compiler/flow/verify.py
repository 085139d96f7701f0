"""Exit contract of `flow`: outside executables, no tensor math is left on the host."""

from __future__ import annotations

from weir.compiler.state import CompilationState
from weir.ir.diagnostics import error_at
from weir.ir.upstream import func, ModuleOp, TensorType

# What the host may still do with tensors after `flow`.
HOST_TENSOR_OPS = frozenset(
    {"hal.tensor.import", "hal.tensor.export", "hal.tensor.alias", "hal.tensor.barrier",
     "flow.dispatch", "tensor.empty", "tensor.dim", "tensor.extract",
     "arith.constant", "func.return", "func.call", "flow.tensor.transfer",
     "scf.for", "scf.if", "scf.index_switch", "scf.while", "scf.yield", "scf.condition",
     # Values in and out of async regions, which the stream phase turns into timepoints.
     "async.yield", "async.await",
     # Metadata only: the stream phase aliases the source's resource with the new shape.
     "tensor.collapse_shape", "tensor.expand_shape", "tensor.reshape", "tensor.cast"}
)


def verify_flow(module: ModuleOp, state: CompilationState) -> None:
    for fn in module.body.block.ops:
        if not isinstance(fn, func.FuncOp):
            continue
        for op in fn.walk():
            touches_tensor = any(isinstance(v.type, TensorType)
                                 for v in (*op.operands, *op.results))
            if touches_tensor and op.name not in HOST_TENSOR_OPS:
                raise error_at(op, f"'{op.name}' on tensors is left on the host after the flow "
                                   "phase (it was not placed in a dispatch)")

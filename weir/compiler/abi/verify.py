"""Exit contract of `abi`: no tensor crosses a public function or an import boundary."""

from __future__ import annotations

from weir.compiler.state import CompilationState
from weir.ir.diagnostics import error_at
from weir.ir.upstream import func, ModuleOp, TensorType


def verify_abi(module: ModuleOp, state: CompilationState) -> None:
    for fn in module.body.block.ops:
        if not isinstance(fn, func.FuncOp):
            continue
        public = fn.sym_visibility is None or fn.sym_visibility.data == "public"
        if not public and fn.body.blocks:  # a private body is internal: tensors may stay
            continue
        for t in (*fn.function_type.inputs.data, *fn.function_type.outputs.data):
            if isinstance(t, TensorType):
                raise error_at(fn, f"@{fn.sym_name.data} still has a tensor in its signature "
                                   "after the abi phase")

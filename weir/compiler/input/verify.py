"""Exit contract of `input`: a module of functions; every public function has a body."""

from __future__ import annotations

from weir.compiler.state import CompilationState
from weir.ir.diagnostics import error_at
from weir.ir.upstream import func, ModuleOp


def verify_input(module: ModuleOp, state: CompilationState) -> None:
    for op in module.body.block.ops:
        if not isinstance(op, func.FuncOp):
            raise error_at(op, f"expected only func.func at module level, found '{op.name}'")
        if op.sym_visibility is None or op.sym_visibility.data == "public":
            if not op.body.blocks:
                raise error_at(op, f"public function @{op.sym_name.data} has no body")
        elif not op.body.blocks and "." not in op.sym_name.data:
            raise error_at(
                op,
                f"private declaration @{op.sym_name.data} must be named 'module.function' to be "
                "imported from another module",
            )

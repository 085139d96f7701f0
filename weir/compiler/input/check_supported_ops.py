"""Rejects, at its location, every op weir cannot compile yet, so no unsupported op reaches a
later phase (where it would fail far from the user's source) or, worse, the runtime."""

from __future__ import annotations

from weir.compiler.input.supported_ops import is_supported
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir.diagnostics import error_at
from weir.ir.upstream import ModuleOp


class CheckSupportedOps(Pass):
    flag = "check-supported-ops"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in module.walk():
            if op is module:
                continue
            if not is_supported(op.name):
                raise error_at(op, f"'{op.name}' is not supported")

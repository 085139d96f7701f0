"""Rejects, at its location, every op weir cannot compile yet, and every value of a type it cannot
compile, so neither reaches a later phase (where it would fail far from the user's source) or,
worse, the runtime."""

from __future__ import annotations

from weir.compiler.input.strip_assertions import in_dispatch_body
from weir.compiler.input.supported_ops import is_supported, unsupported_form
from weir.compiler.input.supported_types import unsupported_type
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir.diagnostics import error_at
from weir.ir.upstream import Attribute, ModuleOp, Operation, cf, func


class CheckSupportedOps(Pass):
    flag = "check-supported-ops"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in module.walk():
            if op is module:
                continue
            # A cf.assert in a linalg body is a run-time check of its dispatch (targets lower it).
            kept_check = isinstance(op, cf.AssertOp) and in_dispatch_body(op)
            if not kept_check and not is_supported(op.name):
                raise error_at(op, f"'{op.name}' is not supported")
            if (why := unsupported_form(op)) is not None:
                raise error_at(op, why)
            for t in _value_types(op):
                if (why := unsupported_type(t)) is not None:
                    raise error_at(op, why)


def _value_types(op: Operation) -> list[Attribute]:
    """The types of the values `op` defines or uses (a function: its signature)."""
    types = [v.type for v in (*op.operands, *op.results)]
    types += [a.type for region in op.regions for block in region.blocks for a in block.args]
    if isinstance(op, func.FuncOp):
        types += [*op.function_type.inputs.data, *op.function_type.outputs.data]
    return types

"""Inlines calls to functions defined in the same module, so dispatch formation sees whole data
flow (the ABI stubs call private bodies; users call helpers). Recursion cannot be inlined and is
reported at the call."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir.diagnostics import error_at
from weir.ir.upstream import func, ModuleOp, SSAValue

_MAX_DEPTH = 64


class InlineInternalCalls(Pass):
    flag = "inline-internal-calls"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        defined = {
            fn.sym_name.data: fn
            for fn in module.body.block.ops
            if isinstance(fn, func.FuncOp) and fn.body.blocks
        }
        for _ in range(_MAX_DEPTH):
            calls = [op for op in module.walk()
                     if isinstance(op, func.CallOp) and op.callee.root_reference.data in defined]
            if not calls:
                break
            for call in calls:
                self._inline(call, defined[call.callee.root_reference.data])
        else:
            raise error_at(calls[0], "recursive calls cannot be compiled (inlining did not end)")
        for fn in defined.values():
            if fn.sym_visibility is not None and fn.sym_visibility.data == "private":
                fn.detach()
                fn.erase()

    def _inline(self, call: func.CallOp, callee: func.FuncOp) -> None:
        if len(callee.body.blocks) != 1:
            raise error_at(call, f"cannot inline @{callee.sym_name.data}: it has several blocks")
        block = callee.body.block
        mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, call.arguments, strict=True))
        parent = call.parent_block()
        assert parent is not None
        for op in block.ops:
            if isinstance(op, func.ReturnOp):
                for old, new in zip(call.results, op.arguments, strict=True):
                    old.replace_all_uses_with(mapping.get(new, new))
                break
            parent.insert_op_before(op.clone(mapping), call)
        call.detach()
        call.erase()

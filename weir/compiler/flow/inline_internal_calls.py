"""Inlines calls to functions defined in the same module, so dispatch formation sees whole data
flow (the ABI stubs call private bodies; users call helpers), wherever the call sits: at the top
of a body or inside an `scf` region. A function called several times is cloned at every call.

A call to another exported function names its ABI stub (buffer views in and out) while passing
tensors: it is redirected to the stub's private tensor body, which is what the caller means.

Recursion cannot be inlined. It is found up front on the call graph and reported at the call that
closes the cycle, rather than by inlining until some depth gives up (which, with a function that
calls itself twice, would first grow the program exponentially)."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir.diagnostics import error_at
from weir.ir.upstream import func, ModuleOp, SSAValue, SymbolRefAttr


def _stub_body(stub: func.FuncOp, defined: dict[str, func.FuncOp]) -> str | None:
    """The private function an ABI stub forwards to (the one internal call in its body)."""
    if "iree.abi.stub" not in stub.attributes:
        return None
    for op in stub.walk():
        if isinstance(op, func.CallOp) and op.callee.root_reference.data in defined:
            return op.callee.root_reference.data
    return None


def _callee(call: func.CallOp, defined: dict[str, func.FuncOp]) -> str | None:
    """The function `call` inlines, after redirecting tensor calls of a stub to its body."""
    name = call.callee.root_reference.data
    fn = defined.get(name)
    if fn is None:
        return None
    if list(fn.function_type.inputs.data) != [a.type for a in call.arguments]:
        body = _stub_body(fn, defined)
        if body is not None:
            call.callee = SymbolRefAttr(body)
            return body
    return name


class InlineInternalCalls(Pass):
    flag = "inline-internal-calls"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        defined = {
            fn.sym_name.data: fn
            for fn in module.body.block.ops
            if isinstance(fn, func.FuncOp) and fn.body.blocks
        }
        calls = {name: [c for c in fn.walk() if isinstance(c, func.CallOp)
                        and _callee(c, defined) is not None]
                 for name, fn in defined.items()}
        _reject_recursion(calls)
        # The call graph is acyclic: inlining ends after at most one round per function.
        while True:
            pending = [op for op in module.walk()
                       if isinstance(op, func.CallOp) and op.callee.root_reference.data in defined]
            if not pending:
                break
            for call in pending:
                name = _callee(call, defined)
                assert name is not None
                self._inline(call, defined[name])
        for fn in defined.values():
            if fn.sym_visibility is not None and fn.sym_visibility.data == "private":
                fn.detach()
                fn.erase()

    def _inline(self, call: func.CallOp, callee: func.FuncOp) -> None:
        if len(callee.body.blocks) != 1:
            raise error_at(call, f"inlining @{callee.sym_name.data}, a function of several "
                                 "blocks, is not supported (use scf ops for control flow)")
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


def _reject_recursion(calls: dict[str, list[func.CallOp]]) -> None:
    """Raises at a call on a cycle of the call graph (depth-first, white/grey/black)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str) -> None:
        state[name] = 1
        for call in calls[name]:
            callee = call.callee.root_reference.data
            if state.get(callee) == 1:
                raise error_at(call, f"recursive call to @{callee} is not supported (calls "
                                     "within a module are inlined)")
            if callee not in state:
                visit(callee)
        state[name] = 2

    for name in calls:
        if name not in state:
            visit(name)

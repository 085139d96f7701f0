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
from weir.ir.upstream import func, ModuleOp, Operation, SSAValue, SymbolRefAttr


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
        # An exported function's tensor body is private and renamed; messages use the name the
        # source gave it, which is its stub's.
        source_names = {body: name for name, fn in defined.items()
                        if (body := _stub_body(fn, defined)) is not None}
        calls = {name: _calls_in(fn, defined) for name, fn in defined.items()}
        _reject_recursion(calls, source_names)
        # Only bodies that stay are inlined into (private ones go once nothing calls them), and
        # the calls each copied body brings along join the work list: every op is copied once per
        # call that reaches it and nothing is walked twice, however long a chain of helpers is.
        pending = [c for name, fn in defined.items() if not _is_private(fn) for c in calls[name]]
        while pending:
            call = pending.pop()
            pending += self._inline(call, defined[call.callee.root_reference.data], defined)
        for fn in defined.values():
            if _is_private(fn):
                fn.detach()
                fn.erase()

    def _inline(self, call: func.CallOp, callee: func.FuncOp,
                defined: dict[str, func.FuncOp]) -> list[func.CallOp]:
        """Replaces `call` by a copy of `callee`'s body; the calls inside that copy."""
        if len(callee.body.blocks) != 1:
            raise error_at(call, f"inlining @{callee.sym_name.data}, a function of several "
                                 "blocks, is not supported (use scf ops for control flow)")
        block = callee.body.block
        mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, call.arguments, strict=True))
        parent = call.parent_block()
        assert parent is not None
        calls: list[func.CallOp] = []
        for op in block.ops:
            if isinstance(op, func.ReturnOp):
                for old, new in zip(call.results, op.arguments, strict=True):
                    old.replace_all_uses_with(mapping.get(new, new))
                break
            copy = op.clone(mapping)
            parent.insert_op_before(copy, call)
            calls += _calls_in(copy, defined)
        call.detach()
        call.erase()
        return calls


def _is_private(fn: func.FuncOp) -> bool:
    return fn.sym_visibility is not None and fn.sym_visibility.data == "private"


def _calls_in(op: Operation, defined: dict[str, func.FuncOp]) -> list[func.CallOp]:
    """The calls in `op` (itself included) of functions this pass inlines."""
    return [c for c in op.walk() if isinstance(c, func.CallOp) and _callee(c, defined) is not None]


def _reject_recursion(calls: dict[str, list[func.CallOp]], source_names: dict[str, str]) -> None:
    """Raises at a call that closes a cycle of the call graph (depth first, white/grey/black, on
    a stack of its own: a chain of helpers may be as long as the program)."""
    on_path, done = 1, 2
    state: dict[str, int] = {}
    for root in calls:
        if root in state:
            continue
        state[root] = on_path
        path = [iter(calls[root])]
        names = [root]
        while path:
            call = next(path[-1], None)
            if call is None:
                path.pop()
                state[names.pop()] = done
                continue
            callee = call.callee.root_reference.data
            if state.get(callee) == on_path:
                raise error_at(call, f"recursive call to @{source_names.get(callee, callee)} is "
                                     "not supported (calls within a module are inlined)")
            if callee not in state:
                state[callee] = on_path
                path.append(iter(calls[callee]))
                names.append(callee)

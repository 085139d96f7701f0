"""Module verification that reports *which* op failed, at its source location.

Why not just `module.verify()`: it raises a bare VerifyException (after printing the whole
module into a note) without saying which op is wrong. Verifying op by op, children first
(the order xDSL uses), lets us attach the failing op's `file:line:col`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation
from xdsl.traits import NoTerminator, SymbolTable
from xdsl.utils.exceptions import VerifyException

from weir.errors import CompileError
from weir.ir.diagnostics import error_at, location_of, one_line
from weir.ir.dominance import DefinitionOrder, misplaced_use
from weir.ir.op_checks import check_op
from weir.ir.window_ops import check_window_op


def _check_empty_blocks(op: Operation) -> None:
    """The one check `Block.verify` adds that `op.verify(verify_nested_ops=False)` skips."""
    for region in op.regions:
        if len(region.blocks) == 1 and region.block.first_op is None and not op.has_trait(NoTerminator):
            raise VerifyException(f"Operation {op.name} contains empty block in single-block region that expects at least a terminator")


# Terminators xDSL 0.74 accepts under any op (it checks `scf.yield` and `func.return`, not these):
# a function ending in `linalg.yield` reached the compiler's passes and failed there.
_TERMINATOR_PARENTS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "linalg.yield": ("a linalg op", lambda parent: parent.startswith("linalg.")),
    "tensor.yield": ("'tensor.pad' or 'tensor.generate'",
                     lambda parent: parent in ("tensor.pad", "tensor.generate")),
}


def _check_terminator_parent(op: Operation) -> None:
    rule = _TERMINATOR_PARENTS.get(op.name)
    if rule is None:
        return
    parent = op.parent_op()
    expected, accepts = rule
    if parent is None or not accepts(parent.name):
        got = f"'{parent.name}'" if parent is not None else "none"
        raise VerifyException(f"expects its parent op to be {expected}, got {got}")


def _check_unique_symbols(op: Operation) -> None:
    """xDSL reports a symbol defined twice at the module, naming neither definition; MLIR
    reports it at the second one, pointing at the first."""
    if op.get_trait(SymbolTable) is None:
        return
    seen: dict[str, Operation] = {}
    for region in op.regions:
        for child in region.ops:
            name = child.properties.get("sym_name", child.attributes.get("sym_name"))
            if not isinstance(name, StringAttr):
                continue
            first = seen.setdefault(name.data, child)
            if first is not child:
                _, line, col = location_of(first)
                raise error_at(child, f"redefinition of symbol @{name.data} (first defined at "
                                      f"{line}:{col})")


def _check_uses(op: Operation, order: DefinitionOrder) -> None:
    for i in range(len(op.operands)):
        if (problem := misplaced_use(op, i, order)) is not None:
            raise error_at(op, problem)


def verify_module(module: Operation) -> None:
    """Raise CompileError at the first op (in post-order) that fails to verify."""
    order = DefinitionOrder()
    for op in module.walk(region_first=True):
        _check_uses(op, order)
        try:
            _check_empty_blocks(op)
            _check_unique_symbols(op)
            _check_terminator_parent(op)
            check_window_op(op)  # before xDSL's own checks, whose messages name no sizes
            check_op(op)  # what MLIR checks and xDSL does not (shapes, indices, yields)
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            raise error_at(op, f"'{op.name}' op {one_line(str(e))}") from e
        except CompileError:
            raise
        except Exception as e:  # a verifier crashing on user input still names the op
            raise error_at(op, f"'{op.name}' op failed to verify: {one_line(str(e)) or type(e).__name__}") from e

"""Removes the results of a multi-result `linalg.generic` that nothing reads, with their inits
and the part of the body that only they needed.

Why: exporters state a softmax's row maximum as torch's `max.dim`, one reduction yielding the
maximum AND its index, and then read only the maximum. Dispatched as written, the index is
computed (an index cast, a compare and a select per element), stored, and its init filled, on
every call, for nothing. Kept only where the dropped results' accumulators feed nothing that
stays: a result whose block argument a kept result reads is still needed. Only bodies of
arith, math and linalg.index ops are pruned (anything else may have effects of its own)."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir.upstream import (
    EmptyOp,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
)


class DropUnusedResults(Pass):
    flag = "drop-unused-results"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            if isinstance(op, linalg.GenericOp) and len(op.results) > 1 and \
                    any(r.uses for r in op.results) and not all(r.uses for r in op.results):
                _drop(op)


def _prunable(op: Operation) -> bool:
    dialect = op.name.split(".")[0]
    return not op.regions and (dialect in ("arith", "math") or isinstance(op, linalg.IndexOp))


def _needed(block_ops: list[Operation], roots: list[SSAValue]) -> set[SSAValue]:
    """Every value of the body that `roots` are computed from, and the results of the ops that
    cannot be pruned (with what they read)."""
    needed: set[SSAValue] = set(roots)
    for body_op in reversed(block_ops):
        if not _prunable(body_op) or any(r in needed for r in body_op.results):
            needed.update(body_op.results)
            needed.update(body_op.operands)
    return needed


def _drop(op: linalg.GenericOp) -> None:
    block = op.body.block
    yield_op = block.last_op
    if not isinstance(yield_op, linalg.YieldOp):
        return
    body_ops = [o for o in block.ops if o is not yield_op]
    nin = len(op.inputs)
    unused = [i for i, r in enumerate(op.results) if not r.uses]
    used = [i for i in range(len(op.results)) if i not in unused]
    needed = _needed(body_ops, [yield_op.operands[i] for i in used])
    # A result whose accumulator a kept result reads stays (its value is then still computed).
    dropped = [i for i in unused if block.args[nin + i] not in needed]
    if not dropped:
        return
    kept = [i for i in range(len(op.results)) if i not in dropped]
    yields = [yield_op.operands[i] for i in kept]
    needed = _needed(body_ops, yields)
    yield_op.detach()
    yield_op.erase()
    block.add_op(linalg.YieldOp(*yields))
    for body_op in reversed(body_ops):
        if _prunable(body_op) and not any(r in needed for r in body_op.results):
            body_op.detach()
            body_op.erase()
    for i in reversed(dropped):
        block.erase_arg(block.args[nin + i])
    maps = list(op.indexing_maps.data)
    inits = [op.outputs[i] for i in dropped]
    rewritten = linalg.GenericOp(
        list(op.inputs), [op.outputs[i] for i in kept], op.detach_region(op.body),
        maps[:nin] + [maps[nin + i] for i in kept], op.iterator_types,
        [op.results[i].type for i in kept])
    parent = op.parent_block()
    assert parent is not None
    parent.insert_op_before(rewritten, op)
    for new, i in zip(rewritten.results, kept):
        op.results[i].replace_all_uses_with(new)
    op.detach()
    op.erase()
    _erase_unused([init.owner for init in inits])


def _erase_unused(ops: list[object]) -> None:
    """The fills and empty tensors only the dropped results were written into."""
    pending = [o for o in ops if isinstance(o, linalg.FillOp | EmptyOp)]
    while pending:
        init = pending.pop()
        if init.parent is None or any(r.uses for r in init.results):
            continue
        made_from = [v.owner for v in init.operands if isinstance(v.owner, linalg.FillOp | EmptyOp)]
        init.detach()
        init.erase()
        pending.extend(made_from)

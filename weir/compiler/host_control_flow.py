"""Structured control flow on the host (`scf.for`, `scf.if`, `scf.index_switch`, `scf.while`)
as the host-side converters of flow, stream and hal see it.

Why keep it structured until the vm phase: every converter between input and vm rewrites values
one to one or one to many (a tensor becomes a resource plus its dynamic dims, a resource becomes a
buffer). With structured ops that rewrite is local: each converter walks into the regions, maps
values defined outside a region into it for free (SSA dominance), and re-types only the values
that cross a region boundary: the carried operands, the entry-block arguments and the op's
results. Branches between blocks would make every converter a data-flow analysis over a CFG.

This module is the one place that knows which operands of which op are carried into which block
arguments and out to which results, so the converters share that knowledge instead of each
spelling out scf.for/if/index_switch/while."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from weir.dialects import async_
from weir.ir.upstream import Attribute, Block, BlockArgument, Operation, scf, SSAValue

HOST_CONTROL_FLOW: tuple[type[Operation], ...] = (
    scf.ForOp, scf.IfOp, scf.IndexSwitchOp, scf.WhileOp)
# Ops whose regions hold host code: control flow, and `async.execute` regions until the stream
# phase gives them their timepoints (stream/async_regions.py).
HOST_REGIONS: tuple[type[Operation], ...] = (*HOST_CONTROL_FLOW, async_.ExecuteOp)
# Ops that run one of their regions once and yield its values as their results.
BRANCHES: tuple[type[Operation], ...] = (scf.IfOp, scf.IndexSwitchOp)
REGION_EXITS: tuple[type[Operation], ...] = (scf.YieldOp, scf.ConditionOp)


def nested_blocks(op: Operation) -> list[Block]:
    return [block for region in op.regions for block in region.blocks]


def host_blocks_innermost_first(block: Block) -> list[Block]:
    """`block` and every block nested in it through host regions, each after the blocks nested
    in it: a pass that forms or cleans up per block then sees inner blocks first."""
    out: list[Block] = []
    for op in block.ops:
        if isinstance(op, HOST_REGIONS):
            for inner in nested_blocks(op):
                out.extend(host_blocks_innermost_first(inner))
    out.append(block)
    return out


def carried_operands(op: Operation) -> list[SSAValue]:
    """The operands `op` hands to its regions' entry blocks (not bounds or conditions)."""
    if isinstance(op, scf.ForOp):
        return list(op.iter_args)
    if isinstance(op, scf.WhileOp):
        return list(op.arguments)
    return []


def carried_arguments(op: Operation) -> list[tuple[Block, list[BlockArgument]]]:
    """Per entry block of `op`, the block arguments that carry values (not the induction
    variable): scf.for's iteration arguments, scf.while's before and after arguments."""
    if isinstance(op, scf.ForOp):
        return [(op.body.block, list(op.body.block.args[1:]))]
    if isinstance(op, scf.WhileOp):
        return [(op.before_region.block, list(op.before_region.block.args)),
                (op.after_region.block, list(op.after_region.block.args))]
    return []


def exit_targets(exit_op: Operation) -> list[SSAValue]:
    """The values that receive what a region exit passes on, one per passed operand: the
    iteration arguments for scf.for's yield, the results for scf.if's, the before-region
    arguments for scf.while's yield, the after-region arguments for scf.condition (the op's
    results receive the same values and have the same types)."""
    parent = exit_op.parent_op()
    if isinstance(parent, scf.ForOp):
        return list(parent.body.block.args[1:])
    if isinstance(parent, BRANCHES):
        return list(parent.results)
    if isinstance(parent, scf.WhileOp):
        if isinstance(exit_op, scf.ConditionOp):
            return list(parent.after_region.block.args)
        return list(parent.before_region.block.args)
    raise AssertionError(f"{exit_op.name} outside host control flow")


def exit_values(exit_op: Operation) -> list[SSAValue]:
    """What a region exit passes on (scf.condition's condition is not passed on)."""
    if isinstance(exit_op, scf.ConditionOp):
        return list(exit_op.args)
    return list(exit_op.operands)


def rebuild_exit(exit_op: Operation, values: Sequence[SSAValue]) -> Operation:
    """A new region exit like `exit_op` passing `values`, inserted before it."""
    if isinstance(exit_op, scf.ConditionOp):
        new: Operation = scf.ConditionOp(exit_op.condition, *values)
    else:
        new = scf.YieldOp(*values)
    block = exit_op.parent_block()
    assert block is not None
    block.insert_op_before(new, exit_op)
    return new


def rebuild(op: Operation, carried: Sequence[SSAValue],
            result_types: Sequence[Attribute]) -> Operation:
    """A new op of `op`'s kind with `carried` in place of its carried operands and the given
    result types, inserted before `op`; `op`'s regions move into it (so `op` is left empty)."""
    if isinstance(op, scf.ForOp):
        new: Operation = scf.ForOp(op.lb, op.ub, op.step, carried, op.detach_region(op.body))
    elif isinstance(op, scf.IfOp):
        then_region, else_region = op.true_region, op.false_region  # before detaching shifts
        new = scf.IfOp(op.cond, result_types, op.detach_region(then_region),
                       op.detach_region(else_region))
    elif isinstance(op, scf.IndexSwitchOp):
        default, cases = op.default_region, list(op.case_regions)
        new = scf.IndexSwitchOp(op.arg, op.cases, op.detach_region(default),
                                [op.detach_region(r) for r in cases], result_types)
    elif isinstance(op, scf.WhileOp):
        before, after = op.before_region, op.after_region
        new = scf.WhileOp(carried, result_types, op.detach_region(before),
                          op.detach_region(after))
    else:
        raise AssertionError(f"{op.name} is not host control flow")
    block = op.parent_block()
    assert block is not None
    block.insert_op_before(new, op)
    return new


def expand_arguments(block: Block, args: Sequence[BlockArgument],
                     expand: Callable[[BlockArgument], list[Attribute] | None]
                     ) -> dict[BlockArgument, list[BlockArgument]]:
    """Gives each of `args` for which `expand` returns types new arguments of those types right
    after it, and returns them per old argument. The old arguments stay (their users still need
    converting); the caller erases them with `erase_arguments` once those users are gone."""
    out: dict[BlockArgument, list[BlockArgument]] = {}
    for arg in args:
        types = expand(arg)
        if types is None:
            continue
        out[arg] = [block.insert_arg(t, arg.index + 1 + i) for i, t in enumerate(types)]
    return out


def erase_arguments(args: Sequence[BlockArgument]) -> None:
    for arg in args:
        block = arg.block
        block.erase_arg(arg)

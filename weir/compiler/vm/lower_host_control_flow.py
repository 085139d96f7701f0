"""Lowers the host's structured control flow (`scf.for`, `scf.if`, `scf.index_switch`,
`scf.while`) to blocks and branches (`cf.br`, `cf.cond_br`), which the VM conversion maps one to
one onto the VM's Branch and CondBranch instructions; the runtime then runs each function's
blocks as one translated Python function, so a host loop costs a Python loop iteration, not an
interpreter dispatch per op.

Why here, at the start of the vm phase, and not earlier: every phase before this one rewrites
values (tensors into resources, resources into buffers), which is a local rewrite over nested
regions but would be a data-flow problem over a CFG. By now the host program only holds scalars
and runtime references, which cross branches as block arguments exactly as they are.

Each op becomes, with `cont` the rest of its block (taking the op's results as arguments):

    scf.for:    br header(lb, inits)
                header(iv, carried): cond_br (iv < ub), body(iv, carried), cont(carried)
                body: ...; yield v -> br header(iv + step, v)
    scf.if:     cond_br c, then, else (or cont when there is no else);  yield v -> br cont(v)
    scf.index_switch: one block per case testing (arg == case), the last test falling through
                to the default region; yield v -> br cont(v)
    scf.while:  br before(inits)
                before: ...; scf.condition(c) v -> cond_br c, after(v), cont(v)
                after: ...; yield v -> br before(v)

    cf.assert:  cond_br c, cont, fail;  fail: vm.fail "message"  (host checks the stream phase
                adds, e.g. a reshape's element count when a size is dynamic)
    util.assert_eq a, b:  c = (a == b), then as cf.assert, with fail: vm.fail "message", a, b
                (the dynamic size checks of the input phase, which name both sizes)

Ops are lowered outermost first: an op's regions each hold one block until the op itself is
lowered, so the region's terminator is always its block's last op."""

from __future__ import annotations

from weir.compiler.host_control_flow import HOST_CONTROL_FLOW
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import util, vm
from weir.ir.upstream import (
    arith,
    Block,
    cf,
    func,
    IndexType,
    IntegerAttr,
    ModuleOp,
    Operation,
    Region,
    scf,
    SSAValue,
)


def _split_after(op: Operation) -> Block:
    """Moves the ops after `op` into a new block inserted after `op`'s block; the new block takes
    `op`'s results as arguments and stands for them from now on."""
    block = op.parent_block()
    region = block.parent if block is not None else None
    assert block is not None and isinstance(region, Region)
    cont = Block(arg_types=[r.type for r in op.results])
    region.insert_block_after(cont, block)
    for later in list(block.ops)[block.get_operation_index(op) + 1:]:
        later.detach()
        cont.add_op(later)
    for result, arg in zip(op.results, cont.args, strict=True):
        result.replace_all_uses_with(arg)
    return cont


def _take_block(region: Region, before: Block) -> Block:
    """Moves the one block of an op's region in front of `before` in the enclosing region."""
    block = region.block
    region.detach_block(block)
    parent = before.parent
    assert parent is not None
    parent.insert_block_before(block, before)
    return block


def _replace_terminator(block: Block, new: Operation) -> None:
    old = block.last_op
    assert old is not None
    block.insert_op_before(new, old)
    old.detach()
    old.erase()


def _lower_for(op: scf.ForOp, cont: Block) -> None:
    header = Block(arg_types=[arg.type for arg in op.body.block.args])
    region = cont.parent
    assert region is not None
    region.insert_block_before(header, cont)
    body = _take_block(op.body, cont)
    iv, *carried = header.args
    below = arith.CmpiOp(iv, op.ub, "slt")
    header.add_ops([below, cf.ConditionalBranchOp(below, body, [iv, *carried], cont, carried)])
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    step = arith.AddiOp(body.args[0], op.step)
    body.insert_op_before(step, yielded)
    _replace_terminator(body, cf.BranchOp(header, step, *yielded.operands))
    _branch_from(op, cf.BranchOp(header, op.lb, *op.iter_args))


def _lower_if(op: scf.IfOp, cont: Block) -> None:
    then_block = _take_block(op.true_region, cont)
    else_block = _take_block(op.false_region, cont) if op.false_region.blocks else cont
    for block in (then_block, else_block):
        if block is not cont:
            yielded = block.last_op
            assert isinstance(yielded, scf.YieldOp)
            _replace_terminator(block, cf.BranchOp(cont, *yielded.operands))
    _branch_from(op, cf.ConditionalBranchOp(op.cond, then_block, [], else_block, []))


def _lower_switch(op: scf.IndexSwitchOp, cont: Block) -> None:
    default_region, case_regions = op.default_region, list(op.case_regions)
    default = _take_block(default_region, cont)
    cases = [_take_block(r, cont) for r in case_regions]
    for block in (default, *cases):
        yielded = block.last_op
        assert isinstance(yielded, scf.YieldOp)
        _replace_terminator(block, cf.BranchOp(cont, *yielded.operands))
    # One test per case, in order; the last falls through to the default region.
    target = default
    for value, case in reversed(list(zip(op.cases.iter_values(), cases, strict=True))):
        test = Block()
        label = arith.ConstantOp(IntegerAttr(value, IndexType()))
        equal = arith.CmpiOp(op.arg, label, "eq")
        test.add_ops([label, equal, cf.ConditionalBranchOp(equal, case, [], target, [])])
        region = default.parent
        assert region is not None
        region.insert_block_before(test, target)
        target = test
    _branch_from(op, cf.BranchOp(target))


def _lower_while(op: scf.WhileOp, cont: Block) -> None:
    before = _take_block(op.before_region, cont)
    after = _take_block(op.after_region, cont)
    condition = before.last_op
    assert isinstance(condition, scf.ConditionOp)
    args: list[SSAValue] = list(condition.args)
    _replace_terminator(before, cf.ConditionalBranchOp(condition.condition, after, args, cont,
                                                       args))
    yielded = after.last_op
    assert isinstance(yielded, scf.YieldOp)
    _replace_terminator(after, cf.BranchOp(before, *yielded.operands))
    _branch_from(op, cf.BranchOp(before, *op.arguments))


def _branch_from(op: Operation, branch: Operation) -> None:
    """Ends `op`'s block with `branch` in place of `op` (the ops after it have moved on)."""
    block = op.parent_block()
    assert block is not None
    block.insert_op_before(branch, op)
    op.detach()
    op.erase()


def _lower_assert(op: cf.AssertOp | util.AssertEqOp, cont: Block) -> None:
    fail = Block()
    if isinstance(op, util.AssertEqOp):
        same = arith.CmpiOp(op.lhs, op.rhs, "eq")
        block = op.parent_block()
        assert block is not None
        block.insert_op_before(same, op)
        condition, text, values = same.result, op.message, [op.lhs, op.rhs]
    else:
        condition, text, values = op.arg, op.msg, []
    message = vm.ConstOp.build(properties={"value": text}, result_types=[vm.StrType()])
    fail.add_ops([message, vm.FailOp.build(operands=[message.result, values])])
    region = cont.parent
    assert region is not None
    region.insert_block_after(fail, cont)
    _branch_from(op, cf.ConditionalBranchOp(condition, cont, [], fail, []))


def _first_structured(fn: func.FuncOp) -> Operation | None:
    for block in fn.body.blocks:
        for op in block.ops:
            if isinstance(op, (*HOST_CONTROL_FLOW, cf.AssertOp, util.AssertEqOp)):
                return op
    return None


class LowerHostControlFlow(Pass):
    flag = "lower-host-control-flow"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for fn in module.body.block.ops:
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            while (op := _first_structured(fn)) is not None:
                cont = _split_after(op)
                if isinstance(op, scf.ForOp):
                    _lower_for(op, cont)
                elif isinstance(op, scf.IfOp):
                    _lower_if(op, cont)
                elif isinstance(op, scf.IndexSwitchOp):
                    _lower_switch(op, cont)
                elif isinstance(op, cf.AssertOp | util.AssertEqOp):
                    _lower_assert(op, cont)
                else:
                    assert isinstance(op, scf.WhileOp)
                    _lower_while(op, cont)

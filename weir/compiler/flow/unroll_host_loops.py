"""Unrolls an `scf.for` on the host whose bounds and step are constants, when it runs at most
MAX_TRIPS steps and its unrolled body stays under MAX_UNROLLED_OPS ops: each step's ops in
order, its induction variable a constant, what it carries passed from one copy to the next.

Why: a loop stays on the host, and the host records each step's dispatches again (their push
constants, the step's index, change from step to step), then submits them: an ONNX LSTM, whose
import keeps the recurrence as two loops of 16 steps, spent 0.5 ms of host work per step, 20x
the kernels'. Unrolled, the steps' slices are static and their dispatches join one command
buffer recorded once, as the same LSTM exported from torch (unrolled by its tracer) runs.
The index arithmetic of each step (casts, comparisons, selects, clamps of the step's constant
index) is folded as it is copied, so the step's slices and push constants are constants. Longer
loops, and loops whose bounds are only known at run time, stay loops. Inner loops are unrolled
first, so a nest of short loops unrolls whole."""

from __future__ import annotations

from weir.compiler.codegen.fold_scalars import fold
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir.op_checks.common import constant_int
from weir.ir.upstream import (
    arith,
    Builder,
    IndexType,
    InsertPoint,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Operation,
    scf,
    SSAValue,
)

# Steps a loop may have to be unrolled.
MAX_TRIPS = 64
# Ops its unrolled body may hold (steps x ops per step).
MAX_UNROLLED_OPS = 8192


class UnrollHostLoops(Pass):
    flag = "unroll-host-loops"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        # Post-order: a loop nested in another is unrolled before the loop holding it.
        for op in reversed(list(module.walk())):
            if isinstance(op, scf.ForOp) and op.parent is not None:
                trips = _trip_count(op)
                if trips is not None and trips <= MAX_TRIPS and \
                        trips * sum(1 for _ in op.body.walk()) <= MAX_UNROLLED_OPS:
                    _unroll(op, trips)


def _folded(op: Operation) -> arith.ConstantOp | None:
    """The integer constant `op` computes when all its operands are constants."""
    if len(op.results) != 1 or op.regions or not op.operands or \
            not isinstance(op.results[0].type, IndexType | IntegerType):
        return None
    operands = [constant_int(v) for v in op.operands]
    if any(v is None for v in operands):
        return None
    value = fold(op, operands)  # type: ignore[arg-type]
    if value is None:
        return None
    t = op.results[0].type
    constant = arith.ConstantOp(IntegerAttr(int(value), t), t)
    constant.location = op.location
    return constant


def _trip_count(loop: scf.ForOp) -> int | None:
    lb, ub, step = (constant_int(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, -(-(ub - lb) // step))


def _unroll(loop: scf.ForOp, trips: int) -> None:
    lb, step = constant_int(loop.lb), constant_int(loop.step)
    assert lb is not None and step is not None
    block = loop.body.block
    iv, carried_args = block.args[0], block.args[1:]
    b = Builder(InsertPoint.before(loop))
    carried: list[SSAValue] = list(loop.iter_args)
    made: list[Operation] = []
    index_type = iv.type
    for k in range(trips):
        value = lb + k * step
        step_iv = b.insert(arith.ConstantOp(IntegerAttr(value, index_type), index_type)).result
        made.append(step_iv.owner)  # type: ignore[arg-type]
        mapping: dict[SSAValue, SSAValue] = {iv: step_iv, **dict(zip(carried_args, carried))}
        for op in block.ops:
            if isinstance(op, scf.YieldOp):
                carried = [mapping.get(v, v) for v in op.operands]
                break
            copy: Operation = op.clone(mapping)
            copy.location = op.location  # errors in a step name the loop body's line
            folded = _folded(copy)
            if folded is None:
                b.insert(copy)
                if isinstance(copy, arith.ConstantOp):
                    made.append(copy)
            else:  # index arithmetic of the step's constant index: a constant
                copy.erase()
                mapping[op.results[0]] = b.insert(folded).result
                made.append(folded)
    for result, value in zip(loop.results, carried, strict=True):
        result.replace_all_uses_with(value)
    loop.detach()
    loop.erase()
    for op in reversed(made):  # constants of the steps (folded index arithmetic) left unread
        if isinstance(op, arith.ConstantOp) and not op.result.uses:
            op.detach()
            op.erase()

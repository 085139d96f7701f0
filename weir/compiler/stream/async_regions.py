"""`async.execute` regions as timepoints: the part of the stream conversion that gives the user's
explicit concurrency real concurrency on weir's own queues.

A region's dependencies (its `[tokens]` and the readiness of its `(values)`) become one timepoint
D, and while its body is converted every queue submission made in it waits for D besides its
own operands: nothing in the region starts before its dependencies are ready. The region's token
is the join of D and every timepoint its body produces, so it is reached when all its work has
run; the values it yields are its resources, ready at that token. The body then moves in place of
the region: two regions that do not depend on each other become submissions that wait for
nothing in common, so a device with several workers runs them at once, and the one after that
awaits them through a `stream.timepoint.join`.

`async.await` does not block the host where it does not have to. Awaiting a value maps the result
to the value's resource (whoever uses it waits for its timepoint, as for any resource); awaiting
a token makes later submissions in the same scope wait for it. The host itself waits only before
work of its own that must come after (calls into other modules, whose effects the device
timepoints do not cover). Host code inside a region runs in program order, which the async
dialect allows (sequential execution is a legal order): that keeps an async-external function
returning as soon as its work is scheduled, whatever regions it holds."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from weir.compiler.stream.affinity_analysis import Placement
from weir.dialects import async_, stream
from weir.ir.upstream import (
    Block,
    Builder,
    func,
    IndexType,
    InsertPoint,
    IntegerAttr,
    Operation,
    SSAValue,
    TensorType,
)

if TYPE_CHECKING:
    from weir.compiler.stream.convert_to_stream import Resource


# The async.execute region an execute was submitted from (innermost), for schedule-execution:
# the regions a program writes are what it asks to run at the same time.
REGION_ATTR = "weir.async_region"


class AsyncRegionConversion:
    """Mixed into the stream converter: the attributes below are the converter's."""

    resources: dict[SSAValue, Resource]
    dead: list[Operation]
    placement: Placement
    # The timepoint every submission made from here on in the current host scope waits for
    # (the enclosing regions' dependencies and the tokens awaited so far); None: nothing.
    frontier: SSAValue | None
    # Each token and each value of a region: the timepoint at which it is ready (None: now).
    ready_at: dict[SSAValue, SSAValue | None]
    # Scalar values yielded by regions: the host value each stands for.
    scalar_values: dict[SSAValue, SSAValue]
    # async.execute regions converted so far in this function: each one's executes are marked
    # with its number (REGION_ATTR) so schedule-execution keeps regions' submissions apart.
    regions_seen: int

    def _convert_block(self, block: Block) -> None: ...

    def _join(self, points: list[SSAValue | None], b: Builder) -> SSAValue | None:
        """One timepoint reached when all `points` are (None: nothing to wait for). Joins are
        flattened, so a region waiting on a join of its dependencies and on its own allocations
        waits on one join of all of them (the inner one, if then unused, is erased at the end
        of the conversion)."""
        flat: list[SSAValue] = []
        for p in points:
            if p is not None and isinstance(p.owner, stream.TimepointJoinOp):
                flat.extend(p.owner.timepoints)
            elif p is not None:
                flat.append(p)
        unique = list(dict.fromkeys(flat))
        if len(unique) <= 1:
            return unique[0] if unique else None
        return b.insert(stream.TimepointJoinOp.build(
            operands=[unique], result_types=[stream.TimepointType()])).result

    def _async_execute(self, op: async_.ExecuteOp, b: Builder) -> None:
        # The execute itself goes last among the dead ops of its body (erased in reverse order),
        # so its block arguments lose their uses before it is erased.
        self.dead.append(op)
        deps = self._join([self.frontier,
                           *(self.ready_at[t] for t in op.dependencies),
                           *(self.ready_at[v] for v in op.body_operands)], b)
        for operand, arg in zip(op.body_operands, op.body.block.args, strict=True):
            if isinstance(arg.type, TensorType):
                self.resources[arg] = self.resources[operand]
            else:
                arg.replace_all_uses_with(self.scalar_values[operand])
        body = op.body.block
        if deps is not None and _calls_other_modules(body.ops):
            Builder(InsertPoint.at_start(body)).insert(
                stream.TimepointAwaitOp.build(operands=[[deps]]))
        outer = self.frontier
        self.frontier = deps
        self._convert_block(body)
        self.frontier = outer
        yield_op = body.last_op
        assert isinstance(yield_op, async_.YieldOp)  # the op's verifier
        yielded = list(yield_op.values)
        yield_op.detach()
        yield_op.erase()
        submitted: list[SSAValue | None] = []  # waited for `deps` themselves
        other: list[SSAValue | None] = []  # e.g. what a loop carried out, maybe from before
        self.regions_seen += 1
        for inner in list(body.ops):
            inner.detach()
            b.insert(inner)
            if isinstance(inner, stream.CmdExecuteOp) and REGION_ATTR not in inner.attributes:
                inner.attributes[REGION_ATTR] = IntegerAttr(self.regions_seen, IndexType())
            if isinstance(inner, _DERIVED_TIMEPOINTS):
                continue
            points = [r for r in inner.results if isinstance(r.type, stream.TimepointType)]
            (submitted if isinstance(inner, _SUBMISSIONS) else other).extend(points)
        token = self._join([*submitted, *other,
                            *([deps] if other or not submitted else [])], b)
        self.ready_at[op.token] = token
        for result, value in zip(op.values, yielded, strict=True):
            self.ready_at[result] = token
            if isinstance(value.type, TensorType):
                self.resources[result] = replace(self.resources[value], ready=token)
            else:
                self.scalar_values[result] = value

    def _async_await(self, op: async_.AwaitOp, b: Builder) -> None:
        self.dead.append(op)
        ready = self.ready_at[op.operand]
        if op.result is not None:
            if isinstance(op.result.type, TensorType):
                self.resources[op.result] = self.resources[op.operand]
            else:
                op.result.replace_all_uses_with(self.scalar_values[op.operand])
        if ready is None:
            return
        self.frontier = self._join([self.frontier, ready], b)
        if _calls_other_modules(_following(op)):
            b.insert(stream.TimepointAwaitOp.build(operands=[[ready]]))


# Timepoints that only restate others (joins), are reached at once, or whose work the
# submissions that use them already wait for (allocations).
_DERIVED_TIMEPOINTS = (stream.TimepointJoinOp, stream.TimepointImmediateOp,
                       stream.ResourceAllocaOp)
_SUBMISSIONS = (stream.CmdExecuteOp, stream.AsyncTransferOp)


def _calls_other_modules(ops: Iterable[Operation]) -> bool:
    return any(isinstance(inner, func.CallOp) for op in ops for inner in op.walk())


def _following(op: Operation) -> Iterator[Operation]:
    """The ops after `op` in its block."""
    after = op.next_op
    while after is not None:
        yield after
        after = after.next_op

"""Rejects, at the op, the `async` programs whose meaning would depend on timing.

An `async.execute` region may run concurrently with the code after it, so a program is only
well defined when every dependency between regions (and between a region and the host code after
it) is explicit: a token dependency `[%t]`, a value operand `(%v as %u: ...)` or an
`async.await`. Later phases build exactly those dependencies as timepoints and nothing more; an
implicit one (two regions touching one global, a token smuggled out through `func.return`)
would compile into a race. Three things are checked:
- async tokens and values stay in the function that made them and are consumed only by
  `async.execute` and `async.await` (not returned, passed to calls or carried through `scf`);
- two accesses to one `util.global`, at least one a store and not in one region, are ordered by
  program order or an explicit dependency (the happens-before of `_Order`);
- a region's `stream.affinity` names a device as `#hal.device.promise<@name>`.
"""

from __future__ import annotations

from collections.abc import Iterator

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.async_ import (
    AFFINITY_ATTR,
    AwaitOp,
    ExecuteOp,
    is_async_type,
    TokenType,
    YieldOp,
)
from weir.dialects.util import GlobalLoadOp, GlobalStoreOp
from weir.ir.diagnostics import error_at, location_of
from weir.ir.hal_attrs import DevicePromiseAttr
from weir.ir.upstream import func, ModuleOp, Operation, OpResult, Region, scf, SSAValue

_Access = GlobalLoadOp | GlobalStoreOp
_LOOPS = (scf.ForOp, scf.WhileOp)
_BRANCHES = (scf.IfOp, scf.IndexSwitchOp)
_EXPLICIT = "make the dependency explicit (a token dependency, a value operand or an async.await)"


class VerifyAsyncRegions(Pass):
    flag = "verify-async-regions"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for top in module.body.block.ops:
            for op in top.walk():
                if isinstance(op, func.FuncOp):
                    _check_arguments(op)
                elif isinstance(op, ExecuteOp):
                    _check_affinity(op)
                elif not isinstance(op, AwaitOp):
                    _check_operands(op)
            if isinstance(top, func.FuncOp):
                # After the body: its `func.return` of the value is the more precise error.
                _check_results(top)
                _check_globals(top)


# -- async values stay where they were made ----------------------------------------------------

def _check_arguments(function: func.FuncOp) -> None:
    name = function.sym_name.data
    for i, t in enumerate(function.function_type.inputs.data):
        if is_async_type(t):
            raise error_at(function, f"@{name} takes an {t} (argument {i}): async tokens and "
                                     "values cannot cross a function boundary; await it in the "
                                     "caller and pass the awaited value")


def _check_results(function: func.FuncOp) -> None:
    name = function.sym_name.data
    for i, t in enumerate(function.function_type.outputs.data):
        if is_async_type(t):
            raise error_at(function, f"@{name} returns an {t} (result {i}): async tokens and "
                                     "values cannot leave the function that made them; await it "
                                     "before returning")


def _check_operands(op: Operation) -> None:
    """Only `async.execute` and `async.await` may consume a token or an async value."""
    for i, v in enumerate(op.operands):
        if is_async_type(v.type):
            # Numbered values (`%0`) keep no name in xDSL: then the operand's position.
            what = f"'%{v.name_hint}'" if v.name_hint else f"operand {i}"
            spelled = f"%{v.name_hint}" if v.name_hint else "%operand"
            awaited = f"async.await {spelled} : {v.type}" if isinstance(v.type, TokenType) \
                else f"%v = async.await {spelled} : {v.type}"
            raise error_at(op, f"{what} is an {v.type} used by '{op.name}' without an "
                               f"async.await; await it first ({awaited})")


def _check_affinity(region: ExecuteOp) -> None:
    affinity = region.attributes.get(AFFINITY_ATTR)
    if affinity is not None and not isinstance(affinity, DevicePromiseAttr):
        raise error_at(region, f"'async.execute' {AFFINITY_ATTR} must name a device as "
                               f"#hal.device.promise<@device>, got {affinity}")


# -- globals shared between regions --------------------------------------------------------------

def _check_globals(function: func.FuncOp) -> None:
    """Each pair of accesses to one global with a store among them, not both in the function's
    own code, must be ordered; reported at the later one in source order. In a loop, the later
    one must also have finished when the next iteration starts (or the loop's iterations would
    race with each other)."""
    accesses = [op for op in function.walk() if isinstance(op, _Access)]
    if not any(isinstance(op, GlobalStoreOp) for op in accesses):
        return
    order = _Order(function)
    for i, b in enumerate(accesses):
        for a in accesses[:i + 1]:
            if a.global_ != b.global_ or not (_is_store(a) or _is_store(b)):
                continue
            if not (order.regions(a) or order.regions(b)):
                continue  # both in the function's own code, which runs in order
            if a is not b and not order.finished_before(a, b) and not order.exclusive(a, b):
                raise error_at(b, f"'{b.name}' of {_name(b)} may run before or during the "
                                  f"'{a.name}' at {_position(a)} in an async.execute region: "
                                  f"{_EXPLICIT}")
            loop = order.common_loop(a, b)
            if loop is not None and not order.finished_before(b, _iteration_end(loop, b)):
                again = "runs it again" if a is b else f"reaches the '{a.name}' at {_position(a)}"
                raise error_at(b, f"'{b.name}' of {_name(b)} in an async.execute region may "
                                  f"still be running when the next iteration of the loop at "
                                  f"{_position(loop)} {again}: await the region (or one "
                                  f"that depends on it) before the iteration ends")


class _Order:
    """Happens-before between the ops of one function: program order within one region's (or
    the function's) own code, and for regions the explicit dependencies only."""

    def __init__(self, function: func.FuncOp) -> None:
        self._index = {op: i for i, op in enumerate(function.walk())}
        self._ancestors: dict[Operation, tuple[Operation, ...]] = {}
        self._regions: dict[Operation, tuple[ExecuteOp, ...]] = {}
        self._before: dict[tuple[Operation, Operation], bool] = {}
        self._completed: dict[Operation, frozenset[ExecuteOp]] = {}
        # In source order, so that each `completed` finds what it builds on already known and
        # a long chain of regions does not recurse as deep as it is long.
        for op in self._index:
            if isinstance(op, ExecuteOp | YieldOp):
                self.completed(op)

    def ancestors(self, op: Operation) -> tuple[Operation, ...]:
        """`op`'s enclosing ops, innermost first."""
        if op not in self._ancestors:
            parent = op.parent_op()
            self._ancestors[op] = () if parent is None else (parent, *self.ancestors(parent))
        return self._ancestors[op]

    def regions(self, op: Operation) -> tuple[ExecuteOp, ...]:
        """The `async.execute`s that `op` runs in, innermost first."""
        if op not in self._regions:
            self._regions[op] = tuple(o for o in self.ancestors(op) if isinstance(o, ExecuteOp))
        return self._regions[op]

    def region_of(self, op: Operation) -> ExecuteOp | None:
        """The innermost `async.execute` that `op` runs in (None: the function's own code)."""
        regions = self.regions(op)
        return regions[0] if regions else None

    def finished_before(self, a: Operation, p: Operation) -> bool:
        """Whether `a` has run to its end whenever `p` starts. Each step of the recursion moves
        to a region enclosing `a`, so it ends."""
        key = (a, p)
        if key not in self._before:
            self._before[key] = self._finished_before(a, p)
        return self._before[key]

    def _finished_before(self, a: Operation, p: Operation) -> bool:
        # Program order: `a` comes before `p`, or before a region `p` runs in, in the same code.
        here = self.region_of(a)
        if any(self.region_of(q) is here and self._index[a] < self._index[q]
               for q in (p, *self.regions(p))):
            return True
        # A region complete when `p` starts, that `a` runs in and has finished in by its end.
        # (Had `a` finished before such a region started, program order would have said so: `p`
        # or a region it runs in comes after that region in `a`'s code.)
        done = self.completed(p)
        return any(region in done and self.finished_before(a, _end_of(region))
                   for region in self.regions(a))

    def completed(self, p: Operation) -> frozenset[ExecuteOp]:
        """The regions known to have run to their end when `p` starts: those awaited before it,
        those it depends on, and (transitively) whatever was complete when they ended."""
        if p not in self._completed:
            done: set[ExecuteOp] = set()
            ready = [w.operand for w in _awaits_before(p)]
            if isinstance(p, ExecuteOp):
                ready += [*p.dependencies, *p.body_operands]
            for region in filter(None, map(_producer, ready)):
                done |= {region, *self.completed(_end_of(region))}
            if (outer := self.region_of(p)) is not None:
                done |= self.completed(outer)
            self._completed[p] = frozenset(done)
        return self._completed[p]

    def exclusive(self, a: Operation, b: Operation) -> bool:
        """Whether `a` and `b` are in different branches of one `scf.if`/`scf.index_switch`, so
        never both run (in one iteration)."""
        outer_a = set(self.ancestors(a))
        common = next(op for op in self.ancestors(b) if op in outer_a)
        if not isinstance(common, _BRANCHES):
            return False
        return _region_within(common, a) is not _region_within(common, b)

    def common_loop(self, a: Operation, b: Operation) -> Operation | None:
        """The innermost loop both run in."""
        loops_a = [op for op in self.ancestors(a) if isinstance(op, _LOOPS)]
        return next((op for op in self.ancestors(b) if op in loops_a), None)


def _end_of(region: ExecuteOp) -> Operation:
    """Its `async.yield`: what has finished there has finished when the region's token is ready."""
    end = region.body.block.last_op
    assert end is not None  # verified: the region ends with async.yield
    return end


def _awaits_before(p: Operation) -> Iterator[AwaitOp]:
    """The awaits that have certainly run when `p` starts: earlier in `p`'s block or in a block
    enclosing it, within the code of one region (or of the function)."""
    op = p
    while (block := op.parent_block()) is not None:
        for earlier in block.ops:
            if earlier is op:
                break
            if isinstance(earlier, AwaitOp):
                yield earlier
        owner = block.parent_op()
        if owner is None or isinstance(owner, ExecuteOp | func.FuncOp):
            return
        op = owner


def _producer(value: SSAValue) -> ExecuteOp | None:
    if isinstance(value, OpResult) and isinstance(value.owner, ExecuteOp):
        return value.owner
    return None


def _region_within(op: Operation, inner: Operation) -> Region:
    return next(r for r in op.regions if r.is_ancestor(inner))


def _iteration_end(loop: Operation, b: Operation) -> Operation:
    """The terminator of the loop region that `b` is in: `b` must have finished there."""
    block = _region_within(loop, b).blocks.last
    end = block.last_op if block is not None else None
    assert end is not None  # verified: scf regions end with their terminator
    return end


def _is_store(op: _Access) -> bool:
    return isinstance(op, GlobalStoreOp)


def _name(op: _Access) -> str:
    return f"@{op.global_.string_value()}"


def _position(op: Operation) -> str:
    _, line, col = location_of(op)
    return f"{line}:{col}"

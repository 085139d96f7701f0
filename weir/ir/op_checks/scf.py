"""Checks of the scf ops weir accepts that xDSL 0.74's verifiers leave out: `scf.if` does not
compare what its regions yield with its results (a branch yielding a tensor<5xf32> for a
tensor<4xf32> result compiled) nor require an else region when it has results; `scf.while`
compares its regions' arguments by position without counting them, and nothing compares what
`scf.condition` forwards with the after region and the results. (A constant `scf.for` step that
is not positive is not an error: MLIR dropped that check, as the loop may never run.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import scf
from xdsl.ir import Attribute, Operation, Region
from xdsl.utils.exceptions import VerifyException


def _types(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(map(str, types)) + ")"


def _yielded(region: Region) -> list[Attribute] | None:
    """The types the region's `scf.yield` gives, or None when it has no block or no yield
    (the op's own verifier reports that)."""
    if not region.blocks:
        return None
    last = region.blocks[0].last_op
    return [v.type for v in last.operands] if isinstance(last, scf.YieldOp) else None


def _if(op: Operation) -> None:
    assert isinstance(op, scf.IfOp)
    results = [r.type for r in op.results]
    if results and not op.false_region.blocks:
        raise VerifyException(f"returns {_types(results)}, so it needs an else region that "
                              "yields them too")
    for name, region in (("then", op.true_region), ("else", op.false_region)):
        got = _yielded(region)
        if got is not None and got != results:
            raise VerifyException(f"the {name} region yields {_types(got)}, but the results are "
                                  f"{_types(results)}")


def _while(op: Operation) -> None:
    """before(args) -> condition(values); after(values) -> yield(args); results = values."""
    assert isinstance(op, scf.WhileOp)
    if not op.before_region.blocks or not op.after_region.blocks:
        return
    inits = [v.type for v in op.arguments]
    before = [a.type for a in op.before_region.blocks[0].args]
    after = [a.type for a in op.after_region.blocks[0].args]
    results = [r.type for r in op.results]
    if before != inits:
        raise VerifyException(f"the before region takes {_types(before)}, but the initial "
                              f"values are {_types(inits)}")
    condition = op.before_region.blocks[0].last_op
    if isinstance(condition, scf.ConditionOp):
        forwarded = [v.type for v in condition.args]
        if forwarded != results:
            raise VerifyException(f"scf.condition forwards {_types(forwarded)}, but the results "
                                  f"are {_types(results)}")
    if after != results:
        raise VerifyException(f"the after region takes {_types(after)}, but the results are "
                              f"{_types(results)}")
    yielded = _yielded(op.after_region)
    if yielded is not None and yielded != inits:
        raise VerifyException(f"the after region yields {_types(yielded)}, but the before "
                              f"region takes {_types(inits)}")


SCF_CHECKS: dict[str, Callable[[Operation], None]] = {
    "scf.if": _if,
    "scf.while": _while,
}

"""Scalar bodies of `Generic`/`Reduce`, analysed once at load time and evaluated over whole arrays.

A reduction body must have the form `yield combine(f(inputs...), acc)` with an associative
`combine` (see COMBINERS): then f is evaluated over the full iteration space and reduced with the
matching ufunc, which keeps the reference target vectorised. Anything else is rejected at load
time rather than silently run element by element.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from weir.errors import ModuleFormatError
from weir.format.reference_kernel import ScalarOp
from weir.runtime.executables.reference_scalar_ops import COMBINERS, SCALAR_IMPLS, _to
from weir.runtime.hal.element_types import numpy_dtype


def _dependencies(body: Sequence[ScalarOp], nargs: int, value: int) -> set[int]:
    """Every value number (args and ops) `value` is computed from, itself included."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v >= nargs:
            stack.extend(body[v - nargs].args)
    return seen


@dataclass(frozen=True)
class Reduction:
    """yield = combiner(acc, partial): `partial` is the value reduced over the reduction axes."""

    combiner: ScalarOp
    partial: int
    dtype: np.dtype  # the combiner's


@dataclass(frozen=True)
class BodyPlan:
    body: tuple[ScalarOp, ...]
    nargs: int
    # (op index, op, result dtype) of the ops the yields need, in body order: resolved here so a
    # dispatch neither skips unneeded ops nor looks dtypes up.
    steps: tuple[tuple[int, ScalarOp, np.dtype], ...]
    yields: tuple[int, ...]  # value numbers evaluated per output (partials for reductions)
    reductions: tuple[Reduction | None, ...]


def plan_body(body: tuple[ScalarOp, ...], ninputs: int, noutputs: int, yields: tuple[int, ...],
              reducing: bool, where: str) -> BodyPlan:
    nargs = ninputs + noutputs
    reductions: list[Reduction | None] = []
    targets: list[int] = []
    for i, y in enumerate(yields):
        if not reducing:
            reductions.append(None)
            targets.append(y)
            continue
        acc = ninputs + i
        op = body[y - nargs] if y >= nargs else None
        if op is None or op.op not in COMBINERS or acc not in op.args or len(set(op.args)) != 2:
            raise ModuleFormatError(
                f"{where}: reference target cannot execute reduction body: output {i} must yield "
                f"an associative combine ({', '.join(sorted(COMBINERS))}) of its accumulator "
                f"and a value computed from the inputs")
        partial = op.args[1] if op.args[0] == acc else op.args[0]
        if any(ninputs <= d < nargs for d in _dependencies(body, nargs, partial)):
            raise ModuleFormatError(
                f"{where}: reference target cannot execute reduction body: the value combined "
                f"into output {i} depends on an accumulator")
        reductions.append(Reduction(op, partial, numpy_dtype(op.dtype)))
        targets.append(partial)
    needed: set[int] = set()
    for t in targets:
        needed |= {d - nargs for d in _dependencies(body, nargs, t) if d >= nargs}
    steps = tuple((k, body[k], numpy_dtype(body[k].dtype)) for k in sorted(needed))
    return BodyPlan(body, nargs, steps, tuple(targets), tuple(reductions))


IndexFn = Callable[[int, np.dtype], np.ndarray]


def evaluate_body(plan: BodyPlan, args: Sequence[np.ndarray | None], index: IndexFn | None,
                  ) -> list[np.ndarray]:
    """The values of `plan.yields`, broadcastable to the iteration space."""
    values: list[np.ndarray | None] = list(args) + [None] * len(plan.body)
    for k, op, dtype in plan.steps:
        if op.op == "index":
            assert index is not None  # the codec rejects `index` outside generic bodies
            values[plan.nargs + k] = index(int(op.attr), dtype)  # type: ignore[arg-type]
        else:
            operands = [values[a] for a in op.args]
            values[plan.nargs + k] = SCALAR_IMPLS[op.op](operands, op, dtype)  # type: ignore[arg-type]
    return [values[y] for y in plan.yields]  # type: ignore[misc]


def reduce_partial(red: Reduction, partial: np.ndarray, axes: tuple[int, ...],
                   keepdims: bool) -> np.ndarray:
    ufunc, view = COMBINERS[red.combiner.op]
    x = view(_to(partial, red.dtype))
    if x.dtype == np.bool_ and ufunc in (np.add, np.multiply):
        x = x.astype(np.uint8)
    if not axes:
        return x
    return ufunc.reduce(x, axis=axes, keepdims=keepdims)


def combine(red: Reduction, init: np.ndarray, reduced: np.ndarray) -> np.ndarray:
    """init `combiner` reduced, rounded once to the combiner's dtype (the reduced value stays in
    its wider compute type until here)."""
    op = red.combiner
    return SCALAR_IMPLS[op.op]([init, reduced], op, red.dtype)

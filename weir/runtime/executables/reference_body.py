"""Scalar bodies of `Generic`/`Reduce`, analysed once at load time and evaluated over whole arrays.

A reduction body of the form `yield combine(f(inputs...), acc)` with an associative `combine`
(see COMBINERS) is evaluated over the full iteration space and reduced with the matching ufunc.
Any other reduction body (an argmax's compare-and-select, a recurrence such as `acc * 0.5 + x`)
is `sequential`: it is evaluated once per point of the reduction loops, in loop order, each time
vectorised over all the parallel loops, so it is never run element by element.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from weir.errors import RuntimeFault
from weir.format.kernel_description import CHECKED_SCALAR_OPS, ScalarOp, extract_fault
from weir.runtime.executables.reference_scalar_ops import COMBINERS, SCALAR_IMPLS, _to, push_scalar
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
    # A reduction whose body is not a combine of its accumulator: evaluate it step by step.
    sequential: bool = False
    # Body op index -> its number among the body's checks (`extract`, `assert`).
    check_numbers: dict[int, int] = field(default_factory=dict)


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
            return _sequential(body, ninputs, noutputs, yields, where)
        partial = op.args[1] if op.args[0] == acc else op.args[0]
        if any(ninputs <= d < nargs for d in _dependencies(body, nargs, partial)):
            return _sequential(body, ninputs, noutputs, yields, where)
        reductions.append(Reduction(op, partial, numpy_dtype(op.dtype)))
        targets.append(partial)
    needed: set[int] = set()
    checked = [k for k, op in enumerate(body) if op.op in CHECKED_SCALAR_OPS]
    # Every assert runs, needed or not: it is a check, not a value.
    for t in targets + [nargs + k for k in checked if body[k].op == "assert"]:
        needed |= {d - nargs for d in _dependencies(body, nargs, t) if d >= nargs}
    steps = tuple((k, body[k], numpy_dtype(body[k].dtype)) for k in sorted(needed))
    return BodyPlan(body, nargs, steps, tuple(targets), tuple(reductions),
                    check_numbers={k: n for n, k in enumerate(checked)})


def _sequential(body: tuple[ScalarOp, ...], ninputs: int, noutputs: int,
                yields: tuple[int, ...], where: str) -> BodyPlan:
    """The plan of a reduction body evaluated per reduction step: the whole body, as if parallel."""
    plan = plan_body(body, ninputs, noutputs, yields, False, where)
    return BodyPlan(plan.body, plan.nargs, plan.steps, plan.yields, plan.reductions, True,
                    plan.check_numbers)


IndexFn = Callable[[int, np.dtype], np.ndarray]


def evaluate_body(plan: BodyPlan, args: Sequence[np.ndarray | None], index: IndexFn | None,
                  push: Sequence[int] = (), captures: Sequence[np.ndarray] = (),
                  checks: Sequence[str] = ()) -> list[np.ndarray]:
    """The values of `plan.yields`, broadcastable to the iteration space; `push`: the dispatch's
    push constants, which `push` ops read; `captures` and `checks`: the generic's tensors that
    `extract` reads and its check messages. A failed check raises RuntimeFault."""
    values: list[np.ndarray | None] = list(args) + [None] * len(plan.body)
    for k, op, dtype in plan.steps:
        if op.op == "push":
            slot = push[int(op.attr)]  # type: ignore[arg-type]
            values[plan.nargs + k] = push_scalar(slot, dtype)
        elif op.op == "index":
            assert index is not None  # the codec rejects `index` outside generic bodies
            values[plan.nargs + k] = index(int(op.attr), dtype)  # type: ignore[arg-type]
        elif op.op == "extract":
            values[plan.nargs + k] = _extract(captures[int(op.attr)],  # type: ignore[arg-type]
                                              [values[a] for a in op.args],  # type: ignore[misc]
                                              checks[plan.check_numbers[k]])
        elif op.op == "assert":
            holds = values[op.args[0]]
            if not np.all(holds):
                raise RuntimeFault(checks[plan.check_numbers[k]])
            values[plan.nargs + k] = holds
        else:
            operands = [values[a] for a in op.args]
            values[plan.nargs + k] = SCALAR_IMPLS[op.op](operands, op, dtype)  # type: ignore[arg-type]
    return [values[y] for y in plan.yields]  # type: ignore[misc]


def _extract(table: np.ndarray, indices: list[np.ndarray], check: str) -> np.ndarray:
    """table[indices...] over the whole iteration space (a gather), every index checked first."""
    at = np.broadcast_arrays(*indices) if indices else []
    for d, ix in enumerate(at):
        size = table.shape[d]
        bad = (ix < 0) | (ix >= size)
        if bad.any():
            raise RuntimeFault(extract_fault(check, d, int(ix[bad].flat[0]), size))
    return np.asarray(table[tuple(at)])


def evaluate_sequential(plan: BodyPlan, inputs: Sequence[np.ndarray], accs: Sequence[np.ndarray],
                        sizes: Sequence[int], reduction: Sequence[int], index: IndexFn | None,
                        push: Sequence[int] = (), captures: Sequence[np.ndarray] = (),
                        checks: Sequence[str] = ()) -> list[np.ndarray]:
    """A `sequential` reduction in loop space: `inputs` span the loops (size-1 axes where they do
    not vary), `accs` are the outputs with size-1 reduction axes. The body runs once per point of
    the `reduction` loops, in loop order, over all parallel loops at once."""
    shape = [1 if d in reduction else s for d, s in enumerate(sizes)]
    current = [np.broadcast_to(a, shape) for a in accs]
    dtypes = [a.dtype for a in accs]
    for point in np.ndindex(*(sizes[d] for d in reduction)):
        at = dict(zip(reduction, point))
        picked = [x[tuple(slice(None) if d not in at or x.shape[d] == 1
                          else slice(at[d], at[d] + 1) for d in range(len(sizes)))]
                  for x in inputs]

        def step_index(d: int, dt: np.dtype) -> np.ndarray:
            if d in at:
                return np.full([1] * len(sizes), at[d], dtype=dt)
            assert index is not None
            return index(d, dt)
        results = evaluate_body(plan, picked + current, step_index, push, captures, checks)
        current = [np.broadcast_to(_to(r, dt), shape) for r, dt in zip(results, dtypes)]
    return current


def reduce_partial(red: Reduction, partial: np.ndarray, axes: tuple[int, ...],
                   keepdims: bool) -> np.ndarray:
    ufunc, view = COMBINERS[red.combiner.op]
    x = view(_to(partial, red.dtype))
    if x.dtype == np.bool_ and ufunc in (np.add, np.multiply):
        x = x.astype(np.uint8)
    if not axes:
        return x
    return ufunc.reduce(x, axis=axes, keepdims=keepdims)


# Float sums and products round at every step, so their order is part of the result.
IN_ORDER = frozenset({"addf", "mulf"})


def in_order(red: Reduction) -> bool:
    """Whether a reduction marked `in_order` must combine element by element
    (`reduce_in_order`): float sums and products of a native float type; the other combiners
    give one result in any order."""
    return red.combiner.op in IN_ORDER and red.dtype in (np.float16, np.float32, np.float64)


def reduce_in_order(red: Reduction, init: np.ndarray, partial: np.ndarray,
                    axes: Sequence[int]) -> np.ndarray:
    """`init` combined with the elements of `partial` along `axes` one at a time, in loop order
    (the last of `axes` fastest), rounding to the combiner's type after each step, as llvm-cpu
    without reassociation does. The result has `partial`'s other axes, in order; `init`
    broadcasts to them."""
    ufunc, _ = COMBINERS[red.combiner.op]
    x = _to(partial, red.dtype)
    k, nd = len(axes), x.ndim
    moved = np.moveaxis(x, sorted(axes), range(nd - k, nd))
    lines = moved.reshape(moved.shape[:nd - k] + (-1,))
    start = np.broadcast_to(_to(init, red.dtype), lines.shape[:-1])[..., None]
    return ufunc.accumulate(np.concatenate([start, lines], axis=-1), axis=-1,
                            dtype=red.dtype)[..., -1]


def combine(red: Reduction, init: np.ndarray, reduced: np.ndarray) -> np.ndarray:
    """init `combiner` reduced, rounded once to the combiner's dtype (the reduced value stays in
    its wider compute type until here)."""
    op = red.combiner
    return SCALAR_IMPLS[op.op]([init, reduced], op, red.dtype)

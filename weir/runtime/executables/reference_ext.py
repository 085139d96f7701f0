"""The `reference` target's steps for the kernels of IREE's linalg extension ops: `Sort`, `Scan`,
`Scatter`, `Gather`. Each body is evaluated with numpy over whole arrays: a sort is a bitonic
network (log^2 n steps, each comparing every pair of the step at once) ordered by the body with
the original position breaking ties, so it is the stable sort llvm-cpu's code makes; a scan
takes one step per position along its dimension, each over every line at once; a scatter or
gather one step per batch element, each moving a whole slice."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from weir.errors import RuntimeFault
from weir.format.kernel_description import Gather, KernelOp, MapLoad, MapStore, Scan, Scatter, Sort
from weir.runtime.executables.reference_body import evaluate_body, plan_body
from weir.runtime.executables.reference_scalar_ops import _to

Values = list[object]
Step = Callable[[Values, Sequence[object], Sequence[int]], None]


def _tensor(value: object) -> np.ndarray:
    if type(value) is tuple:
        return value[0]  # type: ignore[no-any-return]
    return value  # type: ignore[return-value]


def ext_step(op: KernelOp, w: str) -> Step | None:
    if isinstance(op, Sort):
        return _sort_step(op, w)
    if isinstance(op, Scan):
        return _scan_step(op, w)
    if isinstance(op, Scatter):
        return _scatter_step(op, w)
    if isinstance(op, Gather):
        return _gather_step(op, w)
    if isinstance(op, MapLoad):
        return _map_load_step(op, w)
    if isinstance(op, MapStore):
        return _map_store_step(op, w)
    return None


def _sort_step(op: Sort, w: str) -> Step:
    nargs = 2 * len(op.operands)
    plan = plan_body(op.body, nargs, 0, op.yields, False, w)

    def step(values: Values, b: Sequence[object], consts: Sequence[int]) -> None:
        arrays = [_tensor(values[v]) for v in op.operands]
        for a in arrays[1:]:
            if a.shape != arrays[0].shape:
                raise RuntimeFault(f"{w}: sort operands of shapes {arrays[0].shape} and {a.shape}")

        def may_precede(x: list[np.ndarray], y: list[np.ndarray]) -> np.ndarray:
            args: list[np.ndarray | None] = []
            for xi, yi in zip(x, y):
                args += [xi, yi]
            (r,) = evaluate_body(plan, args, None, consts)
            return np.broadcast_to(np.asarray(r, dtype=bool), x[0].shape)

        values.append(tuple(_bitonic(arrays, op.dimension, may_precede)))
    return step


def _bitonic(arrays: list[np.ndarray], dim: int,
             may_precede: Callable[[list[np.ndarray], list[np.ndarray]], np.ndarray]
             ) -> list[np.ndarray]:
    """The stable sort of `arrays` along `dim`: x goes before y when x may precede y and y may
    not precede x, or neither holds and x came first. Positions past the line's length (the
    network needs a power of two) go last."""
    xs = [np.moveaxis(a, dim, -1) for a in arrays]
    n = xs[0].shape[-1]
    size = 1 << max(0, (n - 1).bit_length())
    pad = [(0, 0)] * (xs[0].ndim - 1) + [(0, size - n)]
    xs = [np.pad(x, pad) for x in xs]
    pos = np.broadcast_to(np.arange(size, dtype=np.int64), xs[0].shape).copy()
    i = np.arange(size)
    k = 2
    while k <= size:
        j = k // 2
        while j >= 1:
            lo = i[(i & j) == 0]
            hi = lo | j
            ascending = (lo & k) == 0
            a = [x[..., lo] for x in xs]
            c = [x[..., hi] for x in xs]
            pa, pc = pos[..., lo], pos[..., hi]
            va, vc = pa < n, pc < n
            c_first = may_precede(c, a) & ~may_precede(a, c)
            a_first = may_precede(a, c) & ~may_precede(c, a)
            core = c_first | (~a_first & (pc < pa))
            c_before_a = np.where(va & vc, core, np.where(va != vc, vc, pc < pa))
            swap = np.where(ascending, c_before_a, ~c_before_a)
            for x, xa, xc in zip(xs, a, c):
                x[..., lo] = np.where(swap, xc, xa)
                x[..., hi] = np.where(swap, xa, xc)
            pos[..., lo], pos[..., hi] = np.where(swap, pc, pa), np.where(swap, pa, pc)
            j //= 2
        k *= 2
    return [np.ascontiguousarray(np.moveaxis(x[..., :n], -1, dim)) for x in xs]


def _scan_step(op: Scan, w: str) -> Step:
    plan = plan_body(op.body, 2, 0, op.yields, False, w)

    def step(values: Values, b: Sequence[object], consts: Sequence[int]) -> None:
        x = _tensor(values[op.input])
        init, acc = _tensor(values[op.output]), _tensor(values[op.accumulator])
        d = op.dimension
        if x.shape != init.shape or acc.shape != x.shape[:d] + x.shape[d + 1:]:
            raise RuntimeFault(f"{w}: scan of {x.shape} into {init.shape} and {acc.shape}")
        xs = np.moveaxis(x, d, 0)
        out = np.empty(xs.shape, init.dtype)
        n = xs.shape[0]
        for i in range(n):
            if i == 0:
                out[0] = xs[0] if op.inclusive else acc
                continue
            current = xs[i] if op.inclusive else xs[i - 1]
            (r,) = evaluate_body(plan, [current, out[i - 1]], None, consts)
            out[i] = _to(np.asarray(r), init.dtype)
        last = out[n - 1] if n else acc
        values.append((np.ascontiguousarray(np.moveaxis(out, 0, d)),
                       np.array(last, dtype=acc.dtype)))
    return step


def _window(op: Scatter | Gather, indices: np.ndarray, batch: tuple[int, ...],
            target: tuple[int, ...], slice_shape: tuple[int, ...]
            ) -> tuple[tuple[slice, ...], tuple[slice, ...]] | None:
    """For batch element `batch`: (the target's window, the slice's part inside it), or None when
    the slice misses the target entirely."""
    rank, sr = len(target), len(slice_shape)
    coords = np.atleast_1d(indices[batch]).astype(np.int64)
    start = [0] * rank
    for j, d in enumerate(op.dimension_map):
        start[d] = int(coords[j])
    tw: list[slice] = []
    sw: list[slice] = []
    for d in range(rank):
        size = slice_shape[d - (rank - sr)] if d >= rank - sr else 1
        lo, hi = max(0, start[d]), min(target[d], start[d] + size)
        if lo >= hi:
            return None
        tw.append(slice(lo, hi) if d >= rank - sr else slice(lo, lo + 1))
        if d >= rank - sr:
            sw.append(slice(lo - start[d], hi - start[d]))
    return tuple(tw), tuple(sw)


def _windows(op: Scatter | Gather, indices: np.ndarray, mask: np.ndarray | None,
             target: tuple[int, ...], slice_shape: tuple[int, ...]
             ) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...], tuple[slice, ...]]]:
    """(batch, the target's window, the slice's part inside it) for each batch element that the
    mask keeps and whose slice meets the target, in batch order."""
    for batch in np.ndindex(*indices.shape[:op.batch_rank]):
        if mask is not None and not mask[batch]:
            continue
        window = _window(op, indices, batch, target, slice_shape)
        if window is not None:
            yield batch, *window


def _scatter_step(op: Scatter, w: str) -> Step:
    plan = plan_body(op.body, 2, 0, op.yields, False, w)

    def step(values: Values, b: Sequence[object], consts: Sequence[int]) -> None:
        updates, indices = _tensor(values[op.updates]), _tensor(values[op.indices])
        out = np.array(_tensor(values[op.original]), copy=True)
        mask = _tensor(values[op.mask]) if op.mask >= 0 else None
        batch_shape = indices.shape[:op.batch_rank]
        if updates.shape[:op.batch_rank] != batch_shape:
            raise RuntimeFault(f"{w}: updates {updates.shape} for indices {indices.shape}")
        slice_shape = updates.shape[op.batch_rank:]
        for batch, tw, sw in _windows(op, indices, mask, out.shape, slice_shape):
            target = out[tw].reshape([s.stop - s.start for s in sw])
            (r,) = evaluate_body(plan, [updates[batch][sw], target], None, consts)
            out[tw] = _to(np.broadcast_to(np.asarray(r), target.shape), out.dtype).reshape(
                out[tw].shape)
        values.append(out)
    return step


def _gather_step(op: Gather, w: str) -> Step:
    def step(values: Values, b: Sequence[object], consts: Sequence[int]) -> None:
        source, indices = _tensor(values[op.source]), _tensor(values[op.indices])
        out = np.array(_tensor(values[op.init]), copy=True)
        mask = _tensor(values[op.mask]) if op.mask >= 0 else None
        batch_shape = indices.shape[:op.batch_rank]
        if out.shape[:op.batch_rank] != batch_shape:
            raise RuntimeFault(f"{w}: gather into {out.shape} for indices {indices.shape}")
        slice_shape = out.shape[op.batch_rank:]
        for batch, tw, sw in _windows(op, indices, mask, source.shape, slice_shape):
            at = batch + sw
            out[at] = source[tw].reshape(np.shape(out[at]))
        values.append(out)
    return step


def _index_space(shape: tuple[int, ...]) -> list[np.ndarray]:
    """One int64 array per dimension, broadcastable to `shape`: each element's index there."""
    return [np.arange(n, dtype=np.int64).reshape([-1 if d == i else 1 for d in range(len(shape))])
            for i, n in enumerate(shape)]


def _inside(coords: list[np.ndarray], shape: tuple[int, ...], space: tuple[int, ...]) -> np.ndarray:
    inside = np.ones(space, dtype=bool)
    for c, n in zip(coords, shape):
        inside &= (c >= 0) & (c < n)
    return inside


def _mapped(op: MapLoad | MapStore, space: tuple[int, ...], consts: Sequence[int], w: str
            ) -> tuple[list[np.ndarray], np.ndarray]:
    """The region run over every index of `space`: its coordinates (one int64 array of `space`'s
    shape per dimension of the mapped tensor) and its last yield (map_load's padding,
    map_store's mask)."""
    plan = plan_body(op.body, len(space), 0, op.yields, False, w)
    *coords, last = evaluate_body(plan, list(_index_space(space)), None, consts)
    return [np.broadcast_to(np.asarray(c, np.int64), space) for c in coords], np.asarray(last)


def _map_load_step(op: MapLoad, w: str) -> Step:
    def step(values: Values, b: Sequence[object], consts: Sequence[int]) -> None:
        source, init = _tensor(values[op.source]), _tensor(values[op.init])
        space = init.shape
        coords, pad = _mapped(op, space, consts, w)
        inside = _inside(coords, source.shape, space)
        picked = source[tuple(np.where(inside, c, 0) for c in coords)] if source.size else \
            np.zeros(space, source.dtype)
        values.append(np.where(inside, picked, _to(pad, init.dtype)).astype(init.dtype))
    return step


def _map_store_step(op: MapStore, w: str) -> Step:
    def step(values: Values, b: Sequence[object], consts: Sequence[int]) -> None:
        x, out = _tensor(values[op.input]), np.array(_tensor(values[op.init]), copy=True)
        space = x.shape
        coords, mask = _mapped(op, space, consts, w)
        keep = _inside(coords, out.shape, space) & np.broadcast_to(mask.astype(bool), space)
        # Row-major order, the later index winning: numpy assigns repeated indices in order.
        out[tuple(c[keep] for c in coords)] = x[keep]
        values.append(out)
    return step

"""What each value of a kernel description is, before any code is emitted: its element type and
shape, and whether it is computed on demand per element (elementwise ops, broadcasts, transposes,
fills: these fuse into whoever reads them) or needs loops of its own and memory to land in
(reductions and contractions: the dispatch's roots)."""

from __future__ import annotations

from dataclasses import dataclass

from weir.format import reference_kernel as k

# A value: (op number, result number). Single-result ops are (n, 0); `Result` ops are resolved to
# the multi-result op they select from, so every consumer sees the producer itself.
ValueRef = tuple[int, int]


@dataclass(frozen=True)
class GenericView:
    """A `Generic` or `Reduce` in one form: operands, per-operand loop maps, iterator kinds."""

    inputs: tuple[ValueRef, ...]
    outputs: tuple[ValueRef, ...]
    maps: tuple[tuple[int, ...], ...]
    iterators: tuple[str, ...]
    body: tuple[k.ScalarOp, ...]
    yields: tuple[int, ...]

    @property
    def reduces(self) -> bool:
        return any(it != "parallel" for it in self.iterators)


class KernelValues:
    def __init__(self, entry: k.EntryPoint) -> None:
        self.entry = entry
        self.ops = entry.ops
        self.dtype: dict[ValueRef, str] = {}
        self.shape: dict[ValueRef, k.Shape] = {}
        self.views: dict[int, GenericView] = {}
        for n, op in enumerate(self.ops):
            self._describe(n, op)

    def ref(self, n: int) -> ValueRef:
        op = self.ops[n]
        if isinstance(op, k.Result):
            return (self.ref(op.source)[0], op.index)
        return (n, 0)

    def is_root(self, n: int) -> bool:
        """Needs its own loops and memory: reductions and contractions."""
        op = self.ops[n]
        if isinstance(op, (k.Matmul, k.Reduce, k.Conv2D, k.Pool2D)):
            return True
        if isinstance(op, k.Generic):
            return self.views[n].reduces
        return False

    def _same_as(self, n: int, v: int) -> None:
        r = self.ref(v)
        self.dtype[(n, 0)], self.shape[(n, 0)] = self.dtype[r], self.shape[r]

    def _describe(self, n: int, op: k.KernelOp) -> None:
        if isinstance(op, (k.Load, k.Empty)):
            self.dtype[(n, 0)], self.shape[(n, 0)] = op.dtype, op.shape
        elif isinstance(op, k.Fill):
            self._same_as(n, op.init)
        elif isinstance(op, (k.Matmul, k.Transpose, k.Broadcast, k.Conv2D, k.Pool2D)):
            self._same_as(n, op.init)
        elif isinstance(op, k.Generic):
            view = GenericView(tuple(self.ref(v) for v in op.inputs),
                               tuple(self.ref(v) for v in op.outputs), op.maps, op.iterators,
                               op.body, op.yields)
            self._results(n, view)
        elif isinstance(op, k.Reduce):
            rank = len(self.shape[self.ref(op.inputs[0])])
            kept = tuple(d for d in range(rank) if d not in op.dimensions)
            view = GenericView(tuple(self.ref(v) for v in op.inputs),
                               tuple(self.ref(v) for v in op.inits),
                               (tuple(range(rank)),) * len(op.inputs) + (kept,) * len(op.inits),
                               tuple("reduction" if d in op.dimensions else "parallel"
                                     for d in range(rank)), op.body, op.yields)
            self._results(n, view)

    def _results(self, n: int, view: GenericView) -> None:
        self.views[n] = view
        for i, out in enumerate(view.outputs):
            self.dtype[(n, i)], self.shape[(n, i)] = self.dtype[out], self.shape[out]

"""What each value of a kernel description is, before any code is emitted: its element type and
shape, and whether it is computed on demand per element (elementwise ops, broadcasts, transposes,
fills, slices, reshapes: these fuse into whoever reads them) or needs loops of its own and memory to land in
(reductions, contractions and inserts: the dispatch's roots).

An insert is a root rather than a per-element select between source and destination: as loops
it writes the destination, then the source over its window, reading every value only where it
exists (a select would read the source at a clamped index for every element, which is out of
bounds when the source is empty) and letting a chain of inserts share one memory (`in_place`).

The exception is a padded window input (`padded_inputs`): an insert of a static, non-empty
source into a constant fill, read only as the input of convolutions and poolings. They read it
through the window's bounds, the pad's values where the window leaves the source, so the
padded copy of an activation is never written (form-dispatch-regions fuses the pad for this)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TypeGuard

from weir.format import kernel_description as k

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
    captures: tuple[ValueRef, ...] = ()  # what the body's `extract`s read
    # Per body op: its number among the entry's checks (`KernelValues.checks`), or -1.
    check_of: tuple[int, ...] = ()

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
        # The messages of the entry's checks (`extract`, `assert`), the generics' in op order: a
        # failed check is reported to the runtime by its number here.
        self.checks: tuple[str, ...] = ()
        for n, op in enumerate(self.ops):
            self._describe(n, op)
        self.padded_inputs = frozenset(n for n, op in enumerate(self.ops)
                                       if isinstance(op, k.InsertSlice) and self._pads_input(n, op))

    def ref(self, n: int) -> ValueRef:
        op = self.ops[n]
        if isinstance(op, k.Result):
            return (self.ref(op.source)[0], op.index)
        return (n, 0)

    def is_root(self, n: int) -> bool:
        """Needs its own loops and memory: reductions and contractions."""
        op = self.ops[n]
        if n in self.padded_inputs:
            return False
        if isinstance(op, (k.Matmul, k.Reduce, k.Conv2D, k.Pool2D, k.InsertSlice, k.Sort, k.Scan,
                           k.Scatter, k.Gather, k.MapLoad, k.MapStore)):
            return True
        if isinstance(op, k.Generic):
            return self.views[n].reduces
        return False

    def in_place(self) -> dict[int, int]:
        """Inserts whose destination is an insert used by nothing else: destination -> the insert
        that writes into the destination's memory (a concat's chain then fills one tensor)."""
        shared: dict[int, int] = {}
        for n, op in enumerate(self.ops):
            d = op.dest if isinstance(op, k.InsertSlice) else -1
            if d >= 0 and isinstance(self.ops[d], k.InsertSlice) and \
                    sum(_mentions(user, d) for user in self.ops[d + 1:]) == 1:
                shared[d] = n
        return shared

    def _pads_input(self, n: int, op: k.InsertSlice) -> bool:
        """Insert `n` is a pad that window ops read in place: unit steps, same rank, a fill
        of a constant for destination, a static source with elements, static offsets, and no
        user but the input of a `Conv2D` or `Pool2D`, or the NCHW -> NHWC transpose that only
        `Conv2D`s read as their input (an exporter's padded image: `padded_nchw_row_copy`)."""
        source = self.shape[self.ref(op.source)]
        if op.dropped or any(st != 1 for st in op.strides) or \
                not all(isinstance(o, int) for o in op.offsets) or \
                not all(isinstance(d, int) and d > 0 for d in source) or \
                not isinstance(self.ops[op.dest], k.Fill):
            return False
        users = [(m, u) for m, u in enumerate(self.ops[n + 1:], n + 1) if reads(u, n)]
        return bool(users) and all(
            isinstance(u, (k.Conv2D, k.Pool2D)) and u.input == n and reads(u, n) == 1 or
            self._to_nhwc_for_convs(m, u, n) for m, u in users)

    def _to_nhwc_for_convs(self, m: int, op: k.KernelOp, n: int) -> bool:
        """Op `m` is the transpose of value n from NCHW to NHWC that only `Conv2D`s read, as
        their input."""
        if not nchw_to_nhwc(op) or op.input != n or op.init == n:
            return False
        users = [u for u in self.ops[m + 1:] if reads(u, m)]
        return bool(users) and all(isinstance(u, k.Conv2D) and u.input == m and
                                   reads(u, m) == 1 for u in users)

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
        elif isinstance(op, k.InsertSlice):
            self._same_as(n, op.dest)
        elif isinstance(op, k.Reshape):
            self.dtype[(n, 0)], self.shape[(n, 0)] = self.dtype[self.ref(op.input)], op.shape
        elif isinstance(op, k.Slice):
            r = self.ref(op.input)
            self.dtype[(n, 0)] = self.dtype[r]
            self.shape[(n, 0)] = tuple(s for d, s in enumerate(op.sizes) if d not in op.dropped)
        elif isinstance(op, k.Generic):
            checked = iter(range(len(self.checks), len(self.checks) + len(op.checks)))
            view = GenericView(tuple(self.ref(v) for v in op.inputs),
                               tuple(self.ref(v) for v in op.outputs), op.maps, op.iterators,
                               op.body, op.yields, tuple(self.ref(v) for v in op.captures),
                               tuple(next(checked) if s.op in k.CHECKED_SCALAR_OPS else -1
                                     for s in op.body))
            self.checks += op.checks
            self._results(n, view)
        elif isinstance(op, k.Sort):
            for i, v in enumerate(op.operands):
                r = self.ref(v)
                self.dtype[(n, i)], self.shape[(n, i)] = self.dtype[r], self.shape[r]
        elif isinstance(op, k.Scan):
            for i, v in enumerate((op.output, op.accumulator)):
                r = self.ref(v)
                self.dtype[(n, i)], self.shape[(n, i)] = self.dtype[r], self.shape[r]
        elif isinstance(op, k.Scatter):
            self._same_as(n, op.original)
        elif isinstance(op, k.Gather | k.MapLoad | k.MapStore):
            self._same_as(n, op.init)
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


# The fields holding the values an op reads, for the ops whose operands `reads` counts exactly.
_OPERAND_FIELDS: dict[type, tuple[str, ...]] = {
    k.Generic: ("inputs", "outputs", "captures"), k.Reduce: ("inputs", "inits"),
    k.Conv2D: ("input", "filter", "init"), k.Matmul: ("lhs", "rhs", "init"),
    k.Pool2D: ("input", "init"), k.Transpose: ("input", "init"), k.Broadcast: ("input", "init"),
    k.Reshape: ("input",), k.Slice: ("input",), k.InsertSlice: ("source", "dest"),
    k.Fill: ("init",), k.Store: ("value",), k.Result: ("source",), k.Load: (), k.Empty: (),
}


def nchw_to_nhwc(op: k.KernelOp) -> TypeGuard[k.Transpose]:
    """`op` brings an NCHW image to NHWC (what convert-conv-to-channels-last puts before a
    convolution of an exporter's image)."""
    return isinstance(op, k.Transpose) and tuple(op.permutation) == (0, 2, 3, 1)


def reads(op: k.KernelOp, n: int) -> int:
    """How often `op` reads value number `n`: exactly for the ops of `_OPERAND_FIELDS` (a
    pad's users must be told apart from ops whose sizes or axes happen to equal n), by
    `_mentions` for the others."""
    names = _OPERAND_FIELDS.get(type(op))
    if names is None:
        return _mentions(op, n)
    count = 0
    for name in names:
        value = getattr(op, name)
        count += sum(1 for x in (value if isinstance(value, tuple) else (value,)) if x == n)
    return count


def _mentions(op: k.KernelOp, n: int) -> int:
    """How often value number `n` may be an operand of `op`: every int in its fields that equals
    n counts (sizes, axes and the like too), so a kernel op added later can only make this
    over-count, which keeps `in_place` safe."""
    count = 0
    for f in fields(op):
        value = getattr(op, f.name)
        items = value if isinstance(value, tuple) else (value,)
        count += sum(1 for x in items if type(x) is int and x == n)
    return count

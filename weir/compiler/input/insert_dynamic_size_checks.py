"""Checks on the host, before an op's dispatch runs, every equality between sizes that the op
implies but its types leave open (a `?` on one side): the operands of an elementwise op, the
loop dimensions a linalg op's indexing maps share (a matmul's contraction dimension, a batch
dimension, a broadcast or reduced operand against its output), a convolution's or pooling's
output against its input and window, a slice's sizes against its source or result, a concat's
operands and result, a reshape's groups and element count, a cast's dimensions, the sizes a
transfer states. (Slice bounds, an inequality, are checked by each target's dispatch.)

Why: the generated code trusts these sizes. A `?xf32` addition of 5 and 4 elements would read
past the end of the smaller buffer (a wrong result, or a crash of the whole process, on
llvm-cpu), and a matmul would silently use one operand's contraction size. Each equality becomes
a `util.assert_eq` right before its op, whose failure names the function, the op's location,
both operands and both sizes, and ends the call before the op's dispatch runs.

Why here, in the input phase: the program is still the user's own, so the message can name the
op as written (`arith.addf`, `linalg.matvec`), its location and its operands' names; later
passes rewrite ops into generics and inline calls, which loses all three.

The sizes compared come from `host_sizes.py`, which reads them off what made each value rather
than off the value itself. Sizes equal by construction (the same value, equal constants, or an
equality already checked earlier on the way) need no check; constants that differ are a compile
error."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from weir.compiler.input.host_sizes import HostSizes, slice_window, static, sum_of, \
    tensor_operands
from weir.compiler.input.supported_ops import ELEMENTWISE_OPS
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.tensor_shapes import as_value, kept_dims, product, Size, sizes_of
from weir.dialects import flow, iree_linalg_ext, linalg_ext, util
from weir.ir.diagnostics import error_at, location_of
from weir.ir.upstream import (
    AffineDimExpr,
    arith,
    Block,
    Builder,
    func,
    InsertPoint,
    linalg,
    LinalgNamedOp,
    ModuleOp,
    Operation,
    OpResult,
    SSAValue,
    StringAttr,
    tensor,
    TensorType,
)
from weir.ir.window_ops import window_values, WINDOW_LAYOUTS


@dataclass(frozen=True)
class Side:
    """One side of an equality: what it is, in words, and its size."""

    what: str
    size: Size


@dataclass(frozen=True)
class Equal:
    lhs: Side
    rhs: Side


class InsertDynamicSizeChecks(Pass):
    flag = "insert-dynamic-size-checks"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        sizes = HostSizes(module)
        for fn in module.body.block.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                _FunctionChecks(fn, sizes).run()
        sizes.erase_unused()


# ------------------------------------------------------------------------------------ checks


def _name(op: Operation, k: int) -> str:
    """`operand 1 (%b)`; a value the program gave no name is named by the op that made it."""
    value = op.operands[k]
    if value.name_hint:
        return f"operand {k} (%{value.name_hint})"
    if isinstance(value, OpResult):
        _, line, _ = location_of(value.op)
        return f"operand {k} (the result of '{value.op.name}' on line {line})"
    return f"operand {k}"


def _dim(op: Operation, k: int, j: int) -> str:
    return f"dimension {j} of {_name(op, k)}"


@dataclass
class _FunctionChecks:
    """The checks of one function, its ops visited in program order so that a check made
    earlier spares a later one the same comparison."""

    fn: func.FuncOp
    sizes: HostSizes
    # Equalities already asserted, by the block whose later ops (and their regions) they hold in.
    facts: dict[Block, list[tuple[Size, Size]]] = field(default_factory=dict)

    def run(self) -> None:
        for op in list(self.fn.walk()):
            equalities = list(self._equalities(op))
            if equalities:
                self._check(op, equalities)

    def _equalities(self, op: Operation) -> Iterator[Equal]:
        """What `op` requires of its operands' (and result type's) sizes."""
        if op.name in ELEMENTWISE_OPS and any(isinstance(r.type, TensorType) for r in op.results):
            yield from self._elementwise(op)
        elif op.name in WINDOW_LAYOUTS:
            yield from self._by_maps(op)
            yield from self._windows(op)
        elif isinstance(op, linalg.GenericOp | linalg.TransposeOp | LinalgNamedOp):
            yield from self._by_maps(op)
        elif isinstance(op, linalg.BroadcastOp):
            added = set(op.dimensions.get_values())
            kept = [i for i in range(len(self._shape(op.init))) if i not in added]
            yield from self._paired(op, 0, 1, list(enumerate(kept)))
        elif isinstance(op, linalg.ReduceOp):
            reduced = set(op.dimensions.get_values())
            kept = [i for i in range(len(self._shape(op.input))) if i not in reduced]
            yield from self._paired(op, 0, 1, [(i, j) for j, i in enumerate(kept)])
        elif isinstance(op, linalg_ext.MapOp | linalg_ext.SoftmaxOp):
            last = len(op.operands) - 1
            for k in range(last):
                yield from self._paired(op, k, last, [(j, j) for j in range(len(
                    self._shape(op.operands[k])))])
        elif isinstance(op, iree_linalg_ext.ExtOp):
            for a, b, dims in op.equal_dims():
                yield from self._paired(op, a, b, dims)
        else:
            yield from self._tensor_op(op)

    # --- one rule per kind of op ------------------------------------------------------------

    def _elementwise(self, op: Operation) -> Iterator[Equal]:
        """Every tensor operand, and the result type, has the first tensor operand's shape."""
        (first, value), *others = tensor_operands(op)
        for k, _ in others:
            yield from self._paired(op, first, k, [(j, j) for j in range(len(self._shape(value)))])
        result = op.results[0].type
        assert isinstance(result, TensorType)
        for j, d in enumerate(result.get_shape()):
            if d >= 0:
                yield Equal(Side(_dim(op, first, j), self.sizes.of(value)[j]),
                            Side(f"dimension {j} of the result type", d))

    def _by_maps(self, op: Operation) -> Iterator[Equal]:
        """Operand dimensions indexed by the same loop (a plain `d<i>` in their maps) agree:
        the first one met sizes the loop."""
        maps = op.get_indexing_maps().data  # type: ignore[attr-defined]
        loops: dict[int, Side] = {}
        for k, (value, amap) in enumerate(zip(op.operands, maps, strict=True)):
            if not isinstance(value.type, TensorType):
                continue
            for j, e in enumerate(amap.data.results):
                if not isinstance(e, AffineDimExpr):
                    continue
                side = Side(_dim(op, k, j), self.sizes.of(value)[j])
                if e.position in loops:
                    yield Equal(loops[e.position], side)
                else:
                    loops[e.position] = side

    def _windows(self, op: Operation) -> Iterator[Equal]:
        """Each spatial size of the output is what the input and the dilated, strided window
        give it, as the verifier requires of static shapes: (in - span) / stride + 1, with span
        = dilation * (window - 1) + 1 (no output row when the input is smaller than a span)."""
        layout = WINDOW_LAYOUTS[op.name]
        strides, dilations = window_values(op, "strides"), window_values(op, "dilations")
        x, w, out = (self.sizes.of(v) for v in op.operands)
        b = self.sizes.builder(InsertPoint.before(op))
        for axis, letter in enumerate(layout.spatial):
            i, k, o = (letters.index(letter) for letters in
                       (layout.input, layout.window, layout.output))
            if all(isinstance(s, int) for s in (x[i], w[k], out[o])):
                continue  # the verifier checked it
            expected = _window_output(b, x[i], w[k], strides[axis], dilations[axis])
            yield Equal(Side(f"dimension {o} ({letter}) of {_name(op, 2)}", out[o]),
                        Side(f"the {letter} size {_name(op, 0)} and {_name(op, 1)} give it "
                             f"(stride {strides[axis]}, dilation {dilations[axis]})", expected))

    def _tensor_op(self, op: Operation) -> Iterator[Equal]:
        """Slices against their windows, concats, reshapes and casts, transfers."""
        if isinstance(op, tensor.ExtractSliceOp):
            t = op.result.type
            assert isinstance(t, TensorType)
            window = slice_window(op)
            for j, (i, d) in enumerate(zip(kept_dims(window, t.get_shape(), op), t.get_shape())):
                if d >= 0:
                    yield Equal(Side(f"size {i} of the slice", window[i]),
                                Side(f"dimension {j} of the result type", d))
        elif isinstance(op, tensor.InsertSliceOp):
            window = slice_window(op)
            source = self.sizes.of(op.source)
            for j, i in enumerate(kept_dims(window, self._shape(op.source), op)):
                yield Equal(Side(_dim(op, 0, j), source[j]), Side(f"size {i} of the slice",
                                                                 window[i]))
        elif isinstance(op, tensor.ConcatOp):
            yield from self._concat(op)
        elif isinstance(op, tensor.CastOp):
            source = self.sizes.of(op.source)
            t = op.dest.type
            assert isinstance(t, TensorType)
            for j, d in enumerate(t.get_shape()):
                if d >= 0:
                    yield Equal(Side(_dim(op, 0, j), source[j]),
                                Side(f"dimension {j} of the result type", d))
        elif isinstance(op, tensor.ExpandShapeOp):
            yield from self._expand(op)
        elif isinstance(op, tensor.ReshapeOp):
            b = self.sizes.builder(InsertPoint.before(op))
            yield Equal(Side(f"the element count of {_name(op, 0)}",
                             product(b, self.sizes.of(op.source))),
                        Side("the result's", product(b, self.sizes.of(op.result))))
        elif isinstance(op, flow.TensorTransferOp):
            t = op.source.type
            assert isinstance(t, TensorType)
            given = sizes_of(t, list(op.source_dims))
            for j, (actual, stated) in enumerate(zip(self.sizes.of(op.source), given)):
                yield Equal(Side(_dim(op, 0, j), actual),
                            Side(f"size {j} of the transfer's {{...}}", static(stated)))

    def _expand(self, op: tensor.ExpandShapeOp) -> Iterator[Equal]:
        """Each source dimension is the product of the result dimensions it expands into."""
        source = self.sizes.of(op.src)
        result = self.sizes.of(op.result)
        b = self.sizes.builder(InsertPoint.before(op))
        for j, group in enumerate(op.reassociation.data):
            members = [int(i.value.data) for i in group.data]  # type: ignore[attr-defined]
            parts = [result[i] for i in members]
            if all(isinstance(s, int) for s in (source[j], *parts)):
                continue
            yield Equal(Side(_dim(op, 0, j), source[j]),
                        Side("the product of result dimensions " +
                             ", ".join(str(i) for i in members), product(b, parts)))

    def _concat(self, op: tensor.ConcatOp) -> Iterator[Equal]:
        """The inputs agree but along the axis, and a static result is their sum along it."""
        axis = op.dim.value.data
        rank = len(self._shape(op.inputs[0]))
        for k in range(1, len(op.inputs)):
            yield from self._paired(op, 0, k, [(j, j) for j in range(rank) if j != axis])
        d = self._shape(op.result)[axis]
        if d >= 0:
            total = sum_of(self.sizes.builder(InsertPoint.before(op)),
                         [self.sizes.of(x)[axis] for x in op.inputs])
            yield Equal(Side(f"the sum of dimension {axis} of the operands", total),
                        Side(f"dimension {axis} of the result type", d))

    def _paired(self, op: Operation, a: int, b: int,
                dims: list[tuple[int, int]]) -> Iterator[Equal]:
        """Dimension i of operand a equals dimension j of operand b, for each (i, j)."""
        sa, sb = self.sizes.of(op.operands[a]), self.sizes.of(op.operands[b])
        for i, j in dims:
            yield Equal(Side(_dim(op, a, i), sa[i]), Side(_dim(op, b, j), sb[j]))

    @staticmethod
    def _shape(value: SSAValue) -> tuple[int, ...]:
        t = value.type
        assert isinstance(t, TensorType)
        return t.get_shape()

    # --- emitting ---------------------------------------------------------------------------

    def _check(self, op: Operation, equalities: list[Equal]) -> None:
        filename, line, col = location_of(op)
        where = f"{filename}:{line}:{col}: '{op.name}' in @{self.fn.sym_name.data}"
        b = self.sizes.builder(InsertPoint.before(op))
        block = op.parent_block()
        assert block is not None
        for eq in equalities:
            lhs, rhs = self.sizes.canonical(eq.lhs.size), self.sizes.canonical(eq.rhs.size)
            if isinstance(lhs, int) and isinstance(rhs, int):
                if lhs != rhs:
                    raise error_at(op, f"'{op.name}': {eq.lhs.what} differs from {eq.rhs.what}: "
                                       f"{lhs} vs {rhs}")
                continue
            if self._known_equal(block, lhs, rhs):
                continue
            b.insert(util.AssertEqOp.build(
                operands=[as_value(b, lhs), as_value(b, rhs)],
                properties={"message": StringAttr(f"{where}: {eq.lhs.what} differs from "
                                                  f"{eq.rhs.what}")}))
            self.facts.setdefault(block, []).append((lhs, rhs))

    def _known_equal(self, block: Block, lhs: Size, rhs: Size) -> bool:
        """Whether the checks already made on the way to `block` (in it, or in a block that
        encloses it) imply lhs == rhs."""
        if _key(lhs) == _key(rhs):
            return True
        parent: dict[tuple[str, int], tuple[str, int]] = {}

        def root(x: tuple[str, int]) -> tuple[str, int]:
            while x in parent:
                x = parent[x]
            return x
        current: Block | None = block
        while current is not None:
            for x, y in self.facts.get(current, []):
                rx, ry = root(_key(x)), root(_key(y))
                if rx != ry:
                    parent[rx] = ry
            owner = current.parent_op()
            current = owner.parent_block() if owner is not None else None
        return root(_key(lhs)) == root(_key(rhs))


def _key(size: Size) -> tuple[str, int]:
    """A size as a dictionary key: a static size by value, an index value by identity."""
    return ("static", size) if isinstance(size, int) else ("value", id(size))


def _window_output(b: Builder, size: Size, window: Size, stride: int, dilation: int) -> Size:
    """max(size - span + stride, 0) / stride with span = dilation * (window - 1) + 1."""
    if isinstance(size, int) and isinstance(window, int):
        return max(size - (dilation * (window - 1) + 1) + stride, 0) // stride
    if isinstance(window, int):  # size - (span - stride), the constant folded
        room = b.insert(arith.SubiOp(as_value(b, size), as_value(
            b, dilation * (window - 1) + 1 - stride))).result
    else:
        span = b.insert(arith.AddiOp(b.insert(arith.MuliOp(window, as_value(b, dilation))).result,
                                     as_value(b, 1 - dilation))).result
        room = b.insert(arith.SubiOp(as_value(b, size), span)).result
        room = b.insert(arith.AddiOp(room, as_value(b, stride))).result
    positive = b.insert(arith.MaxSIOp(room, as_value(b, 0))).result
    return b.insert(arith.DivUIOp(positive, as_value(b, stride))).result

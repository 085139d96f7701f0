"""Rewrites the named convolutions and poolings no kernel implements onto those that the targets'
Conv2D/Pool2D kernels run (`KERNEL_WINDOWS`: 2-D, NHWC or NCHW, plain or depthwise, max or sum
pooling), one layout difference at a time:

- min pooling is max pooling of the negated input, negated back (floats: negf; integers: the
  bitwise not, which reverses signed order without overflowing);
- a group dimension G, or a depthwise channel multiplier M, is unrolled: each group's (or
  multiplier's) slices go through the op without it, and its result is inserted into the
  output (grouped convolutions have few groups; a group per channel is a depthwise op already);
- a depth dimension D is unrolled over the window's depth only: for each kd, the input's depth
  slice kd*dilation, kd*dilation + stride, ... is folded into the batch (a reshape, after a
  transpose where D does not follow N), and the 2-D ops accumulate into one output;
- a 1-D op gets a unit H dimension (reshapes only).
A pooling written as a linalg.generic (input map `d_out * stride + d_window * dilation` per
spatial dimension, a shape-only window, a max/min/sum body: what torch-mlir makes of 3-D
MaxPool) is rewritten the same way, as the NCDHW-like pooling it is; no named op has its layout.
The rewritten ops take static shapes: a decomposed op with a dynamic size is an error naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from weir.compiler.input.windows import named_window, pooling_generic, Window
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.tensor_shapes import reassociation
from weir.dialects.linalg_windows import window_op
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    ArrayAttr,
    arith,
    Block,
    Builder,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    EmptyOp,
    InsertPoint,
    IntegerType,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)
from weir.ir.window_ops import KERNEL_WINDOWS, WINDOW_LAYOUTS

_I64 = IntegerType(64)


class DecomposeWindowOps(Pass):
    flag = "decompose-window-ops"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            if op.parent is None:
                continue
            window = pooling_generic(op) if isinstance(op, linalg.GenericOp) else \
                named_window(op)
            if window is None:
                continue
            for value in op.operands:
                t = value.type
                if not isinstance(t, TensorType) or any(s < 0 for s in t.get_shape()):
                    raise error_at(op, f"'{op.name}' with dynamic sizes is not supported "
                                       f"(only its static forms are rewritten onto the 2-D "
                                       f"kernels), got {t}")
            result = _Rewriter(Builder(InsertPoint.before(op)), op).lower(window)
            op.results[0].replace_all_uses_with(result)
            op.detach()
            op.erase()


class _Rewriter:
    def __init__(self, b: Builder, op: Operation) -> None:
        self.b = b
        self.op = op

    def insert(self, new: Operation) -> SSAValue:
        new.location = self.op.location
        return self.b.insert(new).results[0]

    def lower(self, w: Window) -> SSAValue:
        if w.pooling == "min":
            negated = replace(w, x=self.negate(w.x), init=self.negate(w.init), pooling="max")
            return self.negate(self.lower(negated))
        for letter in "GM":
            if letter in w.w_letters:
                return self.unroll(w, letter)
        if "D" in w.strides:
            return self.depth(w)
        if list(w.strides) == ["W"]:
            return self.one_d(w)
        return self.kernel(w)

    # --------------------------------------------------------------------------- the steps

    def negate(self, value: SSAValue) -> SSAValue:
        t = _type(value)
        if isinstance(t.element_type, IntegerType):
            ones = self.insert(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [-1])))
            return self.insert(arith.XOrIOp(value, ones))
        return self.insert(arith.NegfOp(value))

    def unroll(self, w: Window, letter: str) -> SSAValue:
        """Each index of `letter` through the op without that dimension, inserted into init."""
        out = w.init
        for i in range(_size(w.init, w.out_letters, letter)):
            part = replace(
                w, x=self.pick(w.x, w.x_letters, letter, i), x_letters=_drop(w.x_letters, letter),
                w=self.window(w, self.pick, w.w_letters, letter, i),
                w_letters=_drop(w.w_letters, letter),
                init=self.pick(w.init, w.out_letters, letter, i),
                out_letters=_drop(w.out_letters, letter))
            out = self.put(self.lower(part), out, w.out_letters.index(letter), i)
        return out

    def depth(self, w: Window) -> SSAValue:
        """Σ over the window's depth kd of the 2-D op on the input's depth slice for kd, each
        depth folded into the batch; the 2-D ops accumulate into the folded init."""
        stride, dilation = w.strides["D"], w.dilations["D"]
        depth = _size(w.init, w.out_letters, "D")
        acc = self.fold(w.init, w.out_letters)
        rest = replace(w, x_letters=_drop(w.x_letters, "D"), w_letters=_drop(w.w_letters, "D"),
                       out_letters=_drop(w.out_letters, "D"),
                       strides={k: v for k, v in w.strides.items() if k != "D"},
                       dilations={k: v for k, v in w.dilations.items() if k != "D"})
        for kd in range(_size(w.w, w.w_letters, "D")):
            axis = w.x_letters.index("D")
            x = self.slice(w.x, axis, kd * dilation, depth, stride)
            acc = self.lower(replace(rest, x=self.fold(x, w.x_letters),
                                     w=self.window(w, self.pick, w.w_letters, "D", kd),
                                     init=acc))
        return self.unfold(acc, w.out_letters, _type(w.init))

    def one_d(self, w: Window) -> SSAValue:
        """The 1-D op as a 2-D one with a unit H before W (reshapes, no copies)."""
        def unit_h(letters: str) -> str:
            return letters.replace("W", "HW")
        out_t = _type(w.init)
        two_d = replace(
            w, x=self.expand_unit(w.x, w.x_letters.index("W")), x_letters=unit_h(w.x_letters),
            w=self.window(w, self.expand_unit, w.w_letters.index("W")),
            w_letters=unit_h(w.w_letters),
            init=self.expand_unit(w.init, w.out_letters.index("W")),
            out_letters=unit_h(w.out_letters), strides={"H": 1, **w.strides},
            dilations={"H": 1, **w.dilations})
        result = self.lower(two_d)
        return self.collapse(result, _merge_groups(len(out_t.get_shape()),
                                                   w.out_letters.index("W")), out_t)

    def kernel(self, w: Window) -> SSAValue:
        for name in KERNEL_WINDOWS:
            layout = WINDOW_LAYOUTS[name]
            if (layout.input, layout.window, layout.output, layout.pooling) == \
                    (w.x_letters, w.w_letters, w.out_letters, w.pooling):
                break
        else:
            raise error_at(self.op, f"'{self.op.name}': no kernel runs its layout once "
                                    f"rewritten ({w.x_letters}, {w.w_letters}, {w.out_letters})")
        rank = TensorType(_I64, [len(layout.spatial)])
        cls = window_op(name)
        new = cls([w.x, w.w], [w.init], [w.init.type],  # type: ignore[call-arg]
                  strides=DenseIntOrFPElementsAttr.from_list(
                      rank, [w.strides[c] for c in layout.spatial]),
                  dilations=DenseIntOrFPElementsAttr.from_list(
                      rank, [w.dilations[c] for c in layout.spatial]))
        return self.insert(new)

    # ------------------------------------------------------------------------ tensor moves

    def window(self, w: Window, move: Callable[..., SSAValue], *args: object) -> SSAValue:
        """The filter moved by `move(w.w, *args)`; a pooling window (only its shape is read)
        becomes a new tensor.empty of the moved shape, so that no dispatch loads it."""
        if w.pooling is None:
            return move(w.w, *args)
        scratch = Block()
        b, self.b = self.b, Builder(InsertPoint.at_end(scratch))
        try:
            shape = _type(move(w.w, *args))
        finally:
            self.b = b
        for op in reversed(list(scratch.ops)):  # the moves were only for their type
            op.detach()
            op.erase()
        return self.insert(EmptyOp([], shape))

    def slice(self, value: SSAValue, axis: int, offset: int, size: int, stride: int,
              drop: bool = False) -> SSAValue:
        """`size` elements of `value` along `axis` from `offset`, `stride` apart (the axis
        dropped when `drop`, size 1)."""
        t = _type(value)
        shape = list(t.get_shape())
        offsets, strides = [0] * len(shape), [1] * len(shape)
        offsets[axis], strides[axis], shape[axis] = offset, stride, size
        result = [s for i, s in enumerate(shape) if not (drop and i == axis)]
        return self.insert(tensor.ExtractSliceOp.build(
            operands=[value, [], [], []], result_types=[TensorType(t.element_type, result)],
            properties={"static_offsets": DenseArrayBase.from_list(_I64, offsets),
                        "static_sizes": DenseArrayBase.from_list(_I64, shape),
                        "static_strides": DenseArrayBase.from_list(_I64, strides)}))

    def pick(self, value: SSAValue, letters: str, letter: str, index: int) -> SSAValue:
        """`value` at `index` of dimension `letter`, without that dimension; `value` itself
        when it has no such dimension (the input of a depthwise op with a multiplier)."""
        if letter not in letters:
            return value
        return self.slice(value, letters.index(letter), index, 1, 1, drop=True)

    def put(self, part: SSAValue, into: SSAValue, axis: int, index: int) -> SSAValue:
        shape = list(_type(into).get_shape())
        offsets = [0] * len(shape)
        offsets[axis], shape[axis] = index, 1
        return self.insert(tensor.InsertSliceOp.get(part, into, static_sizes=shape,
                                                    static_offsets=offsets))

    def fold(self, value: SSAValue, letters: str) -> SSAValue:
        """D moved next to N (a transpose where it is not already) and merged into it."""
        n, d = letters.index("N"), letters.index("D")
        if d != n + 1:
            order = [i for i in range(len(letters)) if i != d]
            order.insert(order.index(n) + 1, d)
            value = self.transpose(value, order)
        t = _type(value)
        shape = list(t.get_shape())
        merged = shape[:n] + [shape[n] * shape[n + 1]] + shape[n + 2:]
        return self.collapse(value, _merge_groups(len(shape) - 1, n),
                             TensorType(t.element_type, merged))

    def unfold(self, value: SSAValue, letters: str, out_t: TensorType) -> SSAValue:
        """The inverse of `fold` for the output, of type `out_t`."""
        n, d = letters.index("N"), letters.index("D")
        order = [i for i in range(len(letters)) if i != d]
        order.insert(order.index(n) + 1, d)
        shape = [out_t.get_shape()[i] for i in order]
        groups = _merge_groups(len(shape) - 1, n)
        value = self.insert(tensor.ExpandShapeOp(
            value, [], groups, shape, TensorType(out_t.element_type, shape)))
        if order == list(range(len(order))):
            return value
        return self.transpose(value, [order.index(i) for i in range(len(order))])

    def transpose(self, value: SSAValue, perm: list[int]) -> SSAValue:
        t = _type(value)
        shape = [t.get_shape()[p] for p in perm]
        init = self.insert(EmptyOp([], TensorType(t.element_type, shape)))
        return self.insert(linalg.TransposeOp(value, init, DenseArrayBase.from_list(_I64, perm)))

    def expand_unit(self, value: SSAValue, axis: int) -> SSAValue:
        """`value` with a unit dimension inserted before `axis`."""
        t = _type(value)
        shape = list(t.get_shape())
        shape.insert(axis, 1)
        return self.insert(tensor.ExpandShapeOp(
            value, [], _merge_groups(len(shape) - 1, axis), shape,
            TensorType(t.element_type, shape)))

    def collapse(self, value: SSAValue, groups: ArrayAttr, result: TensorType) -> SSAValue:
        return self.insert(tensor.CollapseShapeOp.build(
            operands=[value], result_types=[result], properties={"reassociation": groups}))


def _type(value: SSAValue) -> TensorType:
    t = value.type
    assert isinstance(t, TensorType)
    return t


def _size(value: SSAValue, letters: str, letter: str) -> int:
    return _type(value).get_shape()[letters.index(letter)]


def _drop(letters: str, letter: str) -> str:
    return letters.replace(letter, "")


def _merge_groups(rank: int, at: int) -> ArrayAttr:
    """The reassociation between a rank-`rank` shape and one with dimension `at` split in two
    (or two merged): [[0], ..., [at, at + 1], ..., [rank]]."""
    groups: list[list[int]] = []
    for i in range(rank):
        groups.append([i + (i > at)] if i != at else [at, at + 1])
    return reassociation(groups)

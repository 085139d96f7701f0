"""Rewrites tensor.pad and tensor.concat as what they are in memory: a destination
(`tensor.empty`, filled with the padding value for a pad) into which the source tensors are
inserted with `tensor.insert_slice`. Dispatch formation and the targets then know one op that
writes a window of a tensor instead of three, and a concat's inserts chain into one dispatch that
writes each element once.

Result sizes and offsets that are not static (dynamic source dims, dynamic low/high padding) are
computed on the host here, so the dispatch receives them as push constants like any dynamic dim.
A pad whose body computes its value (from the indices, or anything but a constant or a value
defined outside the pad) is a compile error at the pad."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.shapes import dynamic_dims
from weir.compiler.state import CompilationState
from weir.compiler.tensor_shapes import dynamic_of, index, Size, sizes_of
from weir.ir.diagnostics import error_at, locate_created
from weir.ir.upstream import (
    arith,
    Builder,
    DYNAMIC_INDEX,
    EmptyOp,
    InsertPoint,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)


def _add(b: Builder, x: Size, y: Size) -> Size:
    if isinstance(x, int) and isinstance(y, int):
        return x + y
    if x == 0 or y == 0:
        return y if x == 0 else x
    xv = index(b, x) if isinstance(x, int) else x
    yv = index(b, y) if isinstance(y, int) else y
    return b.insert(arith.AddiOp(xv, yv)).result


def _mixed(static: tuple[int, ...], dynamic: list[SSAValue]) -> list[Size]:
    """An op's static/dynamic index list as one list of sizes."""
    it = iter(dynamic)
    return [next(it) if s == DYNAMIC_INDEX else s for s in static]


def _insert(b: Builder, source: SSAValue, dest: SSAValue, offsets: list[Size],
            sizes: list[Size], where: Operation) -> SSAValue:
    op = tensor.InsertSliceOp.get(
        source, dest,
        static_sizes=[DYNAMIC_INDEX if not isinstance(s, int) else s for s in sizes],
        static_offsets=[DYNAMIC_INDEX if not isinstance(o, int) else o for o in offsets],
        static_strides=[1] * len(sizes),
        offsets=[o for o in offsets if not isinstance(o, int)],
        sizes=[s for s in sizes if not isinstance(s, int)])
    op.location = where.location
    return b.insert(op).result


def _destination(b: Builder, t: TensorType, sizes: list[Size], where: Operation) -> SSAValue:
    empty = EmptyOp(dynamic_of(t, sizes, b), t)
    empty.location = where.location
    return b.insert(empty).tensor


class DecomposePadAndConcat(Pass):
    flag = "decompose-pad-and-concat"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in [op for op in module.walk() if isinstance(op, tensor.PadOp | tensor.ConcatOp)]:
            new = self._pad(op) if isinstance(op, tensor.PadOp) else self._concat(op)
            locate_created(op)  # the size arithmetic too
            op.results[0].replace_all_uses_with(new)
            op.detach()
            op.erase()

    def _padding_value(self, op: tensor.PadOp, b: Builder) -> SSAValue:
        """The value the body yields: a constant (hoisted out of the body) or a value from
        outside the pad."""
        block = op.region.block
        body = list(block.ops)
        term = body[-1]
        unsupported = f"tensor.pad whose body computes its padding value is not supported " \
                      "(the body must yield a constant or a value defined outside the pad)"
        if not isinstance(term, tensor.YieldOp) or len(term.operands) != 1:
            raise error_at(op, unsupported)
        value = term.operands[0]
        owner = value.owner
        if not isinstance(owner, Operation):
            raise error_at(op, unsupported)  # a block argument: an index of the result
        if owner.parent_block() is not block:
            return value
        if isinstance(owner, arith.ConstantOp) and len(body) == 2:
            return b.insert(owner.clone()).result
        raise error_at(op, unsupported)

    def _pad(self, op: tensor.PadOp) -> SSAValue:
        b = Builder(InsertPoint.before(op))
        value = self._padding_value(op, b)
        source_t, result_t = op.source.type, op.result.type
        assert isinstance(source_t, TensorType) and isinstance(result_t, TensorType)
        source = sizes_of(source_t, dynamic_dims(op.source, InsertPoint.before(op)))
        low = _mixed(op.static_low.get_values(), list(op.low))
        high = _mixed(op.static_high.get_values(), list(op.high))
        sizes = [_add(b, _add(b, lo, s), hi) for lo, s, hi in zip(low, source, high)]
        fill = linalg.FillOp((value,), (_destination(b, result_t, sizes, op),), (result_t,))
        fill.location = op.location
        b.insert(fill)
        return _insert(b, op.source, fill.results[0], low, source, op)

    def _concat(self, op: tensor.ConcatOp) -> SSAValue:
        b = Builder(InsertPoint.before(op))
        axis = op.dim.value.data
        result_t = op.result.type
        pieces = []
        for v in op.inputs:
            t = v.type
            assert isinstance(t, TensorType)
            pieces.append((v, sizes_of(t, dynamic_dims(v, InsertPoint.before(op)))))
        starts: list[Size] = [0]  # each piece's offset along the axis; the last is the total
        for _, piece in pieces:
            starts.append(_add(b, starts[-1], piece[axis]))
        sizes = list(pieces[0][1])
        sizes[axis] = starts[-1]
        dest = _destination(b, result_t, sizes, op)
        for (v, piece), start in zip(pieces, starts):
            offsets: list[Size] = [0] * len(sizes)
            offsets[axis] = start
            dest = _insert(b, v, dest, offsets, piece, op)
        return dest

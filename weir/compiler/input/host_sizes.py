"""The sizes of tensor values as host values: every dimension as an int or an index value,
materialised once where it dominates every use of the tensor. The dynamic size checks compare
these; they are read off what made a value (a linalg op's output operand, an elementwise op's
first operand, a `tensor.empty`'s sizes, a call's arguments, ...), and only a value nothing
else sizes (a function or region argument, a loop's or branch's result) gets a `tensor.dim`:
a `tensor.dim` of a value dispatch formation would fuse into its consumer would keep that
producer alive as a dispatch of its own."""

from __future__ import annotations

from weir.compiler.input.supported_ops import ELEMENTWISE_OPS
from weir.compiler.tensor_shapes import as_value, kept_dims, reshaped_dims, Size, sizes_of
from weir.dialects import flow, linalg_ext
from weir.ir.upstream import (
    arith,
    Block,
    BlockArgument,
    Builder,
    DimOp,
    DYNAMIC_INDEX,
    EmptyOp,
    func,
    IndexType,
    InsertPoint,
    IntegerAttr,
    linalg,
    LinalgNamedOp,
    ModuleOp,
    Operation,
    OpResult,
    SSAValue,
    tensor,
    TensorType,
)


class HostSizes:
    """Every dimension of a tensor value, as an int or an index value on the host, made once
    where it dominates every use of the value: a `tensor.dim` right after the value, sizes
    derived from a producer's operands right before the producer."""

    def __init__(self, module: ModuleOp) -> None:
        self.functions = {fn.sym_name.data: fn for fn in module.body.block.ops
                          if isinstance(fn, func.FuncOp) and fn.body.blocks}
        self.known: dict[SSAValue, list[Size]] = {}
        self.created: list[Operation] = []
        self.last_after: dict[Operation | Block, Operation] = {}
        self.in_progress: set[str] = set()  # callees being looked into (recursion)

    def of(self, value: SSAValue) -> list[Size]:
        """The sizes of tensor `value`, one per dimension, in canonical form."""
        found = self.known.get(value)
        if found is None:
            t = value.type
            assert isinstance(t, TensorType)
            if all(d >= 0 for d in t.get_shape()):
                found = list(t.get_shape())
            else:
                found = self._derive(value, t)
            self.known[value] = found
        return found

    def canonical(self, size: Size) -> Size:
        """One form per size: an index constant as its int, a `tensor.dim` (the program's own)
        as the size it reads, so that equal sizes compare as equal."""
        size = static(size)
        if isinstance(size, OpResult) and isinstance(size.op, DimOp) and \
                isinstance(size.op.source.type, TensorType):
            j = static(size.op.index)
            if isinstance(j, int) and 0 <= j < len(size.op.source.type.get_shape()):
                return self.of(size.op.source)[j]
        return size

    def builder(self, where: InsertPoint) -> Builder:
        """A builder whose ops `erase_unused` removes again if nothing ends up using them. The
        sizes an op gives its result are computed right before the op (from its operands), so
        they serve the op's own checks too."""
        return Builder(where, operation_insertion_handler=[self.created.append])

    def builder_after(self, value: SSAValue) -> Builder:
        """A builder that inserts right after `value`'s definition (after the ops it already
        put there), so the `tensor.dim`s it makes dominate every use of the value."""
        anchor: Operation | Block = value.block if isinstance(value, BlockArgument) else \
            value.op  # type: ignore[attr-defined]
        last = self.last_after.get(anchor)
        if last is not None:
            where = InsertPoint.after(last)
        elif isinstance(anchor, Block):
            where = InsertPoint.at_start(anchor)
        else:
            where = InsertPoint.after(anchor)

        def created(op: Operation) -> None:
            self.created.append(op)
            self.last_after[anchor] = op
        return Builder(where, operation_insertion_handler=[created])

    def _derive(self, value: SSAValue, t: TensorType) -> list[Size]:
        if isinstance(value, OpResult):
            derived = self._from_producer(value, value.op)
            if derived is not None:
                return [self.canonical(s) for s in derived]
        return self._measured(value, t)

    def _measured(self, value: SSAValue, t: TensorType) -> list[Size]:
        """`tensor.dim` of a value nothing else gives the sizes of: a host value (an argument, a
        loop's or branch's result), never one dispatch formation fuses into its consumer."""
        b = self.builder_after(value)
        sizes: list[Size] = []
        for i, d in enumerate(t.get_shape()):
            if d >= 0:
                sizes.append(d)
                continue
            index = b.insert(arith.ConstantOp(IntegerAttr(i, IndexType()))).result
            sizes.append(b.insert(DimOp(value, index)).result)
        return sizes

    def _from_producer(self, value: OpResult, op: Operation) -> list[Size] | None:
        t = value.type
        assert isinstance(t, TensorType)
        if isinstance(op, EmptyOp):
            return sizes_of(t, list(op.dynamic_sizes))
        if isinstance(op, tensor.SplatOp):
            return sizes_of(t, list(op.dynamicSizes))
        if op.name in ELEMENTWISE_OPS:
            return self.of(tensor_operands(op)[0][1])
        outputs = _outputs(op)
        if outputs is not None:
            return self.of(outputs[value.index])
        if isinstance(op, tensor.InsertSliceOp | tensor.InsertOp):
            return self.of(op.dest)
        if isinstance(op, flow.TensorTransferOp):
            return self.of(op.source)
        if isinstance(op, tensor.ExtractSliceOp):
            return _slice_result(op, t)
        if isinstance(op, tensor.CollapseShapeOp | tensor.ExpandShapeOp | tensor.ReshapeOp |
                      tensor.CastOp):
            source = op.operands[0]
            source_t = source.type
            assert isinstance(source_t, TensorType)
            dynamic = [s for s, d in zip(self.of(source), source_t.get_shape()) if d < 0]
            b = self.builder(InsertPoint.before(op))
            return sizes_of(t, reshaped_dims(op, [as_value(b, s) for s in dynamic], b))
        if isinstance(op, tensor.PadOp):
            return _padded(op, self.of(op.source), self.builder(InsertPoint.before(op)))
        if isinstance(op, tensor.ConcatOp):
            return self._concatenated(op)
        if isinstance(op, func.CallOp):
            return self._call_result(op, value)
        return None

    def _concatenated(self, op: tensor.ConcatOp) -> list[Size]:
        axis = op.dim.value.data
        sizes = list(self.of(op.inputs[0]))
        b = self.builder(InsertPoint.before(op))
        sizes[axis] = sum_of(b, [self.of(x)[axis] for x in op.inputs])
        return sizes

    def _call_result(self, call: func.CallOp, value: OpResult) -> list[Size] | None:
        """The callee's result sizes, when they are its arguments' sizes (or constants): then
        they are the call's operands' sizes, and the call's result needs no `tensor.dim` (after
        inlining, that would be a use of whatever value the callee returned)."""
        name = call.callee.root_reference.data
        callee = self.functions.get(name)
        if callee is None or name in self.in_progress:
            return None
        ret = callee.body.blocks.last.last_op if callee.body.blocks.last else None
        if not isinstance(ret, func.ReturnOp):
            return None
        self.in_progress.add(name)
        try:
            inner = self.of(ret.arguments[value.index])
        finally:
            self.in_progress.discard(name)
        args = list(callee.body.blocks.first.args) if callee.body.blocks.first else []
        mapped: list[Size] = []
        for size in inner:
            if isinstance(size, int):
                mapped.append(size)
            elif isinstance(size, BlockArgument) and size in args:
                mapped.append(call.arguments[args.index(size)])
            elif isinstance(size, OpResult) and isinstance(size.op, DimOp) and \
                    size.op.source in args and isinstance(j := static(size.op.index), int):
                mapped.append(self.of(call.arguments[args.index(size.op.source)])[j])
            else:
                return None
        return mapped

    def erase_unused(self) -> None:
        """Removes what was materialised but, in the end, compared with nothing."""
        for op in reversed(self.created):
            if op.results and op.parent is not None and all(not r.uses for r in op.results):
                op.detach()
                op.erase()


def static(size: Size) -> Size:
    """An index constant as the int it holds, so that it compares with static sizes."""
    if isinstance(size, OpResult) and isinstance(size.op, arith.ConstantOp) and \
            isinstance(size.op.value, IntegerAttr):
        return size.op.value.value.data
    return size


def _outputs(op: Operation) -> list[SSAValue] | None:
    """The output operands of a destination-passing linalg op, whose results they size."""
    if isinstance(op, linalg.GenericOp | linalg.TransposeOp | LinalgNamedOp):
        return list(op.outputs)  # type: ignore[attr-defined]
    if isinstance(op, linalg.BroadcastOp | linalg.ReduceOp | linalg_ext.MapOp):
        return [op.init]
    if isinstance(op, linalg_ext.SoftmaxOp):
        return [op.output]
    return None


def tensor_operands(op: Operation) -> list[tuple[int, SSAValue]]:
    return [(k, v) for k, v in enumerate(op.operands) if isinstance(v.type, TensorType)]


def sum_of(b: Builder, sizes: list[Size]) -> Size:
    """The sum of `sizes`, its static part folded."""
    constant = sum(s for s in sizes if isinstance(s, int))
    total: SSAValue | None = None
    for s in sizes:
        if not isinstance(s, int):
            total = s if total is None else b.insert(arith.AddiOp(total, s)).result
    if total is None:
        return constant
    return total if constant == 0 else b.insert(arith.AddiOp(total, as_value(b, constant))).result


def _mixed(written: tuple[int, ...], dynamic: list[SSAValue]) -> list[Size]:
    """A mixed static/dynamic list (offsets, sizes, pads) as sizes, as written: a constant
    operand stays a value, as it does for the rank-reducing slice rule (`kept_dims`)."""
    it = iter(dynamic)
    return [next(it) if s == DYNAMIC_INDEX else s for s in written]


def slice_window(op: tensor.ExtractSliceOp | tensor.InsertSliceOp) -> list[Size]:
    """The sizes of a slice's window, one per dimension of the larger side."""
    return _mixed(tuple(op.static_sizes.get_values()), list(op.sizes))


def _slice_result(op: tensor.ExtractSliceOp, t: TensorType) -> list[Size]:
    window = slice_window(op)
    kept = kept_dims(window, t.get_shape(), op)
    return [window[i] if d < 0 else d for i, d in zip(kept, t.get_shape())]


def _padded(op: tensor.PadOp, source: list[Size], b: Builder) -> list[Size]:
    low = _mixed(tuple(op.static_low.get_values()), list(op.low))
    high = _mixed(tuple(op.static_high.get_values()), list(op.high))
    return [sum_of(b, [static(lo), s, static(hi)])
            for lo, s, hi in zip(low, source, high, strict=True)]

"""Dynamic dimensions of the tensor data-movement ops' results (slices, inserts, reshapes, casts),
as index values on the host: what `weir.compiler.shapes.dynamic_dims` needs to size a dispatch
result without a `tensor.dim` of a value that moves into the dispatch, and what the stream
conversion needs to give a reshaped resource its new shape.

The source's dynamic dims come from a callback, so the flow phase can derive them from the IR
and the stream phase from the source resource's own dims."""

from __future__ import annotations

from typing import Callable, Sequence

from weir.ir.diagnostics import error_at, location_of
from weir.ir.upstream import (
    arith,
    ArrayAttr,
    Builder,
    cf,
    DenseIntOrFPElementsAttr,
    IndexType,
    InsertPoint,
    IntegerAttr,
    IntegerType,
    Operation,
    OpResult,
    SSAValue,
    tensor,
    TensorType,
)

DimsOf = Callable[[SSAValue], list[SSAValue]]
Size = int | SSAValue  # a static size or an index value
RESHAPE_OPS = (tensor.CollapseShapeOp, tensor.ExpandShapeOp, tensor.ReshapeOp, tensor.CastOp)
_I64 = IntegerType(64)


def reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr:
    """The `reassociation` property of a collapse_shape / expand_shape: each group of dimensions
    of the larger shape that one dimension of the smaller one spans."""
    return ArrayAttr([ArrayAttr([IntegerAttr(i, _I64) for i in g]) for g in groups])


def index(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def as_value(b: Builder, size: Size) -> SSAValue:
    return index(b, size) if isinstance(size, int) else size


def sizes_of(t: TensorType, dynamic: list[SSAValue]) -> list[Size]:
    """Every dimension of `t`: static ones as ints, dynamic ones from `dynamic` in order."""
    it = iter(dynamic)
    return [next(it) if d < 0 else d for d in t.get_shape()]


def dynamic_of(t: TensorType, sizes: list[Size], b: Builder) -> list[SSAValue]:
    """The index values of `t`'s dynamic dimensions, given every dimension's size."""
    return [as_value(b, s) for d, s in zip(t.get_shape(), sizes, strict=True) if d < 0]


def product(b: Builder, sizes: list[Size]) -> Size:
    static = 1
    total: SSAValue | None = None
    for s in sizes:
        if isinstance(s, int):
            static *= s
        else:
            total = s if total is None else b.insert(arith.MuliOp(total, s)).result
    if total is None:
        return static
    return total if static == 1 else b.insert(arith.MuliOp(total, index(b, static))).result


def constant_shape(op: tensor.ReshapeOp) -> list[int] | None:
    """The values of tensor.reshape's shape operand when it is a constant."""
    owner = op.shape.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        return [int(v) for v in owner.value.get_values()]
    return None


def reshaped_dims(op: Operation, source_dims: list[SSAValue], b: Builder) -> list[SSAValue]:
    """The result's dynamic dims of a collapse_shape/expand_shape/reshape/cast."""
    source_t, result_t = op.operands[0].type, op.results[0].type
    assert isinstance(source_t, TensorType) and isinstance(result_t, TensorType)
    if not any(d < 0 for d in result_t.get_shape()):
        return []
    source = sizes_of(source_t, source_dims)
    sizes: list[Size]
    if isinstance(op, tensor.CollapseShapeOp):
        groups = op.reassociation.data
        sizes = [product(b, [source[i.value.data] for i in g.data])  # type: ignore[attr-defined]
                 for g in groups]
    elif isinstance(op, tensor.ExpandShapeOp):
        dynamic = iter(op.dynamic_output_shape)
        sizes = [next(dynamic) if s < 0 else s for s in op.static_output_shape.get_values()]
    elif isinstance(op, tensor.CastOp):
        sizes = source
    else:
        assert isinstance(op, tensor.ReshapeOp)
        shape = constant_shape(op)
        if shape is None:
            raise error_at(op, "tensor.reshape to a dynamic shape given by a non-constant shape "
                               "tensor is not supported")
        sizes = list(shape)
    return dynamic_of(result_t, sizes, b)


def check_reshape_at_run_time(op: Operation, source_dims: list[SSAValue],
                              result_dims: list[SSAValue], b: Builder) -> None:
    """A reshape or cast the verifier could not check (a dynamic size on either side) gets a
    host assertion: a mismatch at run time would otherwise read a prefix of the source, or past
    its end, silently. A cast keeps every dimension; other reshapes keep the element count."""
    source_t, result_t = op.operands[0].type, op.results[0].type
    assert isinstance(source_t, TensorType) and isinstance(result_t, TensorType)
    if not any(d < 0 for d in (*source_t.get_shape(), *result_t.get_shape())):
        return
    source, result = sizes_of(source_t, source_dims), sizes_of(result_t, result_dims)
    if isinstance(op, tensor.CastOp):
        pairs = [(s, r) for s, r in zip(source, result, strict=True) if s is not r]
        what = "a dimension differs from the result type's"
    else:
        pairs = [(product(b, source), product(b, result))]
        what = "the source's element count differs from the result's"
    filename, line, col = location_of(op)
    for s, r in pairs:
        if isinstance(s, int) and isinstance(r, int):
            if s != r:
                raise error_at(op, f"{what}: {s} vs {r}")
            continue
        same = b.insert(arith.CmpiOp(as_value(b, s), as_value(b, r), "eq")).result
        b.insert(cf.AssertOp(same, f"{filename}:{line}:{col}: '{op.name}': {what}"))


def slice_dims(op: tensor.ExtractSliceOp, b: Builder) -> list[SSAValue]:
    """The result's dynamic dims: its sizes, less the dimensions a rank-reducing slice drops."""
    result_t = op.result.type
    assert isinstance(result_t, TensorType)
    dynamic = iter(op.sizes)
    sizes: list[Size] = [next(dynamic) if s < 0 else s for s in op.static_sizes.get_values()]
    kept = [sizes[d] for d in kept_dims(sizes, result_t.get_shape(), op)]
    return dynamic_of(result_t, kept, b)


def kept_dims(window: Sequence[object], small: tuple[int, ...], op: Operation) -> list[int]:
    """Which window dimensions (ints when static) the lower-rank side keeps, matched left to
    right: a window dimension of static size 1 that does not match the next kept dimension is
    dropped (how MLIR infers a rank-reducing slice)."""
    kept: list[int] = []
    j = 0
    for i, s in enumerate(window):
        matches = j < len(small) and (not isinstance(s, int) or small[j] < 0 or small[j] == s)
        if matches and not (s == 1 and small[j] != 1 and len(window) - i > len(small) - j):
            kept.append(i)
            j += 1
        elif s != 1:
            raise error_at(op, f"'{op.name}' whose window does not match the shape "
                               f"{list(small)} is not supported")
    if j != len(small):
        raise error_at(op, f"'{op.name}' whose window does not match the shape {list(small)} is "
                           "not supported")
    return kept


def data_movement_dims(value: OpResult, where: InsertPoint,
                       dims_of: DimsOf) -> list[SSAValue] | None:
    """`value`'s dynamic dims when a data-movement op makes it, else None."""
    op = value.op
    if isinstance(op, tensor.ExtractSliceOp):
        return slice_dims(op, Builder(where))
    if isinstance(op, tensor.InsertSliceOp):
        return dims_of(op.dest)
    if isinstance(op, RESHAPE_OPS):
        return reshaped_dims(op, dims_of(op.operands[0]), Builder(where))
    return None

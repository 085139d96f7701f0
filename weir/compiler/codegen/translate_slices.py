"""tensor.extract_slice / tensor.insert_slice in a dispatch, as the kernel description's `Slice`
and `InsertSlice`. Offsets, sizes and strides are static or dispatch arguments (push constants);
a window that is out of bounds for static sizes is a compile error here, a dynamic one is checked
by the runtime before the dispatch runs (MLIR leaves it undefined; native code must not touch
memory outside its bindings)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from weir.compiler.tensor_shapes import kept_dims
from weir.format import kernel_description as k
from weir.ir.diagnostics import error_at
from weir.ir.upstream import DYNAMIC_INDEX, Operation, SSAValue, tensor, TensorType

if TYPE_CHECKING:
    from weir.compiler.codegen.translate import EntryTranslator


def _index(tr: EntryTranslator, v: SSAValue, user: Operation) -> k.Dim:
    if v in tr.push:
        return k.PushDim(tr.push[v])
    if v in tr.scalars:
        return int(tr.scalars[v])
    raise error_at(user, f"{tr.target} target: a dynamic offset, size or stride of '{user.name}' "
                         "must be a dispatch argument or a constant")


def _mixed(tr: EntryTranslator, static: Sequence[int], dynamic: Sequence[SSAValue],
           user: Operation) -> tuple[k.Dim, ...]:
    it = iter(dynamic)
    return tuple(_index(tr, next(it), user) if s == DYNAMIC_INDEX else s for s in static)


def _window(tr: EntryTranslator, op: tensor.ExtractSliceOp | tensor.InsertSliceOp,
            full: TensorType, part: TensorType) -> tuple[tuple[k.Dim, ...], tuple[k.Dim, ...],
                                                        tuple[k.Dim, ...], tuple[int, ...]]:
    """Offsets, sizes, strides (per dimension of the full tensor) and the dimensions the part
    (the slice's result, the insert's source) leaves out. Static windows are checked here."""
    offsets = _mixed(tr, op.static_offsets.get_values(), list(op.offsets), op)
    sizes = _mixed(tr, op.static_sizes.get_values(), list(op.sizes), op)
    strides = _mixed(tr, op.static_strides.get_values(), list(op.strides), op)
    kept = kept_dims(sizes, part.get_shape(), op)
    for d, (offset, size, stride, extent) in enumerate(zip(offsets, sizes, strides,
                                                           full.get_shape())):
        if isinstance(stride, int) and stride < 1:
            raise error_at(op, f"'{op.name}' with stride {stride} (below 1) is not supported")
        if isinstance(offset, int) and offset < 0:
            raise error_at(op, f"'{op.name}': offset {offset} of dimension {d} is negative")
        if isinstance(offset, int) and isinstance(size, int) and isinstance(stride, int) and \
                extent >= 0:
            problem = k.window_error(offset, size, stride, extent)
            if problem is not None:
                raise error_at(op, f"'{op.name}' is out of bounds in dimension {d}: {problem}")
    dropped = tuple(d for d in range(len(sizes)) if d not in kept)
    return offsets, sizes, strides, dropped


def extract_slice(tr: EntryTranslator, op: tensor.ExtractSliceOp) -> None:
    source, result = op.source.type, op.result.type
    assert isinstance(source, TensorType) and isinstance(result, TensorType)
    offsets, sizes, strides, dropped = _window(tr, op, source, result)
    tr._emit(op.result, k.Slice(tr._value(op.source, op), offsets, sizes, strides, dropped))


def insert_slice(tr: EntryTranslator, op: tensor.InsertSliceOp) -> None:
    """The window's sizes are the source's own dimensions: the op's size operands repeat them."""
    source, dest = op.source.type, op.dest.type
    assert isinstance(source, TensorType) and isinstance(dest, TensorType)
    offsets, _, strides, dropped = _window(tr, op, dest, source)
    tr._emit(op.result, k.InsertSlice(tr._value(op.source, op), tr._value(op.dest, op), offsets,
                                      strides, dropped))

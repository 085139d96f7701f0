"""Where the dynamic dimensions of a tensor value come from, so passes can size results and pass
shapes to dispatches without re-deriving them from the runtime."""

from __future__ import annotations

from weir.compiler.abi.types import dynamic_dim_indices
from weir.compiler.tensor_shapes import data_movement_dims
from weir.dialects import flow, hal, iree_linalg_ext, linalg_ext
from weir.dialects.iree_linalg_ext_map import MapOp
from weir.dialects.util import OptimizationBarrierOp
from weir.ir.upstream import (
    Builder,
    ConstantOp,
    DimOp,
    DYNAMIC_INDEX,
    EmptyOp,
    IndexType,
    InsertPoint,
    IntegerAttr,
    linalg,
    OpResult,
    SSAValue,
    TensorType,
)


def dynamic_dims(value: SSAValue, where: InsertPoint) -> list[SSAValue]:
    """SSA values for each dynamic dimension of `value`, reusing the ones that produced it and
    materialising `tensor.dim` at `where` only when nothing else knows them."""
    t = value.type
    assert isinstance(t, TensorType)
    if DYNAMIC_INDEX not in t.get_shape():
        return []
    if isinstance(value, OpResult):
        op = value.op
        if isinstance(op, EmptyOp):
            return list(op.dynamic_sizes)
        if isinstance(op, hal.TensorImportOp):
            return list(op.target_dims)
        if isinstance(op, hal.TensorAliasOp):
            return list(op.source_dims)
        if isinstance(op, hal.TensorBarrierOp):
            return dynamic_dims(op.sources[value.index], where)
        if isinstance(op, OptimizationBarrierOp):
            return dynamic_dims(op.inputs[value.index], where)
        if isinstance(op, flow.DispatchOp | flow.DispatchRegionOp) and \
                len(op.results) == 1:
            return list(op.result_dims)
        if isinstance(op, linalg.GenericOp | linalg.FillOp | linalg.MatmulOp |
                      linalg.TransposeOp | linalg.BroadcastOp | linalg.ReduceOp |
                      linalg.Conv2DNhwc_HwcfOp | linalg.PoolingNchwMaxOp) or \
                isinstance(op, linalg_ext.KERNEL_OPS + iree_linalg_ext.KERNEL_OPS + (MapOp,)):
            outputs = list(op.outputs) if hasattr(op, "outputs") else [op.init]  # type: ignore[attr-defined]
            if value.index < len(outputs):
                return dynamic_dims(outputs[value.index], where)
        moved = data_movement_dims(value, where, lambda v: dynamic_dims(v, where))
        if moved is not None:
            return moved
    return tensor_dims(value, where)


def tensor_dims(value: SSAValue, where: InsertPoint) -> list[SSAValue]:
    """A `tensor.dim` at `where` for each dynamic dimension of `value`, always fresh: for callers
    that want the size read off this very value (the ABI's call boundaries)."""
    t = value.type
    assert isinstance(t, TensorType)
    b = Builder(where)
    dims: list[SSAValue] = []
    for i in dynamic_dim_indices(t):
        index = b.insert(ConstantOp(IntegerAttr(i, IndexType())))
        dims.append(b.insert(DimOp(value, index.result)).result)
    return dims


def buffer_view_dims(view: SSAValue, t: TensorType, where: InsertPoint) -> list[SSAValue]:
    """A `hal.buffer_view.dim` at `where` for each dynamic dimension of `t`: the sizes of a tensor
    arriving as a buffer view, read off the view itself."""
    b = Builder(where)
    return [
        b.insert(hal.BufferViewDimOp.build(
            operands=[view], result_types=[IndexType()],
            properties={"index": IntegerAttr(d, IndexType())})).result
        for d in dynamic_dim_indices(t)
    ]


def dims_per_result(op: flow.DispatchRegionOp | flow.DispatchOp) -> list[list[SSAValue]]:
    """`op.result_dims` (all results' dynamic dims, in order) split into one list per result."""
    dims = list(op.result_dims)
    out: list[list[SSAValue]] = []
    for r in op.results:
        assert isinstance(r.type, TensorType)
        n = len(dynamic_dim_indices(r.type))
        out.append(dims[:n])
        dims = dims[n:]
    return out

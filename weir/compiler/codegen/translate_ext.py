"""The kernels of IREE's linalg extension ops in a dispatch (sort, scan, scatter, gather; topk,
arg_compare and attention are linalg and sort by then, see lower_linalg_ext): each becomes the
kernel op of the same name in the reference target's description, which llvm-cpu lowers too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from weir.dialects import iree_linalg_ext as ext, tm_tensor
from weir.dialects.iree_linalg_ext_map import MapLoadOp, MapStoreOp
from weir.format import kernel_description as k
from weir.ir.diagnostics import error_at
from weir.ir.upstream import IntegerAttr, Operation

if TYPE_CHECKING:
    from weir.compiler.codegen.translate import EntryTranslator

# The regions' terminators: IREE's and torch-mlir's.
YIELD_OPS = (ext.YieldOp, tm_tensor.YieldOp)
KERNEL_OPS = ext.KERNEL_OPS


def _region_body(tr: EntryTranslator, op: Operation) -> tuple[tuple[k.ScalarOp, ...],
                                                              tuple[int, ...]]:
    """A comparator/combiner region's scalar ops: these kernels run no checked body ops, so a
    gather (`tensor.extract`) or a kept `cf.assert` in such a region is refused where it is."""
    region = op.regions[0]
    body, yields, captures, checks = tr._body(region.block, op)  # pyright: ignore[reportPrivateUsage]
    if captures or checks:
        raise error_at(op, f"{tr.target} target: tensor.extract and cf.assert are not supported "
                           f"in the region of '{op.name}'")
    return body, yields


def translate_ext(tr: EntryTranslator, op: Operation) -> bool:
    """Emits `op`'s kernel op; False when `op` is none of these."""
    if translate_map(tr, op):
        return True
    if not isinstance(op, KERNEL_OPS):
        return False
    assert isinstance(op, ext.ExtOp)
    v = lambda x: tr._value(x, op)  # noqa: E731  # pyright: ignore[reportPrivateUsage]
    if isinstance(op, ext.Sort | ext.Scan):
        body, yields = _region_body(tr, op)
        if isinstance(op, ext.Sort):
            prefix = op.attributes.get(ext.SORTED_PREFIX)
            node: k.KernelOp = k.Sort(tuple(v(x) for x in op.outputs), op.dim(), body, yields,
                                      prefix.value.data if isinstance(prefix, IntegerAttr)
                                      else None)
        else:
            assert op.inclusive is not None
            node = k.Scan(v(op.inputs[0]), v(op.outputs[0]), v(op.outputs[1]), op.dim(),
                          bool(op.inclusive.value.data), body, yields)
        n = tr._emit(None, node)  # pyright: ignore[reportPrivateUsage]
        for i, r in enumerate(op.results_):
            tr._emit(r, k.Result(n, i))  # pyright: ignore[reportPrivateUsage]
        return True
    indices = op.inputs[1]
    batch, _ = ext.index_layout(op, indices)
    mask = v(op.inputs[2]) if len(op.inputs) == 3 else -1
    assert op.dimension_map is not None
    dims = tuple(op.dimension_map.get_values())
    if isinstance(op, ext.Scatter):
        body, yields = _region_body(tr, op)
        tr._emit(op.results_[0], k.Scatter(  # pyright: ignore[reportPrivateUsage]
            v(op.inputs[0]), v(indices), mask, v(op.outputs[0]), dims, len(batch), body, yields))
    else:
        tr._emit(op.results_[0], k.Gather(  # pyright: ignore[reportPrivateUsage]
            v(op.inputs[0]), v(indices), mask, v(op.outputs[0]), dims, len(batch)))
    return True


def translate_map(tr: EntryTranslator, op: Operation) -> bool:
    """map_load / map_store: their region's index arguments are the body's arguments."""
    if not isinstance(op, MapLoadOp | MapStoreOp):
        return False
    body, yields = _region_body(tr, op)
    cls = k.MapLoad if isinstance(op, MapLoadOp) else k.MapStore
    tr._emit(op.result, cls(tr._value(op.value, op), tr._value(op.output, op),  # pyright: ignore[reportPrivateUsage]
                            body, yields))
    return True

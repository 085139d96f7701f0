"""IREE's `iree_linalg_ext` ops (and, in `tm_tensor`, torch-mlir's copies of them): sort, topk,
scan, scatter, gather, arg_compare and attention, in the syntax IREE and torch-mlir print.

The ops share one shape (`ins(...) outs(...)`, a region, results of the outputs' types) and one
textual form: keyword clauses (`dimension(1)`, `inclusive(true)`, `unique_indices(true)`,
`dimension_map = [0, 1]`), an optional attribute dictionary, `ins`, `outs`, arg_compare's
`index_base(%b : index)`, the region, `-> types` (the shared part is in iree_linalg_ext_base,
attention and online_attention in iree_linalg_ext_attention, map_load/map_store in
iree_linalg_ext_map). What each computes is said on its class; the input phase lowers them
(weir/compiler/input/lower_linalg_ext.py) to kernels of their own or to linalg."""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Dialect, SSAValue
from xdsl.utils.exceptions import VerifyException

from weir.dialects.iree_linalg_ext_attention import Attention, OnlineAttention
from weir.dialects.iree_linalg_ext_base import (  # noqa: F401 (re-exported for the passes)
    DYNAMIC_INDEX,
    ExtOp,
    I1,
    I32,
    YieldOp,
    same_shape,
    without,
    define,
    shape_of,
)
from weir.dialects.linalg_syntax import element_type


class Sort(ExtOp):
    """Sorts each line along `dimension` of every output together: the region compares two
    elements of each output (lhs then rhs of output 0, of output 1, ...) and yields whether lhs
    may come before rhs. The sort is stable: an element moves before an earlier one only when
    the region says it may come first and not the other way round (so `olt` and `ole` both keep
    equal elements in order)."""

    def check_op(self) -> None:
        if self.inputs:
            raise VerifyException("sort takes no inputs: it sorts its outputs in place")
        if not self.outputs:
            raise VerifyException("sort needs at least one output")
        shape = shape_of(self.outputs[0])
        for i, v in enumerate(self.outputs):
            if not same_shape(shape_of(v), shape):
                raise VerifyException(f"output #{i} of type {v.type} does not have the shape "
                                      f"of output #0 {self.outputs[0].type}")
        self.check_dim(len(shape))
        args = [element_type(v) for v in self.outputs for _ in range(2)]
        self.check_region(args, I1)

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        return [self._same(0, k) for k in range(1, len(self.outputs))]


class Topk(ExtOp):
    """The k best elements along `dimension` (k: the outputs' size there) and their indices, best
    first, merged with what the outputs hold (IREE splits a topk in parts and merges them this
    way): the region yields whether lhs is better than rhs. Indices are the second input's values,
    or positions along the dimension without one. Earlier elements win ties, outputs' first."""

    def check_op(self) -> None:
        self.check_counts((1, 2), (2,) if self.name.endswith('.topk') else (1, 2))
        shape = shape_of(self.inputs[0])
        d = self.check_dim(len(shape))
        if len(self.inputs) == 2 and not same_shape(shape_of(self.inputs[1]), shape):
            raise VerifyException(f"the indices {self.inputs[1].type} do not have the shape of "
                                  f"the values {self.inputs[0].type}")
        for i, v in enumerate(self.outputs):
            out = shape_of(v)
            if len(out) != len(shape) or not same_shape(without(out, d), without(shape, d)):
                raise VerifyException(f"output #{i} of type {v.type} must have the input's "
                                      f"shape but for dimension {d}")
        if element_type(self.outputs[0]) != element_type(self.inputs[0]):
            raise VerifyException("the values output must have the input's element type")
        if len(self.outputs) == 2 and not isinstance(element_type(self.outputs[1]), IntegerType):
            raise VerifyException("the indices output must have an integer element type")
        value = element_type(self.inputs[0])
        self.check_region([value, value], I1)

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        nin = len(self.inputs)
        d = self.dim()
        pairs = [self._same(0, 1)] if nin == 2 else []
        pairs += [self._same(0, nin + i, d) for i in range(len(self.outputs))]
        return pairs + ([self._same(nin, nin + 1)] if len(self.outputs) == 2 else [])


class Scan(ExtOp):
    """A prefix scan along `dimension`: outputs are the scanned tensor and the last value of each
    line (the accumulator). Inclusive: out[0] = in[0], out[i] = f(in[i], out[i-1]); exclusive:
    out[0] = the accumulator output's initial value, out[i] = f(in[i-1], out[i-1]). The region
    takes (input element, running value)."""

    def check_op(self) -> None:
        self.check_counts((1,), (2,))
        shape = shape_of(self.inputs[0])
        d = self.check_dim(len(shape))
        if self.inclusive is None:
            raise VerifyException("scan needs inclusive(true|false)")
        if not same_shape(shape_of(self.outputs[0]), shape):
            raise VerifyException(f"output #0 {self.outputs[0].type} does not have the shape "
                                  f"of the input {self.inputs[0].type}")
        if not same_shape(shape_of(self.outputs[1]), without(shape, d)):
            raise VerifyException(f"the accumulator {self.outputs[1].type} must have the "
                                  f"input's shape without dimension {d}")
        t = element_type(self.outputs[0])
        if element_type(self.inputs[0]) != t or element_type(self.outputs[1]) != t:
            raise VerifyException("input and outputs must have one element type")
        self.check_region([t, t], t)

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        return [self._same(0, 1), self._same(0, 2, self.dim())]


def index_layout(op: ExtOp, indices: SSAValue) -> tuple[tuple[int, ...], int]:
    """(batch shape, index depth) of scatter/gather `indices`: a last dimension of the
    dimension map's length holds the coordinates; otherwise each element is one coordinate."""
    assert op.dimension_map is not None
    depth = len(op.dimension_map.get_values())
    shape = shape_of(indices)
    if shape and shape[-1] == depth:
        return shape[:-1], depth
    if depth == 1:
        return shape, 1
    raise VerifyException(f"indices {indices.type} must end in a dimension of size {depth} "
                          "(the dimension map's length)")


def _check_indexed(op: ExtOp, indices: SSAValue, mask: SSAValue | None, slices: SSAValue,
                   target: SSAValue, what: str) -> None:
    """`slices` (updates/output) = batch shape + a slice of `target` aligned to its last
    dimensions."""
    if op.dimension_map is None:
        raise VerifyException("the op needs dimension_map = [...]")
    if not isinstance(element_type(indices), IntegerType):
        raise VerifyException(f"indices {indices.type} must have an integer element type")
    batch, depth = index_layout(op, indices)
    rank = len(shape_of(target))
    dims = list(op.dimension_map.get_values())
    if len(set(dims)) != len(dims) or any(not 0 <= d < rank for d in dims):
        raise VerifyException(f"dimension_map {dims} must name distinct dimensions of the "
                              f"rank-{rank} {what}")
    sliced = shape_of(slices)
    if len(sliced) < len(batch) or not same_shape(sliced[:len(batch)], batch):
        raise VerifyException(f"{slices.type} must start with the indices' batch shape "
                              f"{list(batch)}")
    slice_shape = sliced[len(batch):]
    if len(slice_shape) > rank:
        raise VerifyException(f"the slice of {slices.type} has more dimensions than {what} "
                              f"{target.type}")
    for i, s in enumerate(slice_shape):
        full = shape_of(target)[rank - len(slice_shape) + i]
        if s != DYNAMIC_INDEX and full != DYNAMIC_INDEX and s > full:
            raise VerifyException(f"slice dimension {i} of {slices.type} is larger than {what} "
                                  f"{target.type}")
    if mask is not None and (element_type(mask) != I1 or not same_shape(shape_of(mask), batch)):
        raise VerifyException(f"the mask {mask.type} must be i1 of the batch shape {list(batch)}")
    del depth


def _batch_pairs(op: ExtOp, slices: int) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """The indices' batch dimensions against those of operand `slices` (updates or output) and
    of the mask."""
    batch, _ = index_layout(op, op.inputs[1])
    dims = [(i, i) for i in range(len(batch))]
    return [(1, slices, dims)] + ([(1, 2, dims)] if len(op.inputs) == 3 else [])


class Scatter(ExtOp):
    """Writes each update slice into the output at the coordinates its indices give (for the
    output dimensions `dimension_map` names; the slice lies along the output's last dimensions):
    output[t] = region(update, output[t]), in the order of the updates. An optional i1 mask of the
    batch shape skips the updates where it is false."""

    def check_op(self) -> None:
        self.check_counts((2, 3), (1,))
        if self.unique_indices is None:
            raise VerifyException("scatter needs unique_indices(true|false)")
        updates, indices = self.inputs[0], self.inputs[1]
        mask = self.inputs[2] if len(self.inputs) == 3 else None
        _check_indexed(self, indices, mask, updates, self.outputs[0], "output")
        t = element_type(self.outputs[0])
        self.check_region([element_type(updates), t], t)

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        return _batch_pairs(self, 0)


class Gather(ExtOp):
    """The reverse of scatter: each output slice is read from the source at the coordinates its
    indices give; where an optional i1 mask is false the output keeps its value."""

    def check_op(self) -> None:
        self.check_counts((2, 3), (1,))
        source, indices = self.inputs[0], self.inputs[1]
        mask = self.inputs[2] if len(self.inputs) == 3 else None
        _check_indexed(self, indices, mask, self.outputs[0], source, "source")
        if element_type(source) != element_type(self.outputs[0]):
            raise VerifyException("source and output must have one element type")
        if self.region.blocks:
            raise VerifyException("gather takes no region")

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        return _batch_pairs(self, len(self.inputs))


class ArgCompare(ExtOp):
    """The best element along `dimension` and its index (plus `index_base`): the region yields
    whether lhs is better than rhs; the first of equal elements wins. The outputs' initial
    values take part as the element seen first."""

    def check_op(self) -> None:
        self.check_counts((1,), (2,))
        shape = shape_of(self.inputs[0])
        d = self.check_dim(len(shape))
        for i, v in enumerate(self.outputs):
            if not same_shape(shape_of(v), without(shape, d)):
                raise VerifyException(f"output #{i} {v.type} must have the input's shape "
                                      f"without dimension {d}")
        t = element_type(self.inputs[0])
        if element_type(self.outputs[0]) != t:
            raise VerifyException("the value output must have the input's element type")
        if not isinstance(element_type(self.outputs[1]), IntegerType):
            raise VerifyException("the index output must have an integer element type")
        if len(self.index_base) > 1:
            raise VerifyException("index_base takes one value")
        self.check_region([t, t], I1)

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        return [self._same(0, 1, self.dim()), self._same(1, 2)]


KERNEL_OPS: tuple[type[ExtOp], ...] = (Sort, Scan, Scatter, Gather)


SortOp = define(Sort, "iree_linalg_ext.sort")

# A sort's discardable attribute (an i64): nothing reads past this many elements of a sorted
# line, so code generation may select them rather than sort the line (set by the
# global-optimization pass limit-sorts-to-prefixes).
SORTED_PREFIX = "weir.sorted_prefix"
TopkOp = define(Topk, "iree_linalg_ext.topk")
# topk_v2: topk, but with indices equal values go by index (smaller first), and with `is_sorted`
# where IREE's final bubble sort leaves them (compiler/input/topk_ties.py).
TopkV2Op = define(Topk, "iree_linalg_ext.topk_v2")
ScanOp = define(Scan, "iree_linalg_ext.scan")
ScatterOp = define(Scatter, "iree_linalg_ext.scatter")
GatherOp = define(Gather, "iree_linalg_ext.gather")
ArgCompareOp = define(ArgCompare, "iree_linalg_ext.arg_compare")
AttentionOp = define(Attention, "iree_linalg_ext.attention")
OnlineAttentionOp = define(OnlineAttention, "iree_linalg_ext.online_attention")

DIALECT = Dialect("iree_linalg_ext", [SortOp, TopkOp, TopkV2Op, ScanOp, ScatterOp, GatherOp, ArgCompareOp,
                                      AttentionOp, OnlineAttentionOp, YieldOp], [])

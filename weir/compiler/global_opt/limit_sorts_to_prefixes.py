"""Marks a sort whose results are only read through slices of the first k elements of each
sorted line with `weir.sorted_prefix = k`.

Why: exporters state top-k as "sort the whole line, keep its first k" (torch-mlir's lowering of
`torch.topk`: a `tm_tensor.sort` of a 32000-token vocabulary and an `extract_slice` of 50).
Sorting costs n log n comparisons and moves; selecting the k best in one pass costs about n
comparisons with the k-th best. The attribute lets code generation select (the results past k
are then unspecified, which nothing can observe: every reader was checked to stop at k). Static
line lengths only; a prefix that is most of the line is not worth marking."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import iree_linalg_ext as ext
from weir.ir.upstream import (
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    SSAValue,
    tensor,
    TensorType,
)

# Marked only when the prefix is at most this fraction of the line (selection moves each kept
# element up to k places; past a quarter of the line sorting is as cheap).
_MOST = 4


class LimitSortsToPrefixes(Pass):
    flag = "limit-sorts-to-prefixes"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in module.walk():
            if not isinstance(op, ext.Sort) or not op.results:
                continue
            t = op.results[0].type
            if not isinstance(t, TensorType) or not t.has_static_shape():
                continue
            dim = op.dim()
            line = t.get_shape()[dim]
            reads = [_prefix_read(r, dim) for r in op.results]
            if any(k is None for k in reads):
                continue
            prefix = max(k for k in reads if k is not None)
            if 0 < prefix and prefix * _MOST <= line:
                op.attributes[ext.SORTED_PREFIX] = IntegerAttr(prefix, IntegerType(64))


def _prefix_read(result: SSAValue, dim: int) -> int | None:
    """How many leading elements of each line along `dim` the users of `result` read: every
    user must be a unit-stride static slice starting at 0 there (else None)."""
    longest = 0
    for use in result.uses:
        user = use.operation
        if not isinstance(user, tensor.ExtractSliceOp) or use.index != 0:
            return None
        offsets, sizes, strides = (_static(a) for a in (user.static_offsets, user.static_sizes,
                                                        user.static_strides))
        if offsets is None or sizes is None or strides is None or user.offsets or \
                user.sizes or user.strides or offsets[dim] != 0 or strides[dim] != 1:
            return None
        longest = max(longest, sizes[dim])
    return longest


def _static(values: DenseArrayBase) -> list[int] | None:
    found = list(values.get_values())
    return None if any(v < 0 for v in found) else found  # type: ignore[operator]

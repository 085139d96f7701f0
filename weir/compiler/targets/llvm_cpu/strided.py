"""Values that are memory seen through a different index: a transpose, a reshape or a slice of
a binding is, element for element, the binding's memory at other strides. A contraction reads
such an operand in place (a transposed weight as rows of the transpose, the keys of an
attention as rows along k) instead of copying it to scratch element by element first."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.kernel_values import ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

Stride = int | ir.Value


@dataclass
class StridedView:
    """Element idx of the value lies at ptr + sum(idx[i] * strides[i]) (in elements)."""

    ptr: ir.Value
    dtype: str
    strides: list[Stride]

    def address(self, b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        offset: ir.Value = I64(0)
        for x, stride in zip(idx, self.strides):
            if isinstance(stride, int) and stride == 0:
                continue
            offset = b.add(offset, x if isinstance(stride, int) and stride == 1 else
                           b.mul(x, _value(stride)))
        return b.gep(self.ptr, [offset], inbounds=True)


def _value(stride: Stride) -> ir.Value:
    return I64(stride) if isinstance(stride, int) else stride


def _times(b: ir.IRBuilder, x: Stride, y: Stride) -> Stride:
    if isinstance(x, int) and isinstance(y, int):
        return x * y
    return b.mul(_value(x), _value(y))


def strided_view(low: EntryLowering, b: ir.IRBuilder, v: ValueRef) -> StridedView | None:
    """`v` as strided memory, or None when some element of it is computed rather than read."""
    kv = low.kv
    mem = low.memory.get(v)
    if mem is not None:
        strides: list[Stride] = []
        stride: Stride = 1
        for d in reversed(kv.shape[v]):
            strides.insert(0, stride)
            stride = _times(b, stride, d if isinstance(d, int) else low.dim(d))
        return StridedView(mem.ptr, mem.dtype, strides)
    op = kv.ops[v[0]]
    if isinstance(op, k.Transpose):
        source = strided_view(low, b, kv.ref(op.input))
        if source is None:
            return None
        # Dimension j of the transpose is dimension permutation[j] of its input.
        return StridedView(source.ptr, source.dtype,
                           [source.strides[p] for p in op.permutation])
    if isinstance(op, k.Reshape):
        source = strided_view(low, b, kv.ref(op.input))
        sizes = kv.shape[kv.ref(op.input)]
        if source is None or not all(isinstance(d, int) for d in sizes) or \
                not all(isinstance(s, int) for s in source.strides):
            return None
        reshaped = _reshaped_strides([int(d) for d in sizes],  # type: ignore[arg-type]
                                     [int(s) for s in source.strides],  # type: ignore[arg-type]
                                     list(op.shape))
        return None if reshaped is None else StridedView(source.ptr, source.dtype, reshaped)
    if isinstance(op, k.Slice):
        source = strided_view(low, b, kv.ref(op.input))
        if source is None:
            return None
        ptr = source.address(b, [low.dim(o) for o in op.offsets])
        strides = [_times(b, stride, step if isinstance(step, int) else low.dim(step))
                   for d, (stride, step) in enumerate(zip(source.strides, op.strides))
                   if d not in op.dropped]
        return StridedView(ptr, source.dtype, strides)
    return None


def _reshaped_strides(sizes: list[int], strides: list[int],
                      shape: list[int]) -> list[Stride] | None:
    """The strides of a row-major reshape of (sizes, strides) to `shape`, or None where it
    merges dimensions that are not contiguous with each other. Dimensions of size 1 take no
    part (their index is always 0); the others are matched in groups of equal product."""
    source = [(n, s) for n, s in zip(sizes, strides) if n != 1]
    targets = [j for j, n in enumerate(shape) if n != 1]
    out: list[Stride] = [0] * len(shape)
    i = 0
    t = 0
    while t < len(targets):
        if i >= len(source):
            return None
        # The smallest run of source dims and of target dims with the same number of elements.
        i_end, t_end = i + 1, t + 1
        src_count, dst_count = source[i][0], shape[targets[t]]
        while src_count != dst_count:
            if src_count < dst_count:
                if i_end >= len(source):
                    return None
                src_count *= source[i_end][0]
                i_end += 1
            else:
                if t_end >= len(targets):
                    return None
                dst_count *= shape[targets[t_end]]
                t_end += 1
        run = source[i:i_end]
        if any(outer[1] != inner[1] * inner[0] for outer, inner in zip(run, run[1:])):
            return None  # the run is not one contiguous block at the stride of its last dim
        innermost = run[-1][1]
        for j in range(t, t_end):
            out[targets[j]] = innermost * math.prod(shape[x] for x in targets[j + 1:t_end])
        i, t = i_end, t_end
    return out if i == len(source) else None


def packed_source(low: EntryLowering, b: ir.IRBuilder, v: ValueRef, permutation: list[int],
                  packed_shape: list[int]) -> ir.Value | None:
    """Where `v` starts when it is `reshape(transpose(P, permutation))` of contiguous memory P
    of shape `packed_shape`, or the leading window of that (a last panel padded with zeros):
    constants that global-optimization stored in the layout a microkernel reads
    (pack_matmul_weights.py, pack_conv_filters.py), which the kernel then reads in place as
    that layout. None for any other value."""
    kv = low.kv
    if v in low.memory or kv.dtype[v] != "f32":
        return None
    window = kv.ops[v[0]]
    if isinstance(window, k.Slice) and _leading_window(window, kv.shape[v]):
        v = kv.ref(window.input)
        if v in low.memory:
            return None
    reshape = kv.ops[v[0]]
    if not isinstance(reshape, k.Reshape):
        return None
    turned = kv.ref(reshape.input)
    transpose = kv.ops[turned[0]] if turned not in low.memory else None
    if not isinstance(transpose, k.Transpose) or list(transpose.permutation) != permutation:
        return None
    packed = kv.ref(transpose.input)
    if list(kv.shape[packed]) != packed_shape:
        return None
    view = strided_view(low, b, packed)
    contiguous = [math.prod(packed_shape[i + 1:]) for i in range(len(packed_shape))]
    if view is None or view.strides != contiguous:
        return None
    return view.ptr


def _leading_window(op: k.Slice, shape: list[k.Dim]) -> bool:
    """`op` takes the first `shape` elements of each dimension of its input, all of them."""
    return not op.dropped and all(o == 0 for o in op.offsets) and \
        all(st == 1 for st in op.strides) and list(op.sizes) == list(shape) and \
        all(isinstance(d, int) for d in shape)

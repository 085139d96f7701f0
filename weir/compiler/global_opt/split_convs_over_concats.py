"""Rewrites a 1 x 1 NHWC convolution of a channel concatenation with a constant filter as a chain
of convolutions, one per concatenated piece with that piece's rows of the filter, each starting
from the last one's result, so the concatenation is never written.

Why: a SqueezeNet fire module concatenates its two expansions (55 x 55 x 64 each) along the
channels and the next squeeze convolution reads the 128 channels: the concatenation is a
dispatch of its own copying both into a new tensor, 1.5 MB written and read again, 8% of the
network's time on one thread. Over its input channels a 1 x 1 convolution is a sum, and sum
over c of x[c] * w[c] is the sum over the first piece's channels then over the second's: the
first convolution reads its piece in place, the second reads the other and starts from the
first's output (a few channels: 55 x 55 x 16 here). The sums run in the same order as the
kernels sum them (channel by channel, each rounding in f32), so the result is the same bit for
bit. A larger window would reorder the sums (window position outermost), so only 1 x 1.

Matched: `tensor.concat` along dimension 3 of a static f32 rank-4 tensor whose every reader is
a `linalg.conv_2d_nhwc_hwcf` with a 1 x 1 constant f32 filter reading it as its input; the
filter's slices are stored as constants (packed later in this phase like any filter). Where one
reader is anything else the concatenation is needed anyway and is left alone, and so it is where
a reader's output has more elements than the concatenation over the pieces after the first
(`_pays`: SqueezeNet's classifier, 1000 channels out of 512). Only when llvm-cpu is among the
targets, whose kernels make the trade pay."""

from __future__ import annotations

import numpy as np

from weir.compiler.global_opt.constant_values import constant_value, stored_constant
from weir.compiler.global_opt.packed_constants import llvm_cpu_target
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.linalg_windows import window_op
from weir.ir import constants_of, ConstantStore
from weir.ir.upstream import (
    arith,
    Builder,
    Float32Type,
    InsertPoint,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)

_F32 = Float32Type()
_CONV = "linalg.conv_2d_nhwc_hwcf"


class SplitConvsOverConcats(Pass):
    flag = "split-convs-over-concats"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        if llvm_cpu_target(state) is None:
            return
        constants = constants_of(module)
        for op in list(module.walk()):
            if not isinstance(op, tensor.ConcatOp) or op.dim.value.data != 3 or \
                    not _static_f32(op.result):
                continue
            readers = [use.operation for use in op.result.uses]
            filters = [_pointwise_filter(r, op.result, constants) for r in readers]
            if not readers or any(f is None for f in filters) or \
                    not all(_pays(r, len(op.inputs)) for r in readers):
                continue
            for reader, values in zip(readers, filters):
                assert values is not None
                _split(reader, list(op.inputs), values, constants)
            op.detach()
            op.erase()


def _pays(conv: Operation, pieces: int) -> bool:
    """Whether the chain moves fewer elements than the concatenation: each piece after the
    first reads and writes the convolution's output once more, where the concatenation writes
    its input once more (and the convolution then reads all its channels in one GEMM).
    SqueezeNet's classifier, 512 -> 1000 channels at 13 x 13, ran 1.12x slower in sequence
    as two chained halves than after its concatenation (0.03 ms of it)."""
    x, out = (v.type.get_shape() for v in (conv.operands[0],  # type: ignore[attr-defined]
                                           conv.results[0]))
    return (pieces - 1) * int(np.prod(out)) < int(np.prod(x))


def _static_f32(v: SSAValue) -> bool:
    t = v.type
    return isinstance(t, TensorType) and t.element_type == _F32 and t.has_static_shape() and \
        len(t.get_shape()) == 4


def _pointwise_filter(op: Operation, x: SSAValue,
                      constants: ConstantStore) -> np.ndarray | None:
    """The constant 1 x 1 x C x F filter of `op` when it is a convolution reading `x` as its
    input (only), else None."""
    if op.name != _CONV or len(op.operands) != 3 or len(op.results) != 1 or \
            op.operands[0] is not x or any(v is x for v in op.operands[1:]) or \
            not all(_static_f32(v) for v in (*op.operands, op.results[0])):
        return None
    w = op.operands[1]
    shape = w.type.get_shape()  # type: ignore[attr-defined]
    if tuple(shape[:2]) != (1, 1):
        return None
    values = constant_value(w, constants)
    return values if values is not None and values.dtype == np.float32 else None


def _split(conv: Operation, pieces: list[SSAValue], w: np.ndarray,
           constants: ConstantStore) -> None:
    """`conv` (of the concatenation of `pieces`, filter values `w`) as one convolution per
    piece, in order, each from the last one's result, the first from `conv`'s own init."""
    b = Builder(InsertPoint.before(conv))
    acc = conv.operands[2]
    first = 0
    for piece in pieces:
        chans = piece.type.get_shape()[3]  # type: ignore[attr-defined]
        part = w[:, :, first:first + chans, :]
        t = TensorType(_F32, list(part.shape))
        weights = stored_constant(b, constants, part, t, "filter_piece")
        step = b.insert(window_op(_CONV)([piece, weights], [acc], [acc.type],
                                         strides=conv.strides,  # type: ignore[attr-defined]
                                         dilations=conv.dilations))  # type: ignore[attr-defined]
        acc = step.results[0]
        first += chans
    source = conv.operands[1].owner
    conv.results[0].replace_all_uses_with(acc)
    conv.detach()
    conv.erase()
    # The whole filter goes when nothing else reads it, so the weights are stored once.
    if isinstance(source, arith.ConstantOp) and not source.result.uses:
        source.detach()
        source.erase()

"""Rewrites an NHWC pooling of a channel concatenation as the concatenation of one pooling per
piece, so the concatenation before the pooling is never written.

Why: SqueezeNet concatenates two fire modules' expansions (55 x 55 x 64 each) along the
channels and max-pools the 128 channels: the concatenation is a dispatch of its own that copies
1.5 MB, which the pooling then reads back (0.15 ms of the network's 5.7 on one thread, as much
as the pooling itself). A pooling works on each channel alone, so pooling the pieces and
concatenating the pooled results gives the same values; each pooling reads its piece in place.
The concatenation left after the poolings is of a quarter of the size at stride 2, and where a
1 x 1 convolution reads it (the next squeeze), split-convs-over-concats, after this pass, takes
it away too.

Matched: `tensor.concat` along dimension 3 of a static rank-4 tensor whose every reader is a
`linalg.pooling_nhwc_max` or `linalg.pooling_nhwc_sum` reading it as its input, or a
`tensor.pad` of its rows and columns by a constant (a ceil-mode pooling's, as torch-mlir states
it) that only such poolings read; each pooling's init is a `linalg.fill` of an empty tensor (each
piece's pooling starts from a fill of the same value, from the piece padded the same way).
Where one reader is anything else the concatenation is needed anyway and is left alone. Only
when llvm-cpu is among the targets, as split-convs-over-concats, whose work this prepares."""

from __future__ import annotations

from weir.compiler.global_opt.layout_transposes import replace_op
from weir.compiler.global_opt.packed_constants import llvm_cpu_target
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.linalg_windows import window_op
from weir.ir.upstream import (
    Builder,
    EmptyOp,
    InsertPoint,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)

_POOLS = ("linalg.pooling_nhwc_max", "linalg.pooling_nhwc_sum")


class SplitPoolsOverConcats(Pass):
    flag = "split-pools-over-concats"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        if llvm_cpu_target(state) is None:
            return
        for op in list(module.walk()):
            if not isinstance(op, tensor.ConcatOp) or op.dim.value.data != 3 or \
                    not _static_rank4(op.result):
                continue
            chains = _pool_chains(op.result)
            if chains is None:
                continue
            # The last pooling replaced takes the pads and the concatenation with it.
            for pad, pool in chains:
                _split(pool, list(op.inputs), pad)


def _pool_chains(x: SSAValue) -> list[tuple[tensor.PadOp | None, Operation]] | None:
    """(pad or None, pooling) for every pooling that reads `x`, directly or through a pad of
    its rows and columns; None when any reader of `x` or of such a pad is something else."""
    chains: list[tuple[tensor.PadOp | None, Operation]] = []
    for reader in [use.operation for use in x.uses]:
        if _pools(reader, x):
            chains.append((None, reader))
        elif isinstance(reader, tensor.PadOp) and _spatial_pad(reader, x):
            pools = [use.operation for use in reader.result.uses]
            if not pools or not all(_pools(p, reader.result) for p in pools):
                return None
            chains.extend((reader, p) for p in pools)
        else:
            return None
    return chains or None


def _spatial_pad(pad: tensor.PadOp, x: SSAValue) -> bool:
    """Whether `pad` pads `x` by a constant along its rows and columns only, statically."""
    low, high = pad.static_low.get_values(), pad.static_high.get_values()
    return pad.source is x and not pad.low and not pad.high and \
        low[0] == low[3] == high[0] == high[3] == 0 and _static_rank4(pad.result) and \
        not any(a.uses for a in pad.region.block.args)


def _static_rank4(v: SSAValue) -> bool:
    t = v.type
    return isinstance(t, TensorType) and t.has_static_shape() and len(t.get_shape()) == 4


def _pools(op: Operation, x: SSAValue) -> bool:
    """Whether `op` is an NHWC pooling of `x` (as its input only) from a fill of an empty
    tensor."""
    if op.name not in _POOLS or len(op.operands) != 3 or len(op.results) != 1 or \
            op.operands[0] is not x or any(v is x for v in op.operands[1:]):
        return False
    fill = op.operands[2].owner
    return isinstance(fill, linalg.FillOp) and isinstance(fill.outputs[0].owner, EmptyOp) and \
        _static_rank4(op.results[0])


def _split(pool: Operation, pieces: list[SSAValue], pad: tensor.PadOp | None) -> None:
    """`pool` (of the concatenation of `pieces`, padded by `pad` unless it is None) as the
    concatenation of one pooling per piece (padded the same way), each from a fill of the
    value `pool`'s init was filled with."""
    b = Builder(InsertPoint.before(pool))
    fill = pool.operands[2].owner
    assert isinstance(fill, linalg.FillOp)
    n, oh, ow, _ = pool.results[0].type.get_shape()  # type: ignore[attr-defined]
    element = pool.results[0].type.element_type  # type: ignore[attr-defined]
    pooled: list[SSAValue] = []
    for piece in pieces:
        chans = piece.type.get_shape()[3]  # type: ignore[attr-defined]
        source = piece
        if pad is not None:
            ph, pw = pad.result.type.get_shape()[1:3]  # type: ignore[attr-defined]
            source = b.insert(tensor.PadOp(
                piece, [], [], pad.region.clone(), pad.static_low.get_values(),
                pad.static_high.get_values(),
                TensorType(pad.result.type.element_type,  # type: ignore[attr-defined]
                           [n, ph, pw, chans]))).result
        t = TensorType(element, [n, oh, ow, chans])
        empty = b.insert(EmptyOp([], t)).tensor
        init = b.insert(linalg.FillOp((fill.inputs[0],), (empty,), (t,))).results[0]
        strides, dilations = pool.strides, pool.dilations  # type: ignore[attr-defined]
        step = b.insert(window_op(pool.name)([source, pool.operands[1]], [init], [t],
                                             strides=strides, dilations=dilations))
        pooled.append(step.results[0])
    joined = b.insert(tensor.ConcatOp(pooled, 3, pool.results[0].type))
    # The old init, pad and concatenation go with it once nothing else reads them.
    replace_op(pool, joined.result)

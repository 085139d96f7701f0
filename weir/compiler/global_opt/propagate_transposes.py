"""Carries the NHWC-to-NCHW transposes that convert-conv-to-channels-last leaves after each
convolution down through the ops that follow it, until they meet the NCHW-to-NHWC transpose of
the next convolution and both go.

Why: between two convolutions a network has a ReLU, a residual add, a pad, a concat. Each of
them is as happy in NHWC as in NCHW, but with a transpose in front it reads the channels-last
value through a permuted index, and the next convolution's own transpose back to NHWC becomes
a dispatch of its own. Moved past them, the transposes of consecutive convolutions compose to
the identity and vanish: the network stays NHWC from its first convolution to where its values
leave the convolutional part (a global pooling, a flatten, a result).

Rewritten, in program order, for a value read through `transpose(v, [0, 3, 1, 2])`:
- an elementwise `linalg.generic` (parallel loops, one result written at its own index, no
  `linalg.index`): the same generic over v's dimension order, each operand's map composed with
  the permutation (a per-channel constant's map follows the channel to the last dimension);
  every input that is such a transpose is read as its source; the result is transposed back;
- a `tensor.pad` with static sizes whose body ignores its indices: v padded (the sizes
  permuted), then transposed;
- a `tensor.concat` whose inputs are all such transposes: their sources concatenated along the
  permuted dimension, then transposed;
- a transpose of a transpose: the one transpose they make, or none.
Only when llvm-cpu is a target, as for the pass that makes these transposes."""

from __future__ import annotations

from weir.compiler.global_opt.layout_transposes import (
    inverse,
    replace_op,
    TO_NCHW,
    transpose_of,
    transposed,
)
from weir.compiler.global_opt.packed_constants import llvm_cpu_target
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir import constants_of, ConstantStore
from weir.ir.upstream import (
    AffineDimExpr,
    AffineMap,
    AffineMapAttr,
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


class PropagateTransposes(Pass):
    flag = "propagate-transposes"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        if llvm_cpu_target(state) is None:
            return
        constants = constants_of(module)
        for op in list(module.walk()):
            if op.parent is None:
                continue
            if isinstance(op, linalg.TransposeOp):
                _fold_transpose(op, constants)
            elif isinstance(op, linalg.GenericOp):
                _generic(op, constants)
            elif isinstance(op, tensor.PadOp):
                _pad(op, constants)
            elif isinstance(op, tensor.ConcatOp):
                _concat(op, constants)


def _layout_source(value: SSAValue) -> SSAValue | None:
    """v, when `value` is `transpose(v, [0, 3, 1, 2])`: NHWC read as NCHW."""
    found = transpose_of(value)
    return found[0] if found is not None and found[1] == TO_NCHW else None


def _replace(op: Operation, b: Builder, result: SSAValue, constants: ConstantStore) -> None:
    """`op`'s one result becomes `result` transposed back to NCHW, and `op` goes."""
    replace_op(op, transposed(b, result, TO_NCHW, constants))


def _fold_transpose(op: linalg.TransposeOp, constants: ConstantStore) -> None:
    if transpose_of(op.inputs[0]) is None:
        return
    b = Builder(InsertPoint.before(op))
    perm = tuple(op.permutation.get_values())
    replace_op(op, transposed(b, op.inputs[0], perm, constants))  # type: ignore[arg-type]


def _generic(op: linalg.GenericOp, constants: ConstantStore) -> None:
    if len(op.outputs) != 1 or len(op.res) != 1 or \
            any(str(it.data) != "parallel" for it in op.iterator_types) or \
            any(isinstance(inner, linalg.IndexOp) for inner in op.body.walk()):
        return
    maps = [m.data for m in op.indexing_maps]
    rank = len(op.iterator_types)
    out_t = op.res[0].type
    if rank != 4 or maps[-1] != AffineMap.identity(4) or not isinstance(out_t, TensorType) or \
            not any(_layout_source(v) is not None for v in op.inputs):
        return
    # Loop i of the NCHW generic is loop TO_NCHW[i] of the NHWC one.
    moved = AffineMap(4, 0, tuple(AffineDimExpr(p) for p in TO_NCHW))
    back = inverse(TO_NCHW)
    inputs: list[SSAValue] = []
    new_maps: list[AffineMap] = []
    for value, m in zip(op.inputs, maps):
        composed = m.compose(moved)
        source = _layout_source(value)
        if source is None:
            inputs.append(value)
            new_maps.append(composed)
        else:
            inputs.append(source)
            new_maps.append(AffineMap(4, 0, tuple(composed.results[back[j]]
                                                   for j in range(len(composed.results)))))
    b = Builder(InsertPoint.before(op))
    shape = [out_t.get_shape()[p] for p in back]
    nhwc = TensorType(out_t.element_type, shape)
    init = op.outputs[0]
    if op.body.block.args[len(op.inputs)].uses:  # the body reads the init
        init = transposed(b, init, back, constants)
    else:
        init = b.insert(EmptyOp([], nhwc)).tensor
    new = b.insert(linalg.GenericOp(
        inputs, [init], op.body.clone(), [AffineMapAttr(m) for m in (*new_maps,
                                                                    AffineMap.identity(4))],
        op.iterator_types, [nhwc]))
    _replace(op, b, new.res[0], constants)


def _pad(op: tensor.PadOp, constants: ConstantStore) -> None:
    source = _layout_source(op.source)
    block = op.region.block
    if source is None or op.low or op.high or any(a.uses for a in block.args):
        return
    back = inverse(TO_NCHW)
    low = [op.static_low.get_values()[p] for p in back]
    high = [op.static_high.get_values()[p] for p in back]
    out_t = op.result.type
    assert isinstance(out_t, TensorType)
    nhwc = TensorType(out_t.element_type, [out_t.get_shape()[p] for p in back])
    b = Builder(InsertPoint.before(op))
    new = b.insert(tensor.PadOp(source, [], [], op.region.clone(), low, high, nhwc))
    _replace(op, b, new.result, constants)


def _concat(op: tensor.ConcatOp, constants: ConstantStore) -> None:
    sources = [_layout_source(v) for v in op.inputs]
    if not sources or any(s is None for s in sources):
        return
    out_t = op.result.type
    assert isinstance(out_t, TensorType)
    back = inverse(TO_NCHW)
    nhwc = TensorType(out_t.element_type, [out_t.get_shape()[p] for p in back])
    b = Builder(InsertPoint.before(op))
    new = b.insert(tensor.ConcatOp(sources, TO_NCHW[op.dim.value.data], nhwc))  # type: ignore[arg-type]
    _replace(op, b, new.result, constants)

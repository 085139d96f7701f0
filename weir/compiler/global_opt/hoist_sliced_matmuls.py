"""A matmul in a loop whose left operand is one step's slice of a tensor computed before the loop,
and whose right operand is a constant, becomes one matmul of every step's rows before the loop;
each step reads its rows of the product.

Why: an ONNX LSTM (or GRU, RNN), as torch-mlir imports it, loops over the time steps and
multiplies each step's input by the gates' input weights inside the loop: sixteen 8 x 256
products a layer, each a dispatch once the loop is unrolled, each reading the whole weight
matrix for 8 rows. The input projection does not depend on the recurrence, so all steps' rows
are one (T*8) x K product by the same weights: one dispatch, the weights read once, a GEMM
with rows enough to block over (PyTorch's own LSTM export states it so, which
batch-matmul-to-matmul then makes one matmul).

Each element is the same dot product over the same K in the same order, so the results are
exact. Only a plain 2-D f32 matmul with static shapes directly in an scf.for body, from a fill
of +0, by weights that are an `arith.constant`, whose left operand is `collapse_shape` of a
unit-stride `extract_slice` taking one index (static or not) of the first dimension of a
T x M x K tensor defined outside the loop and all of the other two."""

from __future__ import annotations

from weir.compiler.global_opt.layout_transposes import erase_unused
from weir.compiler.global_opt.matmul_forms import plain_matmul, zero_fill
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.tensor_shapes import index, reassociation
from weir.dialects import linalg_ext
from weir.ir.upstream import (
    arith,
    Builder,
    DYNAMIC_INDEX,
    EmptyOp,
    Float32Type,
    InsertPoint,
    linalg,
    ModuleOp,
    Operation,
    scf,
    SSAValue,
    tensor,
    TensorType,
)

_F32 = Float32Type()


class HoistSlicedMatmuls(Pass):
    flag = "hoist-sliced-matmuls"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            found = _hoistable(op)
            if found is not None:
                _hoist(op, *found)


def _hoistable(op: Operation
               ) -> tuple[scf.ForOp, tensor.ExtractSliceOp, SSAValue | int] | None:
    """(the loop, the step's slice, the slice's index) when `op` is a matmul this pass hoists,
    else None."""
    loop = op.parent_op()
    if not isinstance(loop, scf.ForOp) or not plain_matmul(op):
        return None
    lhs, rhs, init = op.operands
    types = [v.type for v in (lhs, rhs, init)]
    if not all(isinstance(t, TensorType) and t.has_static_shape() for t in types):
        return None
    if not isinstance(rhs.owner, arith.ConstantOp) or zero_fill(init) is None:
        return None
    collapse = lhs.owner
    if not isinstance(collapse, tensor.CollapseShapeOp):
        return None
    groups = [[int(i.value.data) for i in g]
              for g in collapse.reassociation]  # type: ignore[attr-defined]
    piece = collapse.src.owner  # type: ignore[attr-defined]
    if groups != [[0, 1], [2]] or not isinstance(piece, tensor.ExtractSliceOp):
        return None
    source = piece.source
    shape = source.type.get_shape()  # type: ignore[attr-defined]
    if len(shape) != 3 or list(piece.static_sizes.get_values()) != [1, *shape[1:]] or \
            list(piece.static_strides.get_values()) != [1, 1, 1]:
        return None
    offsets = list(piece.static_offsets.get_values())
    if offsets[1:] != [0, 0] or _inside(source, loop):
        return None
    step: SSAValue | int = offsets[0]
    if step == DYNAMIC_INDEX:
        if len(piece.offsets) != 1:
            return None
        step = piece.offsets[0]
    return loop, piece, step


def _inside(value: SSAValue, loop: Operation) -> bool:
    """Whether `value` is defined inside `loop` (a result of an op within it, or an argument
    of one of its blocks)."""
    owner = value.owner
    return loop.is_ancestor(owner if isinstance(owner, Operation) else owner.parent_op())


def _hoist(op: Operation, loop: scf.ForOp, piece: tensor.ExtractSliceOp,
           step: SSAValue | int) -> None:
    source = piece.source
    steps, rows, depth = source.type.get_shape()  # type: ignore[attr-defined]
    cols = op.results[0].type.get_shape()[1]  # type: ignore[attr-defined]
    _, rhs, init = op.operands
    zero = zero_fill(init)
    assert zero is not None and isinstance(rhs.owner, arith.ConstantOp) and \
        isinstance(zero.owner, arith.ConstantOp)
    before = Builder(InsertPoint.before(loop))
    stacked = before.insert(tensor.CollapseShapeOp.build(
        operands=[source], result_types=[TensorType(_F32, [steps * rows, depth])],
        properties={"reassociation": reassociation([[0, 1], [2]])})).results[0]
    weights = before.insert(rhs.owner.clone()).result
    scalar = before.insert(zero.owner.clone()).result
    all_t = TensorType(_F32, [steps * rows, cols])
    empty = before.insert(EmptyOp([], all_t)).tensor
    acc = before.insert(linalg.FillOp((scalar,), (empty,), (all_t,))).results[0]
    product = before.insert(linalg_ext.MatmulOp([stacked, weights], [acc])).results[0]
    within = Builder(InsertPoint.before(op))
    first: SSAValue | int = step * rows if isinstance(step, int) else \
        within.insert(arith.MuliOp(step, index(within, rows))).result
    part = within.insert(tensor.ExtractSliceOp(product, [first, 0], [rows, cols], [1, 1],
                                               op.results[0].type)).results[0]
    op.results[0].replace_all_uses_with(part)
    old = list(op.operands)
    op.detach()
    op.erase()
    erase_unused(old)
    # The step's slice, read by nothing else now (it would stay a copy dispatch of its own).
    if not piece.result.uses:
        piece.detach()
        piece.erase()

"""Matmuls of one left operand by different constant weights become one matmul by the weights
side by side, each original result a slice of its columns (IREE's horizontal fusion of
contractions).

Why: exporters state a layer's several projections of one input as separate products: an ONNX
LSTM multiplies the input and the hidden state by each of its four gates' weights (eight 8 x 256
products a step), attention projects one input to queries, keys and values. Each product is a
dispatch of its own that reads the left operand again, and each is a small GEMM: for 8 rows and
256 columns the microkernel's fixed costs and the workgroups' hand-offs weigh as much as the
products. Side by side they are one GEMM over all the columns, and the consumers read their
slices in place (flow fuses a slice into the dispatch that reads it).

Each element is the same dot product over the same K in the same order, so the results are
exact. Only plain 2-D f32 matmuls with static shapes, in one block, whose left operand is the
same value, whose right operand is a constant, and whose accumulator starts as a fill of +0 (a
bias added later stays where it was). Recurrences are still loops here (unrolled later, in flow),
so a loop body's group is fused once and its steps share the one concatenated constant."""

from __future__ import annotations

import hashlib
from collections import defaultdict

import numpy as np

from weir.compiler.global_opt.constant_values import constant_value, resource_name, \
    stored_constant
from weir.compiler.global_opt.layout_transposes import erase_unused
from weir.compiler.global_opt.pack_matmul_weights import plain_matmul
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import linalg_ext
from weir.ir import ConstantStore, constants_of
from weir.ir.upstream import (
    arith,
    Block,
    Builder,
    EmptyOp,
    Float32Type,
    FloatAttr,
    InsertPoint,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)

_F32 = Float32Type()
# Products of fewer columns than this are fused (a wider one is a GEMM worth its dispatch).
MAX_COLUMNS = 4096


class FuseHorizontalMatmuls(Pass):
    flag = "fuse-horizontal-matmuls"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        constants = constants_of(module)
        groups: dict[tuple[Block, SSAValue], list[tuple[Operation, np.ndarray]]] = \
            defaultdict(list)
        for op in module.walk():
            weights = _fusable(op, constants)
            if weights is not None and op.parent is not None:
                groups[(op.parent, op.operands[0])].append((op, weights))
        for members in groups.values():
            if len(members) > 1:
                _fuse(members, constants)


def _fusable(op: Operation, constants: ConstantStore) -> np.ndarray | None:
    """The constant weights of a matmul this pass may fuse, else None."""
    if not plain_matmul(op):
        return None
    types = [v.type for v in (*op.operands, op.results[0])]
    if not all(isinstance(t, TensorType) and t.has_static_shape() and len(t.get_shape()) == 2
               for t in types):
        return None
    columns = types[1].get_shape()[1]  # type: ignore[attr-defined]
    if zero_fill(op.operands[2]) is None or columns >= MAX_COLUMNS:
        return None
    weights = constant_value(op.operands[1], constants)
    if weights is None or weights.dtype != np.float32:
        return None
    return weights


def zero_fill(value: SSAValue) -> SSAValue | None:
    """The +0 scalar that `value` is a fill of (into an empty tensor), else None: a product
    accumulated onto it is the product alone (hoist_sliced_matmuls.py takes the same)."""
    fill = value.owner
    if not isinstance(fill, linalg.FillOp) or not isinstance(fill.outputs[0].owner, EmptyOp):
        return None
    scalar = fill.inputs[0]
    const = scalar.owner
    if not isinstance(const, arith.ConstantOp) or not isinstance(const.value, FloatAttr):
        return None
    number = const.value.value.data
    return scalar if number == 0.0 and np.copysign(1.0, number) > 0 else None


def _fuse(members: list[tuple[Operation, np.ndarray]], constants: ConstantStore) -> None:
    """One matmul by the members' weights side by side, before the first of them; each
    member's result becomes its slice of the columns."""
    block = members[0][0].parent
    assert block is not None
    order = {op: i for i, op in enumerate(block.ops)}
    members = sorted(members, key=lambda m: order[m[0]])
    first = members[0][0]
    lhs = first.operands[0]
    rows = lhs.type.get_shape()[0]  # type: ignore[attr-defined]
    widths = [int(w.shape[1]) for _, w in members]
    k = int(members[0][1].shape[0])
    out_t = TensorType(_F32, [rows, sum(widths)])
    b = Builder(InsertPoint.before(first))
    names = [resource_name(op.operands[1], "weights") for op, _ in members]
    digest = hashlib.sha256("\0".join(names).encode()).hexdigest()[:8]
    weights = stored_constant(b, constants, np.concatenate([w for _, w in members], axis=1),
                              TensorType(_F32, [k, sum(widths)]),
                              f"{names[0]}_side_by_side_{digest}")
    zero = zero_fill(first.operands[2])
    assert zero is not None
    empty = b.insert(EmptyOp([], out_t)).tensor
    acc = b.insert(linalg.FillOp((zero,), (empty,), (out_t,))).results[0]
    product = b.insert(linalg_ext.MatmulOp([lhs, weights], [acc])).results[0]
    starts = np.cumsum([0, *widths[:-1]])
    parts = [b.insert(tensor.ExtractSliceOp(product, [0, int(start)], [rows, width], [1, 1],
                                            op.results[0].type)).results[0]
             for (op, _), start, width in zip(members, starts, widths)]
    for (op, _), part in zip(members, parts):
        op.results[0].replace_all_uses_with(part)
        old = list(op.operands)
        op.detach()
        op.erase()
        erase_unused(old)

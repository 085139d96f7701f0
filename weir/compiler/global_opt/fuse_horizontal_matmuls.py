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
from weir.compiler.global_opt.layout_transposes import erase_unused, remade_init
from weir.compiler.global_opt.matmul_forms import plain_matmul, zero_fill
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import linalg_ext
from weir.ir import ConstantStore, constants_of
from weir.ir.upstream import (
    Block,
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
# Products of fewer columns than this are fused (a wider one is a GEMM worth its dispatch).
MAX_COLUMNS = 4096


class FuseHorizontalMatmuls(Pass):
    flag = "fuse-horizontal-matmuls"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        constants = constants_of(module)
        # In block order (the walk's), so a group's first member is the first in its block.
        groups: dict[tuple[Block, SSAValue], list[Operation]] = defaultdict(list)
        for op in module.walk():
            if _fusable(op) and op.parent is not None:
                groups[(op.parent, op.operands[0])].append(op)
        for ops in groups.values():
            if len(ops) < 2:  # the weights are evaluated only where there is a group
                continue
            members = []
            for op in ops:
                weights = constant_value(op.operands[1], constants)
                if weights is not None and weights.dtype == np.float32:
                    members.append((op, weights))
            if len(members) > 1:
                _fuse(members, constants)


def _fusable(op: Operation) -> bool:
    """A matmul this pass may fuse, but for its weights being a constant."""
    if not plain_matmul(op):
        return False
    types = [v.type for v in (*op.operands, op.results[0])]
    if not all(isinstance(t, TensorType) and t.has_static_shape() and len(t.get_shape()) == 2
               for t in types):
        return False
    return zero_fill(op.operands[2]) is not None and \
        types[1].get_shape()[1] < MAX_COLUMNS  # type: ignore[attr-defined]


def _fuse(members: list[tuple[Operation, np.ndarray]], constants: ConstantStore) -> None:
    """One matmul by the members' weights side by side, before the first of them; each
    member's result becomes its slice of the columns."""
    first = members[0][0]
    lhs = first.operands[0]
    rows = lhs.type.get_shape()[0]  # type: ignore[attr-defined]
    widths = [int(w.shape[1]) for _, w in members]
    k = int(members[0][1].shape[0])
    b = Builder(InsertPoint.before(first))
    names = [resource_name(op.operands[1], "weights") for op, _ in members]
    digest = hashlib.sha256("\0".join(names).encode()).hexdigest()[:8]
    weights = stored_constant(b, constants, np.concatenate([w for _, w in members], axis=1),
                              TensorType(_F32, [k, sum(widths)]),
                              f"{names[0]}_side_by_side_{digest}")
    acc = remade_init(b, first.operands[2], TensorType(_F32, [rows, sum(widths)]), [], [])
    assert acc is not None
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

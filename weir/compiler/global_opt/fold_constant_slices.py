"""Evaluates at compile time a `tensor.extract_slice` of a constant with static offsets, sizes
and strides, and stores the slice as a constant of its own.

Why: ONNX states an LSTM's weights as one matrix per layer holding the four gates' (W of
4H x I, R of 4H x H, B of 8H), and torch-mlir's import slices each gate out of it inside the
program. Left as they are, the slices are dispatches on every call, and the matmuls of the
recurrent loop read their results, values the compiler cannot pack at compile time: every step
of the loop packed every gate's weights again (an ONNX LSTM of 2 x 16 steps ran 20x slower than
the same LSTM from torch, whose weights are constants of their own). A slice of a constant is
as constant as its source; as a constant, the transposes folded after it and the weight packing
at the end of this phase see it. The source goes when nothing else reads it, so the weights are
stored once. Splat constants are left alone: their slices cost nothing at run time."""

from __future__ import annotations

import numpy as np

from weir.compiler.constant_data import constant_array
from weir.compiler.global_opt.constant_values import resource_name, stored_constant
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir import constants_of
from weir.ir.upstream import (
    arith,
    Builder,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    InsertPoint,
    ModuleOp,
    tensor,
    TensorType,
)


class FoldConstantSlices(Pass):
    flag = "fold-constant-slices"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        constants = constants_of(module)
        for op in list(module.walk()):
            if not isinstance(op, tensor.ExtractSliceOp) or op.offsets or op.sizes or \
                    op.strides:
                continue
            source = op.source.owner
            result = op.result.type
            if not isinstance(source, arith.ConstantOp) or not isinstance(result, TensorType) \
                    or not result.has_static_shape():
                continue
            value = source.value
            if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr) or \
                    (isinstance(value, DenseIntOrFPElementsAttr) and value.is_splat()):
                continue
            array = constant_array(value, source, constants)
            window = tuple(slice(o, o + n * s, s) for o, n, s in zip(
                op.static_offsets.get_values(), op.static_sizes.get_values(),
                op.static_strides.get_values()))
            # A rank-reducing slice drops unit dimensions: its result's shape is the slice's.
            sliced = array[window].reshape(result.get_shape())
            folded = stored_constant(Builder(InsertPoint.before(op)), constants, sliced, result,
                                     resource_name(op.source, "constant") + "_slice")
            op.result.replace_all_uses_with(folded)
            op.detach()
            op.erase()
            if not source.result.uses:
                source.detach()
                source.erase()

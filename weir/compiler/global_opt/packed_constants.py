"""The step both packing passes share: a constant weight replaced by its packed form, read back
as the original (`collapse_shape(transpose(packed, permutation))`, the layout contract of
weir/format/packed_weights.py), and the llvm-cpu CPU whose microkernels fix the packing."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from weir.compiler.global_opt.constant_values import resource_name, stored_constant
from weir.compiler.global_opt.layout_transposes import erase_unused
from weir.compiler.state import CompilationState
from weir.compiler.tensor_shapes import reassociation
from weir.ir import ConstantStore
from weir.ir.upstream import (
    Builder,
    DenseArrayBase,
    EmptyOp,
    Float32Type,
    InsertPoint,
    IntegerType,
    linalg,
    Operation,
    tensor,
    TensorType,
)

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.machine import CpuTarget

_F32 = Float32Type()
_I64 = IntegerType(64)


def llvm_cpu_target(state: CompilationState) -> CpuTarget | None:
    """The CPU llvm-cpu generates code for; None when llvm-cpu is not one of the targets."""
    options = state.options
    if "llvm-cpu" not in options.target_backends:
        return None
    from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
    return resolve_cpu(options.llvmcpu_target_cpu, options.llvmcpu_target_cpu_features)


def replace_with_packed(op: Operation, index: int, packed: np.ndarray, suffix: str,
                        permutation: list[int], groups: list[list[int]],
                        constants: ConstantStore) -> None:
    """Operand `index` of `op` (a constant) becomes `packed` (f32, stored as a resource named
    after the original with `suffix`) read back through the transpose by `permutation` and the
    collapse of `groups`, which give the original tensor again, or with its last panel padded
    a larger one, of which an extract_slice at offset zero is the original; the original
    constant goes when nothing else reads it."""
    value = op.operands[index]
    b = Builder(InsertPoint.before(op))
    stored = stored_constant(b, constants, packed, TensorType(_F32, packed.shape),
                             f"{resource_name(value, 'weights')}{suffix}")
    turned_t = TensorType(_F32, [packed.shape[i] for i in permutation])
    empty = b.insert(EmptyOp([], turned_t)).tensor
    turned = b.insert(linalg.TransposeOp(
        stored, empty, DenseArrayBase.from_list(_I64, permutation), turned_t)).results[0]
    original = value.type
    assert isinstance(original, TensorType)
    collapsed_t = TensorType(_F32, [math.prod(turned_t.get_shape()[i] for i in group)
                                    for group in groups])
    read = b.insert(tensor.CollapseShapeOp.build(
        operands=[turned], result_types=[collapsed_t],
        properties={"reassociation": reassociation(groups)})).results[0]
    if collapsed_t != original:  # the last panel padded: the original's extent of it
        sizes = list(original.get_shape())
        read = b.insert(tensor.ExtractSliceOp(read, [0] * len(sizes), sizes, [1] * len(sizes),
                                              original)).results[0]
    op.operands[index] = read
    erase_unused([value])

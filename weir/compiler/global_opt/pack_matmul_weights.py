"""Stores a matmul's constant right operand (K x N weights) in the panel layout the llvm-cpu
GEMM microkernel reads: panels of NR columns, each K x NR contiguous (shape P x K x NR), read
back as `collapse_shape(transpose(panels, [1, 0, 2]))`, which is the K x N matrix again.

Why: the microkernel multiplies from packed panels of B. Packed on every call, a weight is read
from memory and written to scratch before each use: for an LSTM's recurrent 8 x 256 @ 256 x
1024 step or a linear layer at batch 64, packing costs as much as the products. The weights are
constant, so they are packed once, here, and the microkernel reads the panels in place (the
llvm-cpu target recognises the transpose-and-collapse of a P x K x NR binding whose NR is its
own panel width). Every other target reads the same program as the plain K x N product it
still is, so the rewrite is exact everywhere and fast where the layout matches.

Only where it pays and is simple: a 2-D matmul without maps of its own, f32 throughout, static
shapes, more than `GEMV_ROWS` rows (fewer read B in place, unpacked), N at least NR (the last
panel padded with zeros where NR does not divide N: a classifier's 1000 columns), and when
llvm-cpu is one of the targets (NR is its panel width for the target CPU)."""

from __future__ import annotations

import numpy as np

from weir.compiler.global_opt.constant_values import constant_value
from weir.compiler.global_opt.matmul_forms import plain_matmul
from weir.compiler.global_opt.packed_constants import llvm_cpu_target, replace_with_packed
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.format.packed_weights import (
    MATMUL_COLLAPSE_GROUPS,
    MATMUL_PANELS_PERMUTATION,
    matmul_panels,
)
from weir.ir import constants_of
from weir.ir.upstream import ModuleOp, SSAValue, TensorType

# At most this many rows, the microkernel reads B where it lies (contraction.SMALL_M).
GEMV_ROWS = 4
# Weights smaller than this many elements are packed quickly enough on each call.
MIN_ELEMENTS = 4096


class PackMatmulWeights(Pass):
    flag = "pack-matmul-weights"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        panel = _panel_columns(state)
        if panel is None:
            return
        constants = constants_of(module)
        for op in list(module.walk()):
            if not plain_matmul(op):
                continue
            lhs, rhs = op.operands[0], op.operands[1]
            m = _static_shape(lhs)
            shape = _static_shape(rhs)
            if m is None or shape is None or m[0] <= GEMV_ROWS:
                continue
            k, n = shape
            if n < panel or k * n < MIN_ELEMENTS:
                continue
            weights = constant_value(rhs, constants)
            if weights is None or weights.dtype != np.float32:
                continue
            replace_with_packed(op, 1, matmul_panels(weights, panel), f"_panels{panel}",
                                MATMUL_PANELS_PERMUTATION, MATMUL_COLLAPSE_GROUPS, constants)


def _panel_columns(state: CompilationState) -> int | None:
    """The llvm-cpu GEMM's f32 panel width for the target CPU; None without llvm-cpu."""
    cpu = llvm_cpu_target(state)
    if cpu is None:
        return None
    from weir.compiler.targets.llvm_cpu.gemm import panel_columns
    return panel_columns(cpu, "f32")


def _static_shape(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    if not isinstance(t, TensorType) or not t.has_static_shape():
        return None
    return tuple(t.get_shape())

"""Stores a convolution's constant filter in the panel layout the llvm-cpu direct convolution
kernel reads: one panel per block of NR output channels, each KH x KW x C lines of NR channels
(shape P x KH x KW x C x NR), read back as the filter in its own layout by a transpose that
puts the two parts of F side by side and a collapse that joins them.

Why: the direct kernel multiplies from packed panels. Packed on every call, the filter is read
from memory and written to scratch by every thread for every dispatch, once per range of
output rows each thread takes: for the 3 x 3 x 512 x 512 filters at the end of a ResNet, whose
output is 7 x 7 pixels, packing costs as much as the products. The filter is constant, so it
is packed once, here, and the kernel reads the panels in place (the llvm-cpu target recognises
the transpose-and-collapse of a P x KH x KW x C x NR binding whose NR is its own panel width).
Every other target reads the program as the convolution it still is, so the rewrite is exact
everywhere and fast where the layout matches.

Only where the direct kernel runs and the layout is simple: 2-D convolutions (not depthwise)
in NHWC/HWCF, NHWC/FHWC or NCHW/FCHW, f32 throughout with static shapes, F a multiple of NR,
and not a 1 x 1 stride-1 NCHW convolution (llvm-cpu runs those as one GEMM per image), when
llvm-cpu is one of the targets."""

from __future__ import annotations

import numpy as np

from weir.compiler.global_opt.constant_values import constant_value, resource_name
from weir.compiler.global_opt.target_cpu import llvm_cpu_target
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.tensor_shapes import reassociation
from weir.format.packed_weights import conv_collapse_groups, conv_panels, conv_panels_permutation
from weir.ir import constants_of
from weir.ir.upstream import (
    arith,
    Builder,
    DenseArrayBase,
    DenseResourceAttr,
    EmptyOp,
    Float32Type,
    InsertPoint,
    IntegerType,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)
from weir.ir.window_ops import WINDOW_LAYOUTS, window_pair

_F32 = Float32Type()
_I64 = IntegerType(64)
_LAYOUTS = ("linalg.conv_2d_nhwc_hwcf", "linalg.conv_2d_nhwc_fhwc", "linalg.conv_2d_nchw_fchw")
# Filters smaller than this many elements are packed quickly enough on each call.
MIN_ELEMENTS = 4096


class PackConvFilters(Pass):
    flag = "pack-conv-filters"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        cpu = llvm_cpu_target(state)
        if cpu is None:
            return
        from weir.compiler.targets.llvm_cpu.conv_kernel import panel_width
        nr = panel_width(cpu)
        constants = constants_of(module)
        for op in list(module.walk()):
            layout = _filter_layout(op)
            if layout is None:
                continue
            weights = op.operands[1]
            sizes = dict(zip(layout, weights.type.get_shape()))  # type: ignore[attr-defined]
            if sizes["F"] % nr or np.prod(list(sizes.values())) < MIN_ELEMENTS:
                continue
            if layout == "FCHW" and sizes["H"] == sizes["W"] == 1 and \
                    window_pair(op, "strides") == (1, 1):
                continue
            values = constant_value(weights, constants)
            if values is None or values.dtype != np.float32:
                continue
            panels = conv_panels(values, layout, nr)
            name = constants.add(panels.tobytes(), f"{resource_name(weights, 'filter')}_panels{nr}")
            op.operands[1] = _unpacked(Builder(InsertPoint.before(op)), name, panels.shape,
                                       layout, weights.type)  # type: ignore[arg-type]
            source = weights.owner
            if isinstance(source, Operation) and not any(r.uses for r in source.results):
                source.detach()
                source.erase()


def _unpacked(b: Builder, name: str, shape: tuple[int, ...], layout: str,
              filter_t: TensorType) -> SSAValue:
    """`collapse_shape(transpose(panels))`: the filter in `layout` again, from the panels."""
    packed_t = TensorType(_F32, shape)
    packed = b.insert(arith.ConstantOp(DenseResourceAttr.from_params(name, packed_t),
                                       packed_t)).result
    perm = conv_panels_permutation(layout)
    turned_t = TensorType(_F32, [shape[i] for i in perm])
    empty = b.insert(EmptyOp([], turned_t)).tensor
    turned = b.insert(linalg.TransposeOp(
        packed, empty, DenseArrayBase.from_list(_I64, perm), turned_t)).results[0]
    return b.insert(tensor.CollapseShapeOp.build(
        operands=[turned], result_types=[filter_t],
        properties={"reassociation": reassociation(conv_collapse_groups(layout))})).results[0]


def _filter_layout(op: Operation) -> str | None:
    """The filter layout of a convolution this pass may pack (sizes and constants aside)."""
    if op.name not in _LAYOUTS or len(op.operands) != 3 or len(op.results) != 1:
        return None
    types = [v.type for v in (*op.operands, op.results[0])]
    if not all(isinstance(t, TensorType) and t.element_type == _F32 and t.has_static_shape()
               for t in types):
        return None
    return WINDOW_LAYOUTS[op.name].window

"""Stores a convolution's constant filter in the panel layout the llvm-cpu direct convolution
kernel reads: one panel per block of NR output channels, each KH x KW x C lines of NR channels
(shape P x KH x KW x C x NR), read back as the filter in its own layout by a transpose that
puts the two parts of F side by side and a collapse that joins them. NR is the width of the
kernel's register tile for this convolution (conv_blocking.panel_width of its sizes: 64
channels for AVX-512's wide tiles, the GEMM's panel width otherwise). A 1 x 1 stride-1
channels-last convolution runs as a GEMM whose B is the filter (its panels are the GEMM's,
64 channels wide where it runs in wide tiles).

Why: the direct kernel multiplies from packed panels. Packed on every call, the filter is read
from memory and written to scratch by every thread for every dispatch, once per range of
output rows each thread takes: for the 3 x 3 x 512 x 512 filters at the end of a ResNet, whose
output is 7 x 7 pixels, packing costs as much as the products. The filter is constant, so it
is packed once, here, and the kernel reads the panels in place (the llvm-cpu target recognises
the transpose-and-collapse of a P x KH x KW x C x NR binding whose NR is its own panel width).
Every other target reads the program as the convolution it still is, so the rewrite is exact
everywhere and fast where the layout matches.

Only where the direct kernel runs and the layout is simple: 2-D convolutions (not depthwise)
in NHWC/HWCF, NHWC/FHWC or NCHW/FCHW, f32 throughout with static shapes (the last panel padded
with zeros where NR does not divide F: SqueezeNet's classifier has 1000 channels), and not a
1 x 1 stride-1 NCHW convolution (llvm-cpu runs those as one GEMM per image), when llvm-cpu is
one of the targets."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from weir.compiler.global_opt.constant_values import constant_value
from weir.compiler.global_opt.packed_constants import llvm_cpu_target, replace_with_packed
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.format.packed_weights import conv_collapse_groups, conv_panels, conv_panels_permutation
from weir.ir import constants_of
from weir.ir.upstream import Float32Type, ModuleOp, Operation, TensorType
from weir.ir.window_ops import WINDOW_LAYOUTS, window_pair

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.conv_blocking import ConvGeometry

_F32 = Float32Type()
_LAYOUTS = ("linalg.conv_2d_nhwc_hwcf", "linalg.conv_2d_nhwc_fhwc", "linalg.conv_2d_nchw_fchw")
# Filters smaller than this many elements are packed quickly enough on each call. Small is not
# enough to leave a filter unpacked: only a packed one lets the kernel run a large image in bands
# of rows, each finished (bias, ReLU) while in L2; SqueezeNet's 3 x 3 x 3 x 64 stem over
# 111 x 111 pixels, unpacked, wrote 3 MB of output and read it back for its ReLU from L3
# (458 -> 368 us packed, one thread).
MIN_ELEMENTS = 256


class PackConvFilters(Pass):
    flag = "pack-conv-filters"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        cpu = llvm_cpu_target(state)
        if cpu is None:
            return
        from weir.compiler.targets.llvm_cpu.conv_blocking import panel_width
        constants = constants_of(module)
        for op in list(module.walk()):
            layout = _filter_layout(op)
            if layout is None:
                continue
            weights = op.operands[1]
            sizes = dict(zip(layout, weights.type.get_shape()))  # type: ignore[attr-defined]
            if np.prod(list(sizes.values())) < MIN_ELEMENTS:
                continue
            if layout == "FCHW" and sizes["H"] == sizes["W"] == 1 and \
                    window_pair(op, "strides") == (1, 1):
                continue
            values = constant_value(weights, constants)
            if values is None or values.dtype != np.float32:
                continue
            # The kernel's panel width for this convolution (wide tiles take wider panels).
            nr = panel_width(cpu, _geometry(op, sizes), _pointwise(op, sizes))
            replace_with_packed(op, 1, conv_panels(values, layout, nr), f"_panels{nr}",
                                conv_panels_permutation(layout), conv_collapse_groups(layout),
                                constants)


def _geometry(op: Operation, sizes: dict[str, int]) -> ConvGeometry:
    """The convolution's sizes as the llvm-cpu kernel's blocking reads them."""
    from weir.compiler.targets.llvm_cpu.conv_blocking import ConvGeometry
    output = WINDOW_LAYOUTS[op.name].output
    out = dict(zip(output, op.results[0].type.get_shape()))  # type: ignore[attr-defined]
    (sh, sw), (dh, dw) = window_pair(op, "strides"), window_pair(op, "dilations")
    return ConvGeometry(sizes["C"], sizes["F"], sizes["H"], sizes["W"], out["H"], out["W"],
                        sh, sw, dh, dw)


def _pointwise(op: Operation, sizes: dict[str, int]) -> bool:
    """Whether the llvm-cpu target runs the convolution as a GEMM over its pixels (its
    pointwise_conv.py: channels last, 1 x 1, stride 1), on the GEMM's panels."""
    return op.name == "linalg.conv_2d_nhwc_hwcf" and sizes["H"] == sizes["W"] == 1 and \
        window_pair(op, "strides") == (1, 1)


def _filter_layout(op: Operation) -> str | None:
    """The filter layout of a convolution this pass may pack (sizes and constants aside)."""
    if op.name not in _LAYOUTS or len(op.operands) != 3 or len(op.results) != 1:
        return None
    types = [v.type for v in (*op.operands, op.results[0])]
    if not all(isinstance(t, TensorType) and t.element_type == _F32 and t.has_static_shape()
               for t in types):
        return None
    return WINDOW_LAYOUTS[op.name].window

"""Runs a channels-last 1 x 1 convolution with unit strides as the matmul it is: the image's
N x H x W pixels as the rows of an (NHW) x C matrix, times the C x F filter, into (NHW) x F.

Why: such a convolution (most of MobileNet's work, the bottleneck ends of a ResNet) has no
window: each output pixel is a row of the input times the filter. As a convolution it runs on
the direct kernel, which is built for windows and pays per row of pixels for what a GEMM pays
once; as a matmul it runs on the GEMM microkernel, with the filter a constant that
pack-matmul-weights then stores in the microkernel's panels. The reshapes are free (the
pixels are contiguous in NHWC). Measured on MobileNetV2's 16 -> 96 expansion at 112 x 112,
with its bias and ReLU: 2.1 ms as a convolution, 1.3 ms as a matmul, one thread.

Rewritten: `conv_2d_nhwc_hwcf` with a 1 x 1 filter and unit strides, f32 with static shapes,
when llvm-cpu is one of the targets. A fill or a per-channel broadcast init is made again at
the matmul's shape, anything else reshaped."""

from __future__ import annotations

from collections.abc import Sequence

from weir.compiler.global_opt.constant_values import constant_value
from weir.compiler.global_opt.layout_transposes import remade_init, replace_op
from weir.compiler.global_opt.packed_constants import llvm_cpu_target
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.tensor_shapes import reassociation
from weir.dialects import linalg_ext
from weir.ir import constants_of, ConstantStore
from weir.ir.upstream import (
    arith,
    Builder,
    DenseResourceAttr,
    Float32Type,
    InsertPoint,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)
from weir.ir.window_ops import window_pair

_F32 = Float32Type()
# N, H and W as the rows; the last dimension (C, or F) as the columns.
_PIXEL_ROWS = [[0, 1, 2], [3]]


class Convert1x1ConvToMatmul(Pass):
    flag = "convert-1x1-conv-to-matmul"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        if llvm_cpu_target(state) is None:
            return
        constants = constants_of(module)
        for op in list(module.walk()):
            if op.name == "linalg.conv_2d_nhwc_hwcf" and _pointwise(op):
                _rewrite(op, constants)


def _pointwise(op: Operation) -> bool:
    if len(op.operands) != 3 or len(op.results) != 1:
        return False
    types = [v.type for v in (*op.operands, op.results[0])]
    if not all(isinstance(t, TensorType) and t.element_type == _F32 and t.has_static_shape()
               for t in types):
        return False
    kh, kw, _, _ = types[1].get_shape()  # type: ignore[union-attr]
    return kh == kw == 1 and window_pair(op, "strides") == (1, 1)


def _rewrite(op: Operation, constants: ConstantStore) -> None:
    x, w, init = op.operands
    out_t = op.results[0].type
    assert isinstance(out_t, TensorType)
    n, h, wd, feats = out_t.get_shape()
    rows = n * h * wd
    b = Builder(InsertPoint.before(op))
    matrix = _collapsed(b, x, [rows, x.type.get_shape()[3]], constants)  # type: ignore[attr-defined]
    weights = _collapsed(b, w, list(w.type.get_shape()[2:]), constants)  # type: ignore[attr-defined]
    acc_t = TensorType(_F32, [rows, feats])
    product = b.insert(linalg_ext.MatmulOp([matrix, weights], [_matmul_init(b, init, acc_t,
                                                                             constants)]))
    result = b.insert(tensor.ExpandShapeOp(product.results[0], [], reassociation(_PIXEL_ROWS),
                                           [n, h, wd, feats], out_t)).results[0]
    replace_op(op, result)


def _collapsed(b: Builder, value: SSAValue, shape: Sequence[int],
               constants: ConstantStore) -> SSAValue:
    """`value` (4-D) with its first three dimensions merged into one (a constant reshaped
    here)."""
    t = TensorType(_F32, list(shape))
    array = constant_value(value, constants)
    if array is not None:
        name = constants.add(array.reshape(shape).tobytes(), "weights_matrix")
        return b.insert(arith.ConstantOp(DenseResourceAttr.from_params(name, t), t)).result
    return b.insert(tensor.CollapseShapeOp.build(
        operands=[value], result_types=[t],
        properties={"reassociation": reassociation(_PIXEL_ROWS)})).results[0]


def _matmul_init(b: Builder, init: SSAValue, acc_t: TensorType,
                 constants: ConstantStore) -> SSAValue:
    """The convolution's init at the matmul's shape: a fill or a bias made again, anything
    else reshaped."""
    remade = remade_init(b, init, acc_t, (0, 1, 2), (0,))
    return remade if remade is not None else _collapsed(b, init, acc_t.get_shape(), constants)

"""Runs the NCHW convolutions and poolings of a network channels-last: each becomes its NHWC
form between a transpose of its input to NHWC and a transpose of its result back, with the
filter transposed here, at compile time, when it is a constant.

Why: PyTorch and ONNX state images NCHW, and the llvm-cpu kernels read NHWC: a direct
convolution then converts every input row it reads to NHWC scratch and writes every output row
back transposed, and a 1 x 1 convolution multiplies with the image as the GEMM's packed
operand, packed again on every call. Channels-last, the image is read in place, the output is
written in place, and a 1 x 1 convolution is a GEMM whose packed operand is the constant filter.
The transposes this leaves between two convolutions undo each other once propagate-transposes
has carried them through the ReLUs, residual adds, pads and concats in between, so a network
converts at its input and where it leaves the convolutions, not around every one.

Rewritten: `conv_2d_nchw_fchw` (to `conv_2d_nhwc_hwcf`), `depthwise_conv_2d_nchw_chw` (to
`depthwise_conv_2d_nhwc_hwc`) and `pooling_nchw_max`/`_sum` (to their NHWC forms), f32 with
static shapes, when llvm-cpu is one of the targets. The init keeps its form: a fill or a
per-channel broadcast becomes the same in NHWC, anything else is transposed."""

from __future__ import annotations

from weir.compiler.global_opt.layout_transposes import (
    remade_init,
    replace_op,
    TO_NCHW,
    TO_NHWC,
    transposed,
)
from weir.compiler.global_opt.packed_constants import llvm_cpu_target
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.linalg_windows import window_op
from weir.ir import constants_of, ConstantStore
from weir.ir.upstream import (
    Builder,
    Float32Type,
    InsertPoint,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
    TensorType,
)

_F32 = Float32Type()

# NCHW op -> (its NHWC form, how its second operand is transposed: None for a pooling window)
_CHANNELS_LAST: dict[str, tuple[str, tuple[int, ...] | None]] = {
    "linalg.conv_2d_nchw_fchw": ("linalg.conv_2d_nhwc_hwcf", (2, 3, 1, 0)),
    "linalg.depthwise_conv_2d_nchw_chw": ("linalg.depthwise_conv_2d_nhwc_hwc", (1, 2, 0)),
    "linalg.pooling_nchw_max": ("linalg.pooling_nhwc_max", None),
    "linalg.pooling_nchw_sum": ("linalg.pooling_nhwc_sum", None),
}


class ConvertConvToChannelsLast(Pass):
    flag = "convert-conv-to-channels-last"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        if llvm_cpu_target(state) is None:
            return
        constants = constants_of(module)
        for op in list(module.walk()):
            if op.name in _CHANNELS_LAST and _static_f32(op):
                _rewrite(op, constants)


def _static_f32(op: Operation) -> bool:
    if len(op.operands) != 3 or len(op.results) != 1:
        return False
    values = (op.operands[0], op.operands[2], op.results[0])
    return all(isinstance(v.type, TensorType) and v.type.element_type == _F32 and
               v.type.has_static_shape() and len(v.type.get_shape()) == 4 for v in values)


def _rewrite(op: Operation, constants: ConstantStore) -> None:
    name, filter_perm = _CHANNELS_LAST[op.name]
    x, window, init = op.operands
    b = Builder(InsertPoint.before(op))
    x = transposed(b, x, TO_NHWC, constants)
    if filter_perm is not None:
        window = transposed(b, window, filter_perm, constants)
    init = _channels_last_init(b, init, constants)
    new = b.insert(window_op(name)([x, window], [init], [init.type],
                                   strides=op.strides, dilations=op.dilations))  # type: ignore[attr-defined]
    result = transposed(b, new.results[0], TO_NCHW, constants)
    replace_op(op, result)


def _channels_last_init(b: Builder, init: SSAValue, constants: ConstantStore) -> SSAValue:
    """The NHWC form of an NCHW init: a fill or a bias made again, anything else transposed."""
    t = init.type
    assert isinstance(t, TensorType)
    nhwc = TensorType(t.element_type, [t.get_shape()[p] for p in TO_NHWC])
    remade = remade_init(b, init, nhwc, (0, 2, 3), (0, 1, 2))
    return remade if remade is not None else transposed(b, init, TO_NHWC, constants)

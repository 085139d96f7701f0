"""Corrections to xDSL's linalg convolution and pooling ops (DESIGN.md §3), and the one table
of their operand layouts that the compiler reads too.

- MLIR gives `strides` and `dilations` a default of 1 when the op leaves them out; xDSL requires
  both, so `linalg.conv_2d_nhwc_hwcf ins(...) outs(...)` would fail to verify.
  `add_default_window_attrs` fills them in as the op is parsed.
- xDSL checks their shapes only as far as the indexing maps reach, reports a mismatch as
  "operand #1 dimension #2", accepts an output smaller than its input gives and crashes on a
  stride list of the wrong length. `check_window_op` runs before xDSL's verifier and names the
  operand, the dimension and the sizes that disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    IntegerType,
    ShapedType,
    TensorType,
)
from xdsl.dialects.linalg.abstract_ops import ConvOperation, PoolingOperation
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException


@dataclass(frozen=True)
class WindowLayout:
    """One letter per dimension of each operand: N batch, C input channel, F output channel
    (filter count), H and W the spatial dimensions (for the filter or window: its size). A
    filter without F is depthwise: each channel has its own filter and the output keeps C."""

    input: str
    window: str
    output: str
    window_name: str  # what the op calls its second input, for messages
    pooling: str | None = None  # how a pooling op combines the window: "max" | "sum"


WINDOW_LAYOUTS: dict[str, WindowLayout] = {
    # Keyed by op name: weir/dialects/linalg_ext.py defines the ops xDSL lacks.
    "linalg.conv_2d_nhwc_hwcf": WindowLayout("NHWC", "HWCF", "NHWF", "filter"),
    "linalg.conv_2d_nhwc_fhwc": WindowLayout("NHWC", "FHWC", "NHWF", "filter"),
    "linalg.conv_2d_nchw_fchw": WindowLayout("NCHW", "FCHW", "NFHW", "filter"),
    "linalg.depthwise_conv_2d_nhwc_hwc": WindowLayout("NHWC", "HWC", "NHWC", "filter"),
    "linalg.depthwise_conv_2d_nchw_chw": WindowLayout("NCHW", "CHW", "NCHW", "filter"),
    "linalg.pooling_nchw_max": WindowLayout("NCHW", "HW", "NCHW", "window", "max"),
    "linalg.pooling_nchw_sum": WindowLayout("NCHW", "HW", "NCHW", "window", "sum"),
    "linalg.pooling_nhwc_max": WindowLayout("NHWC", "HW", "NHWC", "window", "max"),
    "linalg.pooling_nhwc_sum": WindowLayout("NHWC", "HW", "NHWC", "window", "sum"),
}

_SHARED_SIZES = (("N", "batch size"), ("C", "channel count"), ("F", "filter count"))


def add_default_window_attrs(op: Operation) -> None:
    """Give a parsed conv/pooling op the unit `strides`/`dilations` MLIR implies when absent."""
    if not isinstance(op, ConvOperation | PoolingOperation):
        return
    for name in ("strides", "dilations"):
        if name not in op.properties:
            op.properties[name] = DenseIntOrFPElementsAttr.from_list(
                TensorType(IntegerType(64), [2]), [1, 1])


def window_pair(op: Operation, name: str) -> tuple[int, int]:
    """The (H, W) values of `strides` or `dilations`, each at least 1."""
    attr = op.properties.get(name)
    values = attr.get_values() if isinstance(attr, DenseIntOrFPElementsAttr) else ()
    if len(values) != 2 or not all(isinstance(v, int) and v >= 1 for v in values):
        raise VerifyException(f"{name} must be two integers >= 1 (H, W), got {attr}")
    return values[0], values[1]  # type: ignore[return-value]


def check_window_op(op: Operation) -> None:
    """Raise VerifyException when the operands of a supported conv/pooling op disagree."""
    layout = WINDOW_LAYOUTS.get(op.name)
    if layout is None:
        return
    if len(op.operands) != 3:
        raise VerifyException(f"expects 2 inputs (input, {layout.window_name}) and 1 output, "
                              f"got {len(op.operands)} operand(s)")
    strides, dilations = window_pair(op, "strides"), window_pair(op, "dilations")
    dims: dict[str, dict[str, int]] = {}
    for role, value, letters in zip(("input", layout.window_name, "output"), op.operands,
                                    (layout.input, layout.window, layout.output)):
        t = value.type
        if not isinstance(t, ShapedType) or len(t.get_shape()) != len(letters):
            raise VerifyException(f"{role} must be a rank-{len(letters)} {letters} tensor, got {t}")
        dims[role] = dict(zip(letters, t.get_shape()))
    for letter, meaning in _SHARED_SIZES:
        sizes = [(role, d[letter]) for role, d in dims.items()
                 if letter in d and d[letter] != DYNAMIC_INDEX]
        if len({s for _, s in sizes}) > 1:
            raise VerifyException(f"{meaning} differs: " +
                                  ", ".join(f"{role} {s}" for role, s in sizes))
    for axis, letter in enumerate("HW"):
        size, window, out = (dims[r][letter] for r in ("input", layout.window_name, "output"))
        if DYNAMIC_INDEX in (size, window, out):
            continue
        span = dilations[axis] * (window - 1) + 1
        if size < span:
            raise VerifyException(f"input {letter} size {size} is smaller than the {letter} "
                                  f"extent {span} of the dilated {layout.window_name}")
        expected = (size - span) // strides[axis] + 1
        if out != expected:
            raise VerifyException(
                f"output {letter} size {out} should be {expected}: (input {size} - dilation "
                f"{dilations[axis]} * ({layout.window_name} {window} - 1) - 1) / stride "
                f"{strides[axis]} + 1")

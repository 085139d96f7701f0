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
    (filter count), G group, M channel multiplier, and the spatial dimensions D, H, W (for the
    filter or window: its size). A filter without F is depthwise: each channel has its own
    filter and the output keeps C (times M when the filter has M)."""

    input: str
    window: str
    output: str
    window_name: str  # what the op calls its second input, for messages
    pooling: str | None = None  # how a pooling op combines the window: "max" | "sum" | "min"

    @property
    def spatial(self) -> str:
        """The op's spatial dimensions in order: what `strides` and `dilations` list."""
        return "".join(c for c in "DHW" if c in self.input)


def _conv(input: str, window: str, output: str) -> WindowLayout:
    return WindowLayout(input, window, output, "filter")


def _pool(layout: str, kind: str) -> WindowLayout:
    return WindowLayout(layout, "".join(c for c in layout if c in "DHW"), layout, "window", kind)


WINDOW_LAYOUTS: dict[str, WindowLayout] = {
    # Keyed by op name: weir/dialects/linalg_ext.py and linalg_windows.py define the ops xDSL
    # lacks. Upstream MLIR's named convolutions and poolings with strides and dilations, but the
    # quantized (`_q`) and unsigned ones.
    "linalg.conv_1d_nwc_wcf": _conv("NWC", "WCF", "NWF"),
    "linalg.conv_1d_ncw_fcw": _conv("NCW", "FCW", "NFW"),
    "linalg.conv_2d_nhwc_hwcf": _conv("NHWC", "HWCF", "NHWF"),
    "linalg.conv_2d_nhwc_fhwc": _conv("NHWC", "FHWC", "NHWF"),
    "linalg.conv_2d_nchw_fchw": _conv("NCHW", "FCHW", "NFHW"),
    "linalg.conv_2d_ngchw_fgchw": _conv("NGCHW", "FGCHW", "NGFHW"),
    "linalg.conv_2d_ngchw_gfchw": _conv("NGCHW", "GFCHW", "NGFHW"),
    "linalg.conv_2d_nhwgc_gfhwc": _conv("NHWGC", "GFHWC", "NHWGF"),
    "linalg.conv_3d_ndhwc_dhwcf": _conv("NDHWC", "DHWCF", "NDHWF"),
    "linalg.conv_3d_ncdhw_fcdhw": _conv("NCDHW", "FCDHW", "NFDHW"),
    "linalg.depthwise_conv_1d_nwc_wc": _conv("NWC", "WC", "NWC"),
    "linalg.depthwise_conv_1d_ncw_cw": _conv("NCW", "CW", "NCW"),
    "linalg.depthwise_conv_1d_nwc_wcm": _conv("NWC", "WCM", "NWCM"),
    "linalg.depthwise_conv_2d_nhwc_hwc": _conv("NHWC", "HWC", "NHWC"),
    "linalg.depthwise_conv_2d_nchw_chw": _conv("NCHW", "CHW", "NCHW"),
    "linalg.depthwise_conv_2d_nhwc_hwcm": _conv("NHWC", "HWCM", "NHWCM"),
    "linalg.depthwise_conv_3d_ndhwc_dhwc": _conv("NDHWC", "DHWC", "NDHWC"),
    "linalg.depthwise_conv_3d_ncdhw_cdhw": _conv("NCDHW", "CDHW", "NCDHW"),
    "linalg.depthwise_conv_3d_ndhwc_dhwcm": _conv("NDHWC", "DHWCM", "NDHWCM"),
    **{f"linalg.pooling_{layout.lower()}_{kind}": _pool(layout, kind)
       for layout, kinds in (("NWC", "max sum min"), ("NCW", "max sum"),
                             ("NHWC", "max sum min"), ("NCHW", "max sum"),
                             ("NDHWC", "max sum min"))
       for kind in kinds.split()},
}

KERNEL_WINDOWS: frozenset[str] = frozenset({
    "linalg.conv_2d_nhwc_hwcf", "linalg.conv_2d_nhwc_fhwc", "linalg.conv_2d_nchw_fchw",
    "linalg.depthwise_conv_2d_nhwc_hwc", "linalg.depthwise_conv_2d_nchw_chw",
    "linalg.pooling_nchw_max", "linalg.pooling_nchw_sum", "linalg.pooling_nhwc_max",
    "linalg.pooling_nhwc_sum",
})
"""The window ops the targets run on their Conv2D/Pool2D kernels; the input phase rewrites
the others onto these (decompose-window-ops)."""

_SHARED_SIZES = (("N", "batch size"), ("C", "channel count"), ("F", "filter count"),
                 ("G", "group count"), ("M", "channel multiplier"))


def spatial_rank(op: Operation) -> int:
    """How many values `strides` and `dilations` hold: 2 for an op weir does not know."""
    layout = WINDOW_LAYOUTS.get(op.name)
    return 2 if layout is None else len(layout.spatial)


def add_default_window_attrs(op: Operation) -> None:
    """Give a parsed conv/pooling op the unit `strides`/`dilations` MLIR implies when absent."""
    if not isinstance(op, ConvOperation | PoolingOperation):
        return
    rank = spatial_rank(op)
    for name in ("strides", "dilations"):
        if name not in op.properties:
            op.properties[name] = DenseIntOrFPElementsAttr.from_list(
                TensorType(IntegerType(64), [rank]), [1] * rank)


def window_values(op: Operation, name: str) -> tuple[int, ...]:
    """The values of `strides` or `dilations`, one per spatial dimension, each at least 1."""
    attr = op.properties.get(name)
    values = attr.get_values() if isinstance(attr, DenseIntOrFPElementsAttr) else ()
    rank = spatial_rank(op)
    if len(values) != rank or not all(isinstance(v, int) and v >= 1 for v in values):
        letters = WINDOW_LAYOUTS[op.name].spatial if op.name in WINDOW_LAYOUTS else "HW"
        count = {1: "one integer", 2: "two integers", 3: "three integers"}[rank]
        raise VerifyException(f"{name} must be {count} >= 1 ({', '.join(letters)}), got {attr}")
    return tuple(values)  # type: ignore[arg-type]


def window_pair(op: Operation, name: str) -> tuple[int, int]:
    """The (H, W) values of `strides` or `dilations` of a 2-D op, each at least 1."""
    values = window_values(op, name)
    if len(values) != 2:
        raise VerifyException(f"{name} must be two integers >= 1 (H, W), got {values}")
    return values[0], values[1]


def check_window_op(op: Operation) -> None:
    """Raise VerifyException when the operands of a supported conv/pooling op disagree."""
    layout = WINDOW_LAYOUTS.get(op.name)
    if layout is None:
        return
    if len(op.operands) != 3:
        raise VerifyException(f"expects 2 inputs (input, {layout.window_name}) and 1 output, "
                              f"got {len(op.operands)} operand(s)")
    strides, dilations = window_values(op, "strides"), window_values(op, "dilations")
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
    for axis, letter in enumerate(layout.spatial):
        size, window, out = (dims[r][letter] for r in ("input", layout.window_name, "output"))
        if DYNAMIC_INDEX in (size, window, out):
            continue
        span = dilations[axis] * (window - 1) + 1
        if size < span:
            raise VerifyException(f"input {letter} size {size} is smaller than the {letter} "
                                  f"extent {span} of the dilated {layout.window_name}")
        # As MLIR: the input may hold more than the windows read (exporters pad the high side
        # for ceil-mode pooling and leave the last rows unread), never less.
        expected = (size - span) // strides[axis] + 1
        if out > expected:
            raise VerifyException(
                f"output {letter} size {out} should be at most {expected}: (input {size} - dilation "
                f"{dilations[axis]} * ({layout.window_name} {window} - 1) - 1) / stride "
                f"{strides[axis]} + 1")

"""linalg's named convolutions and poolings that xDSL 0.74 lacks, one class per op, each made
from its operand layout in `weir.ir.window_ops` (the one table the verifier and the compiler
read too): the layout gives the loops, the indexing maps and the iterator kinds at once, as an
einsum spec does for the contractions of `linalg_ext`.

They reuse xDSL's conv/pooling bases, so the parser gives them MLIR's syntax and default unit
strides/dilations, and `weir.ir.window_ops` checks their shapes like the upstream ones. Those in
`KERNEL_WINDOWS` run on the targets' Conv2D/Pool2D kernels; the input phase rewrites the others
onto them (decompose-window-ops).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr
from xdsl.dialects.linalg import ops as upstream
from xdsl.dialects.linalg.abstract_ops import ConvOperation, PoolingOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.ir import Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.irdl import irdl_op_definition

from weir.dialects.linalg_bodies import combine, multiply_add
from weir.ir.window_ops import KERNEL_WINDOWS, WINDOW_LAYOUTS, WindowLayout


def _loops(layout: WindowLayout) -> tuple[list[str], list[str]]:
    """Parallel loops (the output's dimensions, spatial ones as output positions) and reduction
    loops (the window's spatial positions, then what the output lacks: C of a convolution).
    A spatial letter names its output position; the lower-case letter its window position."""
    reduced = [c.lower() if c in layout.spatial else c for c in layout.window
               if c in layout.spatial or c not in layout.output]
    return list(layout.output), reduced


class _WindowMaps:
    """Indexing maps and iterators from the op's layout: input[X] = out[X] * stride +
    window[X] * dilation for each spatial X; any other letter is the same loop everywhere."""

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        layout = WINDOW_LAYOUTS[self.name]  # type: ignore[attr-defined]
        parallel, reduced = _loops(layout)
        loop = {c: AffineDimExpr(i) for i, c in enumerate(parallel + reduced)}
        steps = dict(zip(layout.spatial, zip(self.strides.get_values(),  # type: ignore[attr-defined]
                                             self.dilations.get_values())))  # type: ignore[attr-defined]

        def at(c: str) -> AffineExpr:
            if c not in steps:
                return loop[c]
            stride, dilation = steps[c]
            return loop[c] * stride + loop[c.lower()] * dilation

        count = len(loop)
        window = [loop[c.lower()] if c in steps else loop[c] for c in layout.window]
        return (AffineMap(count, 0, tuple(at(c) for c in layout.input)),
                AffineMap(count, 0, tuple(window)),
                AffineMap(count, 0, tuple(loop[c] for c in layout.output)))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        parallel, reduced = _loops(WINDOW_LAYOUTS[self.name])  # type: ignore[attr-defined]
        return ArrayAttr([IteratorTypeAttr.parallel()] * len(parallel) +
                         [IteratorTypeAttr.reduction()] * len(reduced))


def _class_name(op_name: str) -> str:
    return "".join(part.capitalize() for part in op_name.removeprefix("linalg.").split("_")) + "Op"


def _window_op(op_name: str) -> type[Operation]:
    layout = WINDOW_LAYOUTS[op_name]
    kind = layout.pooling
    if kind is None:
        def hidden(cls: type, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
            return multiply_add(inputs, outputs)
        base: type[Operation] = ConvOperation
        doc = f"out[{layout.output}] += input[{layout.input}] * filter[{layout.window}]"
    else:
        def hidden(cls: type, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
            return combine(inputs, outputs, kind)
        base = PoolingOperation
        doc = f"out[{layout.output}] = {kind}(out, input[{layout.input}] over the window)"
    cls = type(_class_name(op_name), (_WindowMaps, base), {
        "name": op_name, "__doc__": doc + " (strided, dilated)", "__module__": __name__,
        "get_hidden_region": classmethod(hidden)})
    return irdl_op_definition(cls)


_UPSTREAM: dict[str, type[Operation]] = {
    op.name: op for op in vars(upstream).values()
    if isinstance(op, type) and issubclass(op, ConvOperation | PoolingOperation) and
    hasattr(op, "name") and isinstance(op.name, str)}

WINDOW_OPS: tuple[type[Operation], ...] = tuple(
    _window_op(name) for name in WINDOW_LAYOUTS if name not in _UPSTREAM)
"""The window ops weir adds to xDSL's `linalg`."""

_BY_NAME: dict[str, type[Operation]] = {**_UPSTREAM, **{op.name: op for op in WINDOW_OPS}}

KERNEL_WINDOW_OPS: tuple[type[Operation], ...] = tuple(_BY_NAME[n] for n in sorted(KERNEL_WINDOWS))
"""The window ops a target maps onto its Conv2D/Pool2D kernels: each stays named, a dispatch
root."""


def window_op(op_name: str) -> type[Operation]:
    """The class of a window op named in `WINDOW_LAYOUTS` (xDSL's own where it has one)."""
    return _BY_NAME[op_name]

"""What decompose-window-ops rewrites, read off the IR: a convolution or pooling as its operands,
the letters naming their dimensions (`weir.ir.window_ops`) and its strides and dilations, from a
named op or from a linalg.generic that is a pooling in all but name."""

from __future__ import annotations

from dataclasses import dataclass

from weir.ir.upstream import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    linalg,
    Operation,
    SSAValue,
)
from weir.ir.window_ops import KERNEL_WINDOWS, WINDOW_LAYOUTS


@dataclass(frozen=True)
class Window:
    """A window op in the making: its operands, each with the letters naming its dimensions
    (`weir.ir.window_ops`), and strides/dilations by spatial letter."""

    x: SSAValue
    x_letters: str
    w: SSAValue
    w_letters: str
    init: SSAValue
    out_letters: str
    strides: dict[str, int]
    dilations: dict[str, int]
    pooling: str | None


def named_window(op: Operation) -> Window | None:
    layout = WINDOW_LAYOUTS.get(op.name)
    if layout is None or op.name in KERNEL_WINDOWS:
        return None
    strides = op.properties["strides"].get_values()  # type: ignore[attr-defined]
    dilations = op.properties["dilations"].get_values()  # type: ignore[attr-defined]
    x, w, init = op.operands
    return Window(x, layout.input, w, layout.window, init, layout.output,
                  dict(zip(layout.spatial, strides)), dict(zip(layout.spatial, dilations)),
                  layout.pooling)


_COMBINERS = {"arith.maximumf": "max", "arith.maxsi": "max", "arith.minimumf": "min",
              "arith.minsi": "min", "arith.addf": "sum", "arith.addi": "sum"}


def pooling_generic(op: linalg.GenericOp) -> Window | None:
    """The pooling a generic is, if it is one: inputs (x, window), one output indexed by the
    parallel loops in order; x indexed per dimension by a parallel loop (N, C) or by
    `out * stride + window * dilation` (D, H, W, in order); the window by those window loops
    only and never read; a body combining x into the output with one max, min or add."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or len(op.results) != 1:
        return None
    maps = [m.data for m in op.indexing_maps]
    parallel = [i for i, it in enumerate(op.iterator_types) if it.data.value == "parallel"]
    if _linear_dims(maps[2]) != [{d: 1} for d in parallel] or parallel != list(
            range(len(parallel))):
        return None
    x_letters, window_loops = "", []
    strides: list[int] = []
    dilations: list[int] = []
    for k, form in enumerate(_linear_dims(maps[0]) or [None]):
        if form == {k: 1}:
            x_letters += "N" if "N" not in x_letters else "C"
            continue
        if form is None or len(form) != 2 or k not in form:
            return None
        (r, dilation), = ((d, c) for d, c in form.items() if d != k)
        if r in parallel:
            return None
        x_letters += "_"
        window_loops.append(r)
        strides.append(form[k])
        dilations.append(dilation)
    spatial = "DHW"[3 - len(window_loops):] if 0 < len(window_loops) <= 3 else ""
    if not spatial or x_letters.count("_") != len(spatial) or sorted(x_letters) != sorted(
            "CN" + "_" * len(spatial)) or \
            _linear_dims(maps[1]) != [{r: 1} for r in window_loops]:
        return None
    kind = _combined(op)
    if kind is None:
        return None
    letters = iter(spatial)
    x_letters = "".join(next(letters) if c == "_" else c for c in x_letters)
    return Window(op.inputs[0], x_letters, op.inputs[1], spatial, op.outputs[0], x_letters,
                  dict(zip(spatial, strides)), dict(zip(spatial, dilations)), kind)


def _linear_dims(amap: AffineMap) -> list[dict[int, int]] | None:
    """Each result of `amap` as {loop: coefficient}; None if one is not a sum of loops times
    positive constants."""
    forms = []
    for e in amap.results:
        form = _linear(e)
        if form is None or any(c < 1 for c in form.values()):
            return None
        forms.append(form)
    return forms


def _linear(e: AffineExpr) -> dict[int, int] | None:
    if isinstance(e, AffineDimExpr):
        return {e.position: 1}
    if isinstance(e, AffineBinaryOpExpr) and e.kind is AffineBinaryOpKind.Add:
        lhs, rhs = _linear(e.lhs), _linear(e.rhs)
        if lhs is None or rhs is None or lhs.keys() & rhs.keys():
            return None
        return lhs | rhs
    if isinstance(e, AffineBinaryOpExpr) and e.kind is AffineBinaryOpKind.Mul:
        dims, scale = (e.lhs, e.rhs) if isinstance(e.rhs, AffineConstantExpr) else (e.rhs, e.lhs)
        inner = _linear(dims)
        if inner is None or not isinstance(scale, AffineConstantExpr):
            return None
        return {d: c * scale.value for d, c in inner.items()}
    return None


def _combined(op: linalg.GenericOp) -> str | None:
    """max, min or sum when the body is `yield combine(x, out)` (either order), window unread."""
    x, window, out = op.body.block.args
    ops = list(op.body.block.ops)
    if len(ops) != 2 or window.uses or list(ops[1].operands) != [ops[0].results[0]] or \
            len(ops[0].operands) != 2 or {*ops[0].operands} != {x, out} or x.type != out.type:
        return None
    return _COMBINERS.get(ops[0].name)

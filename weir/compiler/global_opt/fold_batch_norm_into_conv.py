"""Folds a per-output-channel affine tail of a convolution with a constant filter (an
inference-mode batch norm) into the filter and the bias, at compile time.

Why: PyTorch and ONNX CNNs in eval mode give every convolution a batch norm, which torch-mlir
states as `(conv - mean) * (1 / sqrt(var + eps)) * gamma + beta`: four broadcast generics after
the convolution and three more computing the scale from the running variance. Left alone, every
call evaluates them again, in the convolution's epilogue, for every output element. With
s = gamma / sqrt(var + eps), the same numbers are conv(x, W * s) + (b - mean) * s + beta, so
the filter is scaled once here and the rest becomes the bias the convolution starts from (a
broadcast init, which dispatch formation fuses as it does a PyTorch conv's own bias).

Matched exactly: a 2-D kernel convolution (weir/ir/window_ops.py) whose filter is a constant
(or a reshape of one) and whose init is a constant splat fill or the broadcast of a constant
vector over the output channel, followed by a chain of elementwise generics, each the only user
of the previous value, each of `x + c`, `c + x`, `x - c`, `c - x`, `x * c`, `c * x` or `x / c`
with c constant per output channel (a vector broadcast along the channel dimension, or a scalar).
Everything f32. The chain stops at the first other op (the ReLU); a convolution with nothing to
fold, another element type or a value computed at run time is left as it was."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from weir.compiler.global_opt.constant_values import constant_value, fill_value, stored_constant
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import linalg_ext
from weir.ir import constants_of, ConstantStore
from weir.ir.upstream import (
    AffineConstantExpr,
    AffineDimExpr,
    AffineMap,
    arith,
    Builder,
    DenseArrayBase,
    DenseResourceAttr,
    EmptyOp,
    Float32Type,
    FloatAttr,
    InsertPoint,
    IntegerType,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)
from weir.ir.window_ops import KERNEL_WINDOWS, WINDOW_LAYOUTS

_F32 = Float32Type()
_I64 = IntegerType(64)
_STEP_OPS = (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp)


@dataclass(frozen=True)
class _Conv:
    op: Operation
    out_dim: int  # the output channel's dimension in the result
    filter_dim: int  # and in the filter


@dataclass(frozen=True)
class _Step:
    """One link of the chain: `x OP c` (or `c OP x` when not `x_first`), c per channel."""
    op: linalg.GenericOp
    kind: type[Operation]
    c: np.ndarray  # float64, one value per output channel
    x_first: bool


class FoldBatchNormIntoConv(Pass):
    flag = "fold-batch-norm-into-conv"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        constants = constants_of(module)
        for op in list(module.walk()):
            conv = _kernel_conv(op)
            if conv is not None:
                _fold(conv, constants)


def _kernel_conv(op: Operation) -> _Conv | None:
    layout = WINDOW_LAYOUTS.get(op.name)
    if op.name not in KERNEL_WINDOWS or layout is None or layout.pooling is not None or \
            len(op.operands) != 3 or len(op.results) != 1:
        return None
    channel = "F" if "F" in layout.window else "C"
    if "M" in layout.window:
        return None
    if not all(_static_f32(v) for v in (*op.operands, op.results[0])):
        return None
    return _Conv(op, layout.output.index(channel), layout.window.index(channel))


def _static_f32(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and t.has_static_shape() and t.element_type == _F32


def _fold(conv: _Conv, constants: ConstantStore) -> None:
    result = conv.op.results[0]
    out_t = result.type
    assert isinstance(out_t, TensorType)
    channels = out_t.get_shape()[conv.out_dim]
    steps: list[_Step] = []
    value: SSAValue = result
    while (step := _step(value, conv.out_dim, channels, constants)) is not None:
        steps.append(step)
        value = step.op.res[0]
    if not steps:
        return
    _, weights, init = conv.op.operands
    bias = _bias(init, conv.out_dim, channels, constants)
    filter_ = constant_value(weights, constants)
    if bias is None or filter_ is None:
        return
    scale, shift = _affine(steps, channels)
    if not (np.all(np.isfinite(scale)) and np.all(np.isfinite(shift))):
        return  # a division by zero, an infinite or NaN constant: the run time's to produce
    b = Builder(InsertPoint.before(conv.op))
    new_weights = weights
    if not np.all(scale == 1.0):
        shape = [1] * filter_.ndim
        shape[conv.filter_dim] = channels
        scaled = (filter_.astype(np.float64) * scale.reshape(shape)).astype(np.float32)
        new_weights = stored_constant(b, constants, scaled, weights.type, _hint(weights, "filter"))
    bias_t = TensorType(_F32, (channels,))
    new_bias = stored_constant(b, constants, (scale * bias + shift).astype(np.float32), bias_t,
                         _hint(weights, "bias"))
    empty = b.insert(EmptyOp([], out_t)).tensor
    dims = [d for d in range(out_t.get_num_dims()) if d != conv.out_dim]
    new_init = b.insert(linalg_ext.BroadcastOp(new_bias, empty,
                                           DenseArrayBase.from_list(_I64, dims))).results[0]
    conv.op.operands = [conv.op.operands[0], new_weights, new_init]
    value.replace_all_uses_with(result)
    dead: list[Operation] = [weights.owner, init.owner]  # type: ignore[list-item]
    for s in reversed(steps):
        dead.extend(o.owner for o in s.op.operands if isinstance(o.owner, Operation))
        s.op.detach()
        s.op.erase()
    _erase_unused(dead)


def _affine(steps: list[_Step], channels: int) -> tuple[np.ndarray, np.ndarray]:
    """The chain as y = scale * x + shift, per channel, in f64."""
    scale, shift = np.ones(channels), np.zeros(channels)
    with np.errstate(all="ignore"):
        for s in steps:
            if s.kind is arith.AddfOp:
                shift = shift + s.c
            elif s.kind is arith.SubfOp:
                scale, shift = (scale, shift - s.c) if s.x_first else (-scale, s.c - shift)
            elif s.kind is arith.MulfOp:
                scale, shift = scale * s.c, shift * s.c
            else:  # x / c (c / x is no step)
                scale, shift = scale / s.c, shift / s.c
    return scale, shift


def _step(x: SSAValue, channel_dim: int, channels: int,
          constants: ConstantStore) -> _Step | None:
    """The affine generic that alone reads `x`, if the next link of the chain is one."""
    if x.uses.get_length() != 1:
        return None
    op = next(iter(x.uses)).operation
    if not isinstance(op, linalg.GenericOp) or len(op.outputs) != 1 or len(op.res) != 1 or \
            op.res[0].type != x.type or \
            any(str(it.data) != "parallel" for it in op.iterator_types) or \
            len(op.inputs) not in (1, 2) or list(op.inputs).count(x) != 1:
        return None
    maps = [m.data for m in op.indexing_maps]
    x_index = list(op.inputs).index(x)
    rank = len(x.type.get_shape())  # type: ignore[attr-defined]
    if not (_identity(maps[x_index], rank) and _identity(maps[-1], rank)):
        return None
    block = op.body.block
    body = list(block.ops)
    if len(body) != 2 or not isinstance(body[0], _STEP_OPS) or \
            not isinstance(body[1], linalg.YieldOp) or \
            list(body[1].operands) != [body[0].results[0]] or block.args[-1].uses or \
            body[0].results[0].type != _F32:
        return None
    arith_op = body[0]
    x_arg = block.args[x_index]
    lhs, rhs = arith_op.operands
    if (lhs is x_arg) == (rhs is x_arg):
        return None
    x_first = lhs is x_arg
    if not x_first and isinstance(arith_op, arith.DivfOp):
        return None
    c_value = rhs if x_first else lhs
    c = None
    if len(op.inputs) == 2 and c_value is block.args[1 - x_index]:
        c = _per_channel(op.inputs[1 - x_index], maps[1 - x_index], x.type.get_shape(),  # type: ignore[attr-defined]
                         channel_dim, channels, constants)
    elif isinstance(c_value.owner, arith.ConstantOp) and isinstance(c_value.owner.value, FloatAttr) \
            and c_value.type == _F32:
        c = np.full(channels, np.float32(c_value.owner.value.value.data), np.float64)
    if c is None:
        return None
    return _Step(op, type(arith_op), c, x_first)


def _identity(m: AffineMap, rank: int) -> bool:
    return m == AffineMap.identity(rank)


def _per_channel(value: SSAValue, m: AffineMap, shape: tuple[int, ...] | list[int],
                 channel_dim: int, channels: int, constants: ConstantStore) -> np.ndarray | None:
    """A constant read through `m` as one value per channel: each of its dimensions is the
    channel (once) or of size 1 (a constant 0, or a loop dimension of extent 1)."""
    t = value.type
    if not isinstance(t, TensorType) or t.element_type != _F32 or m.num_symbols != 0 or \
            m.num_dims != len(shape):
        return None
    sizes = t.get_shape()
    seen_channel = False
    for e, size in zip(m.results, sizes):
        if isinstance(e, AffineDimExpr) and e.position == channel_dim and size == channels \
                and not seen_channel:
            seen_channel = True
        elif size != 1 or not ((isinstance(e, AffineConstantExpr) and e.value == 0) or
                               (isinstance(e, AffineDimExpr) and shape[e.position] == 1)):
            return None
    array = constant_value(value, constants)
    if array is None:
        return None
    flat = array.astype(np.float64).reshape(-1)
    return flat if seen_channel else np.full(channels, flat[0])


def _bias(init: SSAValue, channel_dim: int, channels: int,
          constants: ConstantStore) -> np.ndarray | None:
    """What the convolution starts from, per channel: a splat fill or a broadcast vector."""
    op = init.owner
    if isinstance(op, linalg.FillOp):
        found = fill_value(init)
        if found is not None and found[0].type == _F32:
            return np.full(channels, np.float32(found[1]), np.float64)
        return None
    if isinstance(op, linalg.BroadcastOp):
        rank = len(init.type.get_shape())  # type: ignore[attr-defined]
        if list(op.dimensions.get_values()) != [d for d in range(rank) if d != channel_dim]:
            return None
        vector = constant_value(op.input, constants)
        if vector is None or vector.shape != (channels,):
            return None
        return vector.astype(np.float64)
    return None


def _constant(b: Builder, constants: ConstantStore, array: np.ndarray, t: object,
              hint: str) -> SSAValue:
    name = constants.add(np.ascontiguousarray(array).tobytes(), hint)
    return b.insert(arith.ConstantOp(DenseResourceAttr.from_params(name, t), t)).result  # type: ignore[arg-type]


def _hint(weights: SSAValue, what: str) -> str:
    """Names the folded constants after the filter they come from, where it has a name."""
    op = weights.owner
    while isinstance(op, (tensor.ExpandShapeOp, tensor.CollapseShapeOp)):
        op = op.operands[0].owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseResourceAttr):
        return f"{op.value.resource_handle.data}_folded_{what}"
    return f"folded_{what}"


def _erase_unused(ops: list[Operation]) -> None:
    """The chain's constants, reshapes and scale computations, the old filter and init, once
    nothing reads them (each would otherwise stay in the module, or become a dispatch)."""
    pending = list(ops)
    while pending:
        op = pending.pop()
        if op.parent is None or any(r.uses for r in op.results) or not isinstance(
                op, (arith.ConstantOp, tensor.ExpandShapeOp, tensor.CollapseShapeOp, EmptyOp,
                     linalg.FillOp, linalg.BroadcastOp, linalg.GenericOp)):
            continue
        pending.extend(o.owner for inner in op.walk() for o in inner.operands
                       if isinstance(o.owner, Operation) and o.owner.parent is not None)
        op.detach()
        op.erase()

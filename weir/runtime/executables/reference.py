"""Loader and executor of the `reference` target's payload: each dispatch is run with numpy over
the whole iteration space (never element by element), so the reference target is slow only by a
constant factor. The payload is decoded and verified, and every body analysed, once at load time;
a dispatch then only walks a list of prepared steps."""

from __future__ import annotations

import math
from typing import Callable, Iterator, Sequence

import numpy as np

from weir.errors import ModuleFormatError, RuntimeFault, WeirError
from weir.format.kernel_codec import decode_reference_executable
from weir.format.kernel_description import (
    Broadcast,
    Conv2D,
    Empty,
    EntryPoint,
    Fill,
    Generic,
    InsertSlice,
    KernelOp,
    Load,
    Matmul,
    Pool2D,
    PushDim,
    Reduce,
    Result,
    Shape,
    Slice,
    Store,
    Transpose,
    Reshape,
)
from weir.runtime.executables.reference_body import (
    combine,
    evaluate_body,
    evaluate_sequential,
    plan_body,
    in_order,
    reduce_in_order,
    reduce_partial,
)
from weir.runtime.executables.reference_ext import ext_step
from weir.runtime.executables.reference_layout import from_loop_space, to_loop_space
from weir.runtime.executables.reference_scalar_ops import _to, compute_dtype
from weir.runtime.executables.reference_slices import insert_slice, take_slice
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.element_types import numpy_dtype
from weir.runtime.hal.executable import Executable, LoaderInfo, check_dispatch_arity
from weir.runtime.hal.workgroups import WorkgroupRunner

FORMAT = "reference"
Values = list[object]
Step = Callable[[Values, Sequence[Buffer], Sequence[int]], None]


def _tensor(value: object) -> np.ndarray:
    """Single-result generic/reduce values are 1-tuples; the codec guarantees that much."""
    if type(value) is tuple:
        return value[0]  # type: ignore[no-any-return]
    return value  # type: ignore[return-value]


def _shape(shape: Shape, constants: Sequence[int]) -> tuple[int, ...]:
    dims = tuple(constants[d.index] if isinstance(d, PushDim) else d for d in shape)
    if any(d < 0 for d in dims):
        raise RuntimeFault(f"negative dimension in shape {dims}")
    return dims


def _check_shape(actual: tuple[int, ...], expected: tuple[int, ...], what: str) -> None:
    if actual != expected:
        raise RuntimeFault(f"{what}: shape {actual} does not match the init's {expected}")


class _Planner:
    def __init__(self, entry: EntryPoint) -> None:
        self.entry = entry

    def where(self, k: int) -> str:
        return f"reference executable entry '{self.entry.name}' op {k}"

    def step(self, op: KernelOp, k: int) -> Step:  # noqa: C901 (one case per op kind)
        w = self.where(k)
        if isinstance(op, Load):
            dt = numpy_dtype(op.dtype)

            def load(values: Values, bindings: Sequence[Buffer], consts: Sequence[int]) -> None:
                shape = _shape(op.shape, consts)
                n = math.prod(shape) * dt.itemsize
                buf = bindings[op.binding]
                buf.check_range(op.offset, n, f"{w}: load from binding {op.binding}")
                values.append(buf.data[op.offset:op.offset + n].view(dt).reshape(shape))
            return load
        if isinstance(op, Empty):
            dt = numpy_dtype(op.dtype)
            return lambda values, b, consts: values.append(np.zeros(_shape(op.shape, consts), dt))
        if isinstance(op, Fill):
            def fill(values: Values, b: Sequence[Buffer], c: Sequence[int]) -> None:
                init = _tensor(values[op.init])
                scalar = _to(np.asarray(op.value), init.dtype)
                values.append(np.full(init.shape, scalar, dtype=init.dtype))
            return fill
        if isinstance(op, Generic):
            return self.generic(op, w)
        if isinstance(op, Reduce):
            return self.reduce(op, w)
        if isinstance(op, Matmul):
            return lambda values, b, c: values.append(
                _matmul(_tensor(values[op.lhs]), _tensor(values[op.rhs]), _tensor(values[op.init]), w))
        if isinstance(op, Conv2D):
            return lambda values, b, c: values.append(_conv2d(
                op, _tensor(values[op.input]), _tensor(values[op.filter]), _tensor(values[op.init]), w))
        if isinstance(op, Pool2D):
            return lambda values, b, c: values.append(
                _pool2d(op, _tensor(values[op.input]), _tensor(values[op.init]), w))
        if isinstance(op, Transpose):
            def transpose(values: Values, b: Sequence[Buffer], c: Sequence[int]) -> None:
                x, init = _tensor(values[op.input]), _tensor(values[op.init])
                out = np.transpose(x, op.permutation)
                _check_shape(out.shape, init.shape, f"{w}: transpose")
                values.append(_to(out, init.dtype))
            return transpose
        if isinstance(op, Reshape):
            def reshape(values: Values, b: Sequence[Buffer], c: Sequence[int]) -> None:
                x = _tensor(values[op.input])
                if x.size != math.prod(op.shape):
                    raise RuntimeFault(f"{w}: reshape of {x.size} element(s) to "
                                       f"{list(op.shape)}")
                values.append(x.reshape(op.shape))
            return reshape
        if isinstance(op, Broadcast):
            def broadcast(values: Values, b: Sequence[Buffer], c: Sequence[int]) -> None:
                x, init = _tensor(values[op.input]), _tensor(values[op.init])
                kept = [s for i, s in enumerate(init.shape) if i not in op.dimensions]
                _check_shape(x.shape, tuple(kept), f"{w}: broadcast input")
                out = np.broadcast_to(np.expand_dims(x, op.dimensions), init.shape)
                values.append(_to(out, init.dtype))
            return broadcast
        if isinstance(op, Result):
            return lambda values, b, c: values.append(values[op.source][op.index])  # type: ignore[index]
        if isinstance(op, Store):
            def store(values: Values, bindings: Sequence[Buffer], c: Sequence[int]) -> None:
                arr = _tensor(values[op.value])
                target = bindings[op.binding].writable_bytes(
                    op.offset, arr.nbytes, f"{w}: store to binding {op.binding}")
                target.view(arr.dtype).reshape(arr.shape)[...] = arr
            return store
        if isinstance(op, Slice):
            return lambda values, b, consts: values.append(
                take_slice(op, _tensor(values[op.input]), consts, w))
        if isinstance(op, InsertSlice):
            return lambda values, b, consts: values.append(insert_slice(
                op, _tensor(values[op.source]), _tensor(values[op.dest]), consts, w))
        ext = ext_step(op, w)
        if ext is not None:
            return ext  # type: ignore[return-value]
        raise ModuleFormatError(f"{w}: unknown kernel op {type(op).__name__}")

    def generic(self, op: Generic, w: str) -> Step:
        nin, nout = len(op.inputs), len(op.outputs)
        parallel = tuple(it == "parallel" for it in op.iterators)
        reducing = not all(parallel)
        nloops = len(op.iterators)
        for i in range(nout):
            omap = op.maps[nin + i]
            missing = [l for l in range(nloops) if parallel[l] and l not in omap]
            if missing:
                raise ModuleFormatError(f"{w}: output {i} is not indexed by parallel loop(s) {missing}")
        plan = plan_body(op.body, nin, nout, op.yields, reducing, w)
        red_axes = tuple(l for l in range(nloops) if not parallel[l])

        def generic(values: Values, b: Sequence[Buffer], c: Sequence[int]) -> None:
            operands = [_tensor(values[v]) for v in op.inputs + op.outputs]
            sizes = _loop_sizes(operands, op.maps, nloops, w)
            views = [to_loop_space(a, m, nloops) for a, m in zip(operands, op.maps)]
            args: list[np.ndarray | None] = list(views[:nin]) + (
                [None] * nout if reducing else list(views[nin:]))

            def index(d: int, dt: np.dtype) -> np.ndarray:
                return np.arange(sizes[d], dtype=dt).reshape([-1 if l == d else 1 for l in range(nloops)])
            captured = [_tensor(values[v]) for v in op.captures]
            if plan.sequential:
                accs = evaluate_sequential(plan, views[:nin], views[nin:], sizes, red_axes, index, c,
                                           captured, op.checks)
                values.append(tuple(
                    _to(from_loop_space(a, op.maps[nin + i], sizes, parallel), a.dtype)
                    for i, a in enumerate(accs)))
                return
            results = evaluate_body(plan, args, index, c, captured, op.checks)
            outs: list[np.ndarray] = []
            for i, r in enumerate(results):
                init = operands[nin + i]
                red = plan.reductions[i]
                if red is None:
                    res = from_loop_space(r, op.maps[nin + i], sizes, parallel)
                elif op.in_order and in_order(red):
                    start = to_loop_space(init, op.maps[nin + i], nloops)
                    start = start[tuple(0 if l in red_axes else slice(None) for l in range(nloops))]
                    total = reduce_in_order(red, start, np.broadcast_to(r, sizes), red_axes)
                    res = from_loop_space(np.expand_dims(total, red_axes), op.maps[nin + i],
                                          sizes, parallel)
                else:
                    reduced = reduce_partial(red, np.broadcast_to(r, sizes), red_axes, keepdims=True)
                    res = combine(red, init, from_loop_space(reduced, op.maps[nin + i], sizes, parallel))
                _check_shape(res.shape, init.shape, f"{w}: output {i}")
                outs.append(_to(res, init.dtype))
            values.append(tuple(outs))
        return generic

    def reduce(self, op: Reduce, w: str) -> Step:
        n = len(op.inputs)
        plan = plan_body(op.body, n, n, op.yields, True, w)

        def reduce(values: Values, b: Sequence[Buffer], c: Sequence[int]) -> None:
            inputs = [_tensor(values[v]) for v in op.inputs]
            shape = inputs[0].shape
            for x in inputs[1:]:
                _check_shape(x.shape, shape, f"{w}: reduce input")
            if plan.sequential:
                kept = tuple(d for d in range(len(shape)) if d not in op.dimensions)
                parallel = [d in kept for d in range(len(shape))]
                inits = [_tensor(values[v]) for v in op.inits]
                for init in inits:
                    _check_shape(init.shape, tuple(shape[d] for d in kept), f"{w}: reduce init")
                accs = evaluate_sequential(plan, inputs, [to_loop_space(x, kept, len(shape))
                                                          for x in inits],
                                           shape, tuple(sorted(op.dimensions)), None, c)
                values.append(tuple(from_loop_space(a, kept, shape, parallel) for a in accs))
                return
            results = evaluate_body(plan, list(inputs) + [None] * n, None, c)
            outs: list[np.ndarray] = []
            for i, r in enumerate(results):
                init = _tensor(values[op.inits[i]])
                red = plan.reductions[i]
                assert red is not None
                if op.in_order and in_order(red):
                    res = reduce_in_order(red, init, np.broadcast_to(r, shape), op.dimensions)
                else:
                    reduced = reduce_partial(red, np.broadcast_to(r, shape), op.dimensions,
                                             keepdims=False)
                    res = combine(red, init, reduced)
                _check_shape(res.shape, init.shape, f"{w}: reduce result {i}")
                outs.append(_to(res, init.dtype))
            values.append(tuple(outs))
        return reduce


def _loop_sizes(operands: Sequence[np.ndarray], maps: Sequence[Sequence[int]], nloops: int,
                w: str) -> list[int]:
    sizes: list[int | None] = [None] * nloops
    for k, (arr, amap) in enumerate(zip(operands, maps)):
        for j, d in enumerate(amap):
            if d < 0:
                if arr.shape[j] != 1:
                    raise RuntimeFault(f"{w}: operand {k} dim {j} has size {arr.shape[j]} but is "
                                       f"indexed by a constant (must be 1)")
            elif sizes[d] is None:
                sizes[d] = arr.shape[j]
            elif sizes[d] != arr.shape[j]:
                raise RuntimeFault(f"{w}: loop {d} has size {sizes[d]} from one operand and "
                                   f"{arr.shape[j]} from operand {k}")
    return [s if s is not None else 1 for s in sizes]


def _matmul(lhs: np.ndarray, rhs: np.ndarray, init: np.ndarray, w: str) -> np.ndarray:
    """init + lhs @ rhs, accumulated in the init's type: floats one step of k at a time, f16 and
    bf16 (held in f32) rounded to their type after each step, as IREE accumulates them."""
    if lhs.shape[-1] != rhs.shape[-2] or init.shape != lhs.shape[:-1] + rhs.shape[-1:] or \
            (lhs.ndim == 3 and not lhs.shape[0] == rhs.shape[0]):
        raise RuntimeFault(f"{w}: matmul of {lhs.shape} by {rhs.shape} into {init.shape}")
    acc = _accumulator(init.dtype)
    if acc.kind != "f":
        product = np.matmul(lhs.astype(acc, copy=False), rhs.astype(acc, copy=False))
        return _to(init.astype(acc, copy=False) + product, init.dtype)
    narrow = init.dtype if init.dtype != acc else None
    return _to(_sum_in_k_order(lhs.astype(acc, copy=False), rhs.astype(acc, copy=False),
                               init.astype(acc, copy=True), narrow), init.dtype)


def _sum_in_k_order(lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray,
                    narrow: np.dtype | None) -> np.ndarray:
    """out += lhs @ rhs one step of k at a time, every element rounding after each step (to
    `narrow` too, when given): the order IREE sums in (and llvm-cpu's GEMM), where np.matmul's
    blocked BLAS sums partial sums of k and rounds differently (409.601 instead of 409.596 for
    1024 x 0.4f). Rows go in blocks that stay in cache through all of k."""
    rows = max(1, _K_ORDER_BLOCK // max(1, out.shape[-1]))
    for first in range(0, out.shape[-2], rows):
        block = out[..., first:first + rows, :]
        a = lhs[..., first:first + rows, :]
        step = np.empty_like(block)
        rounded = np.empty(block.shape, narrow) if narrow is not None else None
        for kk in range(lhs.shape[-1]):
            np.multiply(a[..., :, kk:kk + 1], rhs[..., kk:kk + 1, :], out=step)
            block += step
            if rounded is not None:
                np.copyto(rounded, block, casting="unsafe")
                np.copyto(block, rounded)
    return out


# Elements of the output summed together through k by `_sum_in_k_order` (256 KiB of f32).
_K_ORDER_BLOCK = 1 << 16


def _accumulator(dtype: np.dtype) -> np.dtype:
    """The type contractions accumulate in: the init's, except f16/bf16 (f32) and i1 (u8)."""
    acc = compute_dtype(dtype)
    return np.dtype(np.uint8) if acc == np.bool_ else acc


def _in_order(a: np.ndarray, layout: str, order: str) -> np.ndarray:
    """A view of `a`, whose dimensions `layout` names, with its dimensions in `order`."""
    return a.transpose([layout.index(d) for d in order])


def _window_outputs(spatial: tuple[int, ...], window: tuple[int, ...], strides: tuple[int, int],
                    dilations: tuple[int, int], what: str) -> tuple[int, int]:
    """The most output (H, W) positions the input holds: (in - dilation*(k-1) - 1)/stride + 1.
    An output may have fewer (the input's last rows then go unread), as MLIR allows."""
    sizes = []
    for size, k, s, d in zip(spatial, window, strides, dilations):
        span = d * (k - 1) + 1
        if k < 1 or size < span:
            raise RuntimeFault(f"{what}: window {window} with dilations {dilations} does not fit "
                               f"in input size {spatial}")
        sizes.append((size - span) // s + 1)
    return sizes[0], sizes[1]


def _taps(x: np.ndarray, window: tuple[int, int], out: tuple[int, int], strides: tuple[int, int],
          dilations: tuple[int, int], h_axis: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """For each window position (i, j), the strided view of `x` (spatial axes h_axis, h_axis+1)
    that it reads at every output position: one whole-tensor operation per tap, none per element."""
    for i in range(window[0]):
        for j in range(window[1]):
            index = [slice(None)] * x.ndim
            for axis, (k, n, s, d) in enumerate(zip((i, j), out, strides, dilations)):
                index[h_axis + axis] = slice(k * d, k * d + (n - 1) * s + 1, s)
            yield i, j, x[tuple(index)]


def _conv2d(op: Conv2D, x: np.ndarray, f: np.ndarray, init: np.ndarray, w: str) -> np.ndarray:
    """init + the convolution of x by f, as one product over channels per filter tap (depthwise:
    one elementwise product per tap, each channel by its own filter)."""
    out_order = "NHWC" if op.depthwise else "NHWF"
    xs = _in_order(x, op.input_layout, "NHWC")
    fs = _in_order(f, op.filter_layout, "HWC" if op.depthwise else "HWCF")
    what = f"{w}: conv2d of {x.shape} by {f.shape} into {init.shape}"
    most = _window_outputs(xs.shape[1:3], fs.shape[:2], op.strides, op.dilations, what)
    init_s = _in_order(init, op.output_layout, out_order)
    out_c = fs.shape[2] if op.depthwise else fs.shape[3]
    out_hw = init_s.shape[1:3]
    if xs.shape[3] != fs.shape[2] or init_s.shape != (xs.shape[0], *out_hw, out_c) or \
            any(n > m for n, m in zip(out_hw, most)):
        raise RuntimeFault(what)
    acc = _accumulator(init.dtype)
    xs, fs = xs.astype(acc, copy=False), fs.astype(acc, copy=False)
    total = init_s.astype(acc)
    for i, j, patch in _taps(xs, fs.shape[:2], out_hw, op.strides, op.dilations, 1):
        if op.depthwise:
            total += patch * fs[i, j]
        else:
            total += np.tensordot(patch, fs[i, j], axes=1)  # one (N*OH*OW, C) x (C, F) product
    return _to(_in_order(total, out_order, op.output_layout), init.dtype)


_POOL_COMBINE: dict[str, np.ufunc] = {"max": np.maximum, "sum": np.add}


def _pool2d(op: Pool2D, x: np.ndarray, init: np.ndarray, w: str) -> np.ndarray:
    """init combined (max or sum) with every tap of the window, one whole-tensor op per tap."""
    xs, init_s = _in_order(x, op.layout, "NCHW"), _in_order(init, op.layout, "NCHW")
    what = f"{w}: pool2d of {x.shape} with window {op.window} into {init.shape}"
    most = _window_outputs(xs.shape[2:], op.window, op.strides, op.dilations, what)
    out_hw = init_s.shape[2:]
    if init_s.shape[:2] != xs.shape[:2] or any(n > m for n, m in zip(out_hw, most)):
        raise RuntimeFault(what)
    acc = _accumulator(init.dtype)
    total = init_s.astype(acc)
    combine = _POOL_COMBINE[op.kind]
    for _, _, patch in _taps(xs.astype(acc, copy=False), op.window, out_hw, op.strides,
                             op.dilations, 2):
        combine(total, patch, out=total)
    return _to(_in_order(total, "NCHW", op.layout), init.dtype)


class _PreparedEntry:
    def __init__(self, entry: EntryPoint, steps: list[Step]) -> None:
        self.entry = entry
        self.steps = steps


class ReferenceExecutable(Executable):
    def __init__(self, entries: list[_PreparedEntry]) -> None:
        self._entries = entries
        self._names = tuple(e.entry.name for e in entries)

    @property
    def entry_points(self) -> tuple[str, ...]:
        return self._names

    def dispatch(self, entry: int, workgroups: tuple[int, ...], constants: Sequence[int],
                 bindings: Sequence[Buffer], runner: WorkgroupRunner) -> None:
        """Runs the whole iteration space at once; the workgroup count is irrelevant here."""
        prepared = self._entries[entry]
        ep = prepared.entry
        check_dispatch_arity(ep.name, bindings, constants, ep.num_bindings, ep.num_push_constants)
        consts = [int(c) for c in constants]
        values: Values = []
        with np.errstate(all="ignore"):
            for k, step in enumerate(prepared.steps):
                try:
                    step(values, bindings, consts)
                except WeirError:
                    raise
                except (ValueError, TypeError, IndexError, ArithmeticError) as e:
                    raise RuntimeFault(f"reference dispatch '{ep.name}' op {k}: {e}") from e


def load_reference_executable(payload: memoryview) -> ReferenceExecutable:
    exe = decode_reference_executable(payload)
    entries = []
    for entry in exe.entry_points:
        planner = _Planner(entry)
        entries.append(_PreparedEntry(entry, [planner.step(op, k) for k, op in enumerate(entry.ops)]))
    return ReferenceExecutable(entries)


REFERENCE_LOADER = LoaderInfo(FORMAT, load_reference_executable,
                              "numpy over the whole iteration space")

"""Per-element evaluation for the llvm-cpu entry lowering: an elementwise value (generic
without reductions, broadcast, transpose, fill, slice, reshape, a padded input, a load) is never
stored; its element at an index is computed where it is read, inside the loops of whoever reads
it, from the elements of its operands, so a chain of elementwise ops is one loop over memory.

In a fused chain of N elementwise ops each element needs the one before, N deep. The
per-element forms are therefore generators that yield each element they need, (value, index),
and receive its code; `_drive` keeps the waiting ones on a list of its own, so a chain's depth
never becomes the depth of Python's call stack."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.checks import emit_extract
from weir.compiler.targets.llvm_cpu.kernel_values import GenericView, KernelValues, ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64
from weir.compiler.targets.llvm_cpu.machine import CpuTarget
from weir.compiler.targets.llvm_cpu.padded_input import inside
from weir.compiler.targets.llvm_cpu.reshape_index import reshaped_index
from weir.compiler.targets.llvm_cpu.slices import window_index
from weir.format import kernel_description as k

R = TypeVar("R")
# A per-element computation: yields the elements it needs, receives their code, returns its own.
Demand = Generator[tuple[ValueRef, list[ir.Value]], ir.Value, R]


@dataclass
class Memory:
    """A row-major tensor in memory: element pointer and dims (i64 values)."""

    ptr: ir.Value
    dtype: str
    dims: list[ir.Value]

    def address(self, b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        linear: ir.Value = I64(0)
        for i, (x, d) in enumerate(zip(idx, self.dims)):
            linear = x if i == 0 else b.add(b.mul(linear, d), x)
        return b.gep(self.ptr, [linear], inbounds=True)


@dataclass
class Body:
    """Values computed once per innermost iteration; keyed by value and index identity."""

    cache: dict[tuple[object, ...], object] = field(default_factory=dict)


class ElementEvaluation(ABC):
    """The per-element half of EntryLowering (lower_entry.py), which sets these attributes and
    gives the entry's dimensions and checks."""

    cpu: CpuTarget
    kv: KernelValues
    memory: dict[ValueRef, Memory]
    finished_in_place: ValueRef | None
    push: Sequence[ir.Value]
    reassociate_fp_reductions: bool

    @abstractmethod
    def dim(self, d: k.Dim) -> ir.Value: ...

    @abstractmethod
    def dims(self, v: ValueRef) -> list[ir.Value]: ...

    @abstractmethod
    def fail_unless(self, b: ir.IRBuilder, holds: ir.Value, check: int,
                    detail: tuple[ir.Value, ir.Value, ir.Value] | None = None) -> None: ...

    def element(self, b: ir.IRBuilder, v: ValueRef, idx: list[ir.Value], ctx: Body) -> ir.Value:
        hit = ctx.cache.get((v, *map(id, idx)))
        if hit is not None:
            return hit[0]  # type: ignore[index, no-any-return]
        return self._drive(b, ctx, self._cached_element(b, v, idx, ctx))

    def operand(self, b: ir.IRBuilder, view: GenericView, j: int, loops: list[ir.Value],
                ctx: Body) -> ir.Value:
        v, idx = self._operand_at(view, j, loops)
        return self.element(b, v, idx, ctx)

    def evaluate(self, b: ir.IRBuilder, view: GenericView, loops: list[ir.Value], ctx: Body,
                 accumulators: list[ir.Value] | None) -> list[ir.Value]:
        """The body at one point of the loop space; `accumulators` replace the output block
        arguments in a reduction. Block arguments are read only if the body uses them."""
        return self._drive(b, ctx, self._evaluate(b, view, loops, ctx, accumulators))

    def _drive(self, b: ir.IRBuilder, ctx: Body, root: Demand[R]) -> R:
        """Runs `root`, answering each element asked for from the cache or by running that
        element's own generator first."""
        waiting: list[Demand[Any]] = [root]
        answer: Any = None
        while True:
            try:
                v, idx = waiting[-1].send(answer)
            except StopIteration as done:
                waiting.pop()
                if not waiting:
                    return done.value  # type: ignore[no-any-return]
                answer = done.value
                continue
            hit = ctx.cache.get((v, *map(id, idx)))
            if hit is not None:
                answer = hit[0]  # type: ignore[index]
            else:
                waiting.append(self._cached_element(b, v, idx, ctx))
                answer = None

    def _cached_element(self, b: ir.IRBuilder, v: ValueRef, idx: list[ir.Value],
                        ctx: Body) -> Demand[ir.Value]:
        value = yield from self._element(b, v, idx, ctx)
        # The index values ride along so their ids stay unique while the key lives.
        ctx.cache[(v, *map(id, idx))] = (value, idx)
        return value

    def _element(self, b: ir.IRBuilder, v: ValueRef, idx: list[ir.Value],
                 ctx: Body) -> Demand[ir.Value]:
        kv = self.kv
        if v in self.memory:
            mem = self.memory[v]
            value = s.load_element(b, mem.address(b, idx), mem.dtype)
            return s.freeze(b, value) if v == self.finished_in_place else value
        n, i = v
        op = kv.ops[n]
        dtype = kv.dtype[v]
        if isinstance(op, k.Empty):
            return s.constant(dtype, 0)
        if isinstance(op, k.Fill):
            return s.constant(dtype, op.value)
        if isinstance(op, k.Broadcast):
            kept = [x for j, x in enumerate(idx) if j not in op.dimensions]
            x = yield kv.ref(op.input), kept
            return self.convert(b, x, kv.dtype[kv.ref(op.input)], dtype)
        if isinstance(op, k.Slice):
            x = yield kv.ref(op.input), window_index(self, b, op.offsets, op.strides, op.dropped,
                                                     idx)
            return x
        if isinstance(op, k.Reshape):
            x = yield kv.ref(op.input), reshaped_index(b, idx, op.shape,
                                                          self.dims(kv.ref(op.input)))
            return x
        if isinstance(op, k.Transpose):
            src = [I64(0)] * len(idx)
            for j, p in enumerate(op.permutation):
                src[p] = idx[j]
            x = yield kv.ref(op.input), src
            return self.convert(b, x, kv.dtype[kv.ref(op.input)], dtype)
        if isinstance(op, k.InsertSlice):  # a padded input (`KernelValues.padded_inputs`)
            source = kv.ref(op.source)
            ok: ir.Value | None = None
            at: list[ir.Value] = []
            for x, offset, size in zip(idx, op.offsets, self.dims(source)):
                ok, rel = inside(b, b.sub(x, self.dim(offset)), size, ok)
                at.append(rel)  # clamped to 0 outside: the source has elements
            value = yield source, at
            pad = yield kv.ref(op.dest), idx
            return value if ok is None else b.select(ok, value, pad)
        if isinstance(op, (k.Generic, k.Reduce)):
            view = kv.views[n]
            loops: list[ir.Value] = [I64(0)] * len(view.iterators)
            for j, d in enumerate(view.maps[len(view.inputs) + i]):
                if d >= 0:
                    loops[d] = idx[j]
            key = ("body", n, *map(id, loops))
            if key not in ctx.cache:
                results = yield from self._evaluate(b, view, loops, ctx, None)
                ctx.cache[key] = (results, loops)
            return ctx.cache[key][0][i]  # type: ignore[index, no-any-return]
        raise AssertionError(f"no per-element form for {type(op).__name__}")

    def _operand_at(self, view: GenericView, j: int,
                    loops: list[ir.Value]) -> tuple[ValueRef, list[ir.Value]]:
        """Operand `j` of a generic and the index of its element at `loops`."""
        return (view.inputs + view.outputs)[j], \
            [loops[d] if d >= 0 else I64(0) for d in view.maps[j]]

    def _evaluate(self, b: ir.IRBuilder, view: GenericView, loops: list[ir.Value], ctx: Body,
                  accumulators: list[ir.Value] | None) -> Demand[list[ir.Value]]:
        nin = len(view.inputs)
        operands = view.inputs + view.outputs
        dtypes = [self.kv.dtype[v] for v in operands] + [op.dtype for op in view.body]
        values: dict[int, ir.Value] = {}
        combiner = accumulators is not None
        flags = s.REASSOC if combiner and self.reassociate_fp_reductions else ()

        def get(x: int) -> Demand[ir.Value]:
            if x not in values:
                if x >= nin and accumulators is not None:
                    values[x] = accumulators[x - nin]
                else:
                    values[x] = yield self._operand_at(view, x, loops)
            return values[x]

        base = len(operands)
        for j, op in enumerate(view.body):
            if op.op == "index":
                values[base + j] = loops[int(op.attr)]  # type: ignore[arg-type]
                continue
            if op.op == "push":
                slot = self.push[int(op.attr)]  # type: ignore[arg-type]
                values[base + j] = s.push_scalar(b, slot, op.dtype)
                continue
            args = []
            for a in op.args:
                args.append((yield from get(a)))
            if op.op == "extract":
                values[base + j] = yield from emit_extract(self, b, view, j, args)
                continue
            if op.op == "assert":
                self.fail_unless(b, args[0], view.check_of[j])
                values[base + j] = args[0]
                continue
            values[base + j] = s.emit_scalar(b, op.op, args, op.dtype, op.attr,
                                             [dtypes[a] for a in op.args], flags, combiner,
                                             self.cpu.native_ldexp)
        out_dtypes = [self.kv.dtype[o] for o in view.outputs]
        results = []
        for i, y in enumerate(view.yields):
            results.append(self.convert(b, (yield from get(y)), dtypes[y], out_dtypes[i]))
        return results

    def convert(self, b: ir.IRBuilder, x: ir.Value, src: str, dst: str) -> ir.Value:
        """Register value of `src` as `dst` (only where the description mixes widths)."""
        if src == dst or s.register_type(src) == s.register_type(dst) and \
                s.is_float(src) == s.is_float(dst):
            return x
        to = s.register_type(dst)
        if s.is_float(src) and s.is_float(dst):
            return b.fpext(x, to) if to.intrinsic_name == "f64" else b.fptrunc(x, to)
        if s.is_float(dst):
            return b.sitofp(x, to)
        if s.is_float(src):
            return b.fptosi(x, to)
        return b.sext(x, to) if x.type.width < to.width else b.trunc(x, to)

"""Lowers one entry point of a kernel description to an LLVM function.

Elementwise values (generic without reductions, broadcast, transpose, fill, slice, loads) are never
stored: each is computed per element inside the loops of whoever reads it (element_eval.py), so a
chain of elementwise ops is one loop over memory. Roots (reductions, contractions) get loop nests of their
own that write into the result binding, or into scratch memory when nothing stores them.

The grid: when the entry has one loop nest (one root, or elementwise stores of one shape), its
outermost non-unit dimension is split into workgroups of `tile` indices, sized so that each
workgroup does enough work to be worth a thread; otherwise the entry is one workgroup.

A root finished by an elementwise epilogue keeps its own grid (epilogue.py)."""

from __future__ import annotations

import math
from typing import Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.ext_ops import EXT_OPS, lower_ext, result_count
from weir.compiler.targets.llvm_cpu.element_eval import ElementEvaluation, Memory
from weir.compiler.targets.llvm_cpu.elementwise import lower_elementwise
from weir.compiler.targets.llvm_cpu.epilogue import plan_epilogue
from weir.compiler.targets.llvm_cpu.epilogue_program import EpilogueProgram
from weir.compiler.targets.llvm_cpu.kernel_values import KernelValues, ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, smin
from weir.compiler.targets.llvm_cpu.machine import CpuTarget
from weir.compiler.targets.llvm_cpu.reduction import lower_reduction
from weir.compiler.targets.llvm_cpu.scratch import scratch_functions
from weir.compiler.targets.llvm_cpu.row_pipeline import lower_rows, row_count
from weir.compiler.targets.llvm_cpu.slices import (
    lower_insert_chain,
    lower_insert_slice,
    window_bounds,
)
from weir.format import kernel_description as k
from weir.format.element_types import BY_NAME
from weir.format.native_executable import BindingAccess, NativeEntry

# Elements (or multiply-adds) one workgroup should cover: a thread hand-off costs tens of
# microseconds, so smaller pieces would cost more to distribute than to run.
WORK_PER_WORKGROUP = 1 << 15
I8P = ir.IntType(8).as_pointer()


class EntryLowering(ElementEvaluation):
    def __init__(self, module: ir.Module, cpu: CpuTarget, entry: k.EntryPoint,
                 symbol: str, reassociate_fp_reductions: bool = True) -> None:
        self.module, self.cpu, self.entry, self.symbol = module, cpu, entry, symbol
        # False: float reductions combine strictly in iteration order (no `reassoc`, no
        # blocking), as IREE's --iree-llvmcpu-reassociate-fp-reductions=false asks.
        self.reassociate_fp_reductions = reassociate_fp_reductions
        self.kv = KernelValues(entry)
        self.memory: dict[ValueRef, Memory] = {}
        self.accesses: list[BindingAccess] = []
        self.scratch: list[ir.Value] = []
        # GEMM microkernels the entry calls, by (lhs, rhs, accumulator) type and whether of
        # wide tiles.
        self.gemms: set[tuple[tuple[str, str, str], bool]] = set()
        # The epilogues of calls of the microkernel that applies one (`call_gemm_epilogue`),
        # and whether in wide tiles.
        self.gemm_programs: set[tuple[EpilogueProgram, bool]] = set()
        # The root whose output tiles get an epilogue, and the values stored from each tile.
        # (store, its memory, which of its dims index the root).
        self.epilogue: tuple[int, list[tuple[ValueRef, Memory, tuple[int, ...]]]] | None = None
        # The root's result when its epilogue overwrites it in place (epilogue.py): its reads
        # are frozen, so that x86's code generator does not turn `store (select m, x, ...)` of
        # an element x just loaded from the same place into a masked store (vmaskmovps, which
        # AMD CPUs microcode: a ReLU epilogue after a GEMM cost more than the GEMM).
        self.finished_in_place: ValueRef | None = None

    # ------------------------------------------------------------------ function and prologue

    def lower(self) -> NativeEntry:
        e = self.entry
        outer = ir.Function(self.module, ir.FunctionType(
            I64, [I8P.as_pointer(), I64.as_pointer(), I64, I64, I64.as_pointer()]), self.symbol)
        impl = ir.Function(self.module, ir.FunctionType(
            I64, [I8P] * e.num_bindings + [I64] * e.num_push_constants +
            [I64, I64, I64.as_pointer()]), f"{self.symbol}.impl")
        impl.linkage = "internal"
        # Kept out of line: inlined, its noalias bindings become scope metadata, which LLVM's
        # loop passes use less well (copy loops were no longer turned into memcpy, and so were
        # unrolled into thousands of stores). One call per workgroup range costs nothing.
        impl.attributes.add("noinline")
        impl.attributes.add("nounwind")
        outer.attributes.add("nounwind")
        for a in impl.args[:e.num_bindings]:
            a.add_attribute("noalias")  # bindings are distinct resources
        b = ir.IRBuilder(outer.append_basic_block("entry"))
        bindings, consts, begin, end, fault = outer.args
        args = [b.load(b.gep(bindings, [I64(i)], inbounds=True)) for i in range(e.num_bindings)]
        args += [b.load(b.gep(consts, [I64(i)], inbounds=True))
                 for i in range(e.num_push_constants)]
        b.ret(b.call(impl, args + [begin, end, fault]))

        self.fn = impl
        self.entry_block = impl.append_basic_block("entry")
        b = ir.IRBuilder(self.entry_block)
        self.binding_args = impl.args[:e.num_bindings]
        self.push = impl.args[e.num_bindings:e.num_bindings + e.num_push_constants]
        self.begin, self.end, self.fault = impl.args[-3], impl.args[-2], impl.args[-1]
        body_block = impl.append_basic_block("body")
        b.position_at_end(body_block)
        extent, tile = self._emit_body(b)
        for ptr in self.scratch:
            b.call(self._free(), [ptr])
        b.ret(I64(0))
        ir.IRBuilder(self.entry_block).branch(body_block)
        return NativeEntry(e.name, self.symbol, e.num_bindings, e.num_push_constants,
                           tuple(self.accesses), extent, tile, window_bounds(self.kv),
                           self.kv.checks)

    def fail_unless(self, b: ir.IRBuilder, holds: ir.Value, check: int,
                    detail: tuple[ir.Value, ir.Value, ir.Value] | None = None) -> None:
        """Where `holds` is false, the entry frees its scratch, writes its fault record
        (check number + 1, then an extract's dimension, index and size) and returns the check
        number + 1; `b` continues where it holds."""
        fail = b.append_basic_block("check.fail")
        ok = b.append_basic_block("check.ok")
        b.cbranch(holds, ok, fail).set_weights([1 << 20, 1])
        b.position_at_end(fail)
        for ptr in self.scratch:  # all allocated on every path here, none freed yet
            b.call(self._free(), [ptr])
        code = I64(check + 1)
        for j, word in enumerate((code, *(detail or (I64(0),) * 3))):
            b.store(word, b.gep(self.fault, [I64(j)], inbounds=True))
        b.ret(code)
        b.position_at_end(ok)

    def dim(self, d: k.Dim) -> ir.Value:
        return self.push[d.index] if isinstance(d, k.PushDim) else I64(d)

    def dims(self, v: ValueRef) -> list[ir.Value]:
        return [self.dim(d) for d in self.kv.shape[v]]

    def binding_memory(self, b: ir.IRBuilder, binding: int, offset: int, dtype: str,
                       shape: k.Shape, writes: bool) -> Memory:
        self.accesses.append(BindingAccess(binding, offset, dtype, shape, writes))
        raw = b.gep(self.binding_args[binding], [I64(offset)], inbounds=True)
        return Memory(b.bitcast(raw, s.memory_type(dtype).as_pointer()), dtype,
                      [self.dim(d) for d in shape])

    def store_memory(self, b: ir.IRBuilder, st: k.Store) -> tuple[ValueRef, Memory]:
        """The value `st` stores and the binding memory it goes to."""
        v = self.kv.ref(st.value)
        return v, self.binding_memory(b, st.binding, st.offset, self.kv.dtype[v],
                                      self.kv.shape[v], True)

    def alloca(self, t: ir.Type) -> ir.Value:
        """In the entry block, so mem2reg turns it into registers."""
        eb = ir.IRBuilder(self.entry_block)
        if self.entry_block.instructions:
            eb.position_before(self.entry_block.instructions[0])
        return eb.alloca(t)

    def _free(self) -> ir.Function:
        return scratch_functions(self.module)[1]

    def scoped(self, b: ir.IRBuilder, body: Callable[[], None]) -> None:
        """Runs `body`, then frees the scratch it allocated: inside a loop, scratch lives for one
        iteration (a free at the function's end would not see a pointer made in the loop)."""
        mark = len(self.scratch)
        body()
        for ptr in self.scratch[mark:]:
            b.call(self._free(), [ptr])
        del self.scratch[mark:]

    def scratch_memory(self, b: ir.IRBuilder, dtype: str, dims: list[ir.Value]) -> Memory:
        """Memory given back when the entry returns (scratch may be too big for a stack), kept
        by the executable between calls (scratch.py)."""
        count: ir.Value = I64(1)
        for d in dims:
            count = b.mul(count, d)
        size = BY_NAME[dtype].byte_size
        raw = b.call(scratch_functions(self.module)[0], [b.mul(count, I64(size))])
        self.scratch.append(raw)
        return Memory(b.bitcast(raw, s.memory_type(dtype).as_pointer()), dtype, dims)

    # ------------------------------------------------------------------------------- planning

    def _emit_body(self, b: ir.IRBuilder) -> tuple[k.Dim, int]:
        kv = self.kv
        loads = [n for n, op in enumerate(kv.ops) if isinstance(op, k.Load)]
        for n in loads:
            op = kv.ops[n]
            assert isinstance(op, k.Load)
            self.memory[(n, 0)] = self.binding_memory(b, op.binding, op.offset, op.dtype,
                                                      op.shape, False)
        # A reshape of memory is the same memory under other dims: contractions read it as is.
        for n, op in enumerate(kv.ops):
            source = self.memory.get(kv.ref(op.input)) if isinstance(op, k.Reshape) else None
            if source is not None:
                self.memory[(n, 0)] = Memory(source.ptr, source.dtype, self.dims((n, 0)))
        stores = [op for op in kv.ops if isinstance(op, k.Store)]
        roots = [n for n in range(len(kv.ops)) if kv.is_root(n)]
        # Results that land in a binding are computed there directly.
        for st in stores:
            v = kv.ref(st.value)
            if kv.is_root(v[0]) and v not in self.memory:
                self.memory[v] = self.binding_memory(b, st.binding, st.offset, kv.dtype[v],
                                                     kv.shape[v], True)
        lazy_stores = [st for st in stores if not kv.is_root(kv.ref(st.value)[0])]
        single_root = len(roots) == 1 and not lazy_stores and \
            all(kv.ref(st.value)[0] == roots[0] for st in stores)
        shapes = {kv.shape[kv.ref(st.value)] for st in lazy_stores}
        if single_root:
            return self._root(b, roots[0], partitioned=True)
        if not roots and len(shapes) == 1:
            return lower_elementwise(self, b, lazy_stores, partitioned=True)
        if len(roots) == 1 and plan_epilogue(self, b, roots[0], lazy_stores):
            return self._root(b, roots[0], partitioned=True)
        p = row_count(kv, roots, lazy_stores)
        if p is not None:
            return lower_rows(self, b, roots, p, lazy_stores)
        # Anything else runs as one workgroup: roots in order, then the elementwise stores.
        # An insert's destination made by another insert writes straight into its memory.
        shared = kv.in_place()
        for n in reversed(roots):
            owner = shared.get(n)
            if owner is not None and (n, 0) not in self.memory:
                if (owner, 0) not in self.memory:
                    self.memory[(owner, 0)] = self.scratch_memory(b, kv.dtype[(owner, 0)],
                                                                  self.dims((owner, 0)))
                self.memory[(n, 0)] = self.memory[(owner, 0)]
        chain = self._concat(roots, shared, stores, lazy_stores)
        if chain:
            grid = lower_insert_chain(self, b, chain)
            if grid is not None:
                return grid
        for n in roots:
            for i in range(len(self.outputs_of(n))):
                if (n, i) not in self.memory:
                    self.memory[(n, i)] = self.scratch_memory(b, kv.dtype[(n, i)],
                                                              self.dims((n, i)))
            self._root(b, n, partitioned=False)
        by_shape: dict[k.Shape, list[k.Store]] = {}
        for st in lazy_stores:
            by_shape.setdefault(kv.shape[kv.ref(st.value)], []).append(st)
        for group in by_shape.values():
            lower_elementwise(self, b, group, partitioned=False)
        return 1, 1

    def _concat(self, roots: list[int], shared: dict[int, int], stores: list[k.Store],
                lazy_stores: list[k.Store]) -> list[int] | None:
        """The roots when they are one chain of inserts, each into the one before, whose last
        is what the entry stores (a concat), else None."""
        kv = self.kv
        if len(roots) < 2 or lazy_stores or \
                any(kv.ref(st.value) != (roots[-1], 0) for st in stores):
            return None
        for before, n in zip(roots, roots[1:]):
            op = kv.ops[n]
            if not isinstance(op, k.InsertSlice) or op.dest != before or shared.get(before) != n:
                return None
        return roots if isinstance(kv.ops[roots[0]], k.InsertSlice) else None

    def outputs_of(self, n: int) -> tuple[ValueRef, ...]:
        view = self.kv.views.get(n)
        if view is not None:
            return view.outputs
        return tuple((n, i) for i in range(result_count(self.kv.ops[n])))

    def grid(self, shape: k.Shape, work_per_index: int) -> tuple[int, k.Dim, int]:
        """(partitioned dim, its extent, tile) for a loop nest over `shape`."""
        p = next((i for i, d in enumerate(shape) if not (isinstance(d, int) and d == 1)), 0)
        inner = math.prod(d if isinstance(d, int) else 1024 for d in shape[p + 1:])
        tile = max(1, -(-WORK_PER_WORKGROUP // max(1, inner * work_per_index)))
        return p, shape[p], tile

    def partition_bounds(self, b: ir.IRBuilder, extent: ir.Value,
                         tile: int) -> tuple[ir.Value, ir.Value]:
        lo = b.mul(self.begin, I64(tile))
        hi = smin(b, b.mul(self.end, I64(tile)), extent)
        return lo, hi

    # ---------------------------------------------------------------------------------- roots

    def _root(self, b: ir.IRBuilder, n: int, partitioned: bool) -> tuple[k.Dim, int]:
        op = self.kv.ops[n]
        if isinstance(op, (k.Generic, k.Reduce)):
            return lower_reduction(self, b, n, partitioned)
        if isinstance(op, k.InsertSlice):
            return lower_insert_slice(self, b, n, partitioned)
        if isinstance(op, EXT_OPS):
            return lower_ext(self, b, n, partitioned)
        from weir.compiler.targets.llvm_cpu.contraction import lower_contraction
        return lower_contraction(self, b, n, partitioned)


"""Products with few rows (a decoding step's matrix-vector products: one token times every
weight of a layer): `C[m, n] += sum_k A[m, k] * B[k, n]` with B read where it lies, never packed.

With M this small each element of B feeds at most M multiply-adds, so the product runs at the
speed memory delivers B, and the GEMM microkernel's packing (B read, written and read again)
would cost more than the arithmetic. Two layouts:

- B row-major (k x n, row stride ldb): `C[m, :] += A[m, k] * B[k, :]`, vectorised along n. A
  strip of C (a few KiB per row, in L1) takes the rows of B four at a time, so that each vector
  of C is loaded and stored once per four rows, and B streams in order, four rows side by side.
  Each element of C still gains its products in k order with one rounding each, as the GEMM
  microkernel and IREE sum them.
- B given transposed (Bt: n x k, row stride ldbt, the weight of a linear layer read as its
  transpose, or the keys of an attention): each C[m, n] is a dot product along k of a row of
  A (in L1) and a row of Bt, in vector accumulators summed across lanes at the end, a block of
  rows x columns of C at a time for independent accumulators.

Both take M at run time (rows in groups, see ROWS), on the calling thread; callers split the
columns over workgroups."""

from __future__ import annotations

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.gemm import Emitter
from weir.compiler.targets.llvm_cpu.gemm_base import (
    _BITS, _I32, _I64, _MEMORY_TYPES, _at, _check_kinds, _loop, _min, _mul, _splat, _widen,
    _i64)
from weir.compiler.targets.llvm_cpu.machine import CpuTarget

# Rows of C one pass over B serves. Row-major B: two rows of four broadcasts each, the vectors
# of B and C fit AVX2's 16 registers (three or four rows spill, and run slower than two passes).
# Transposed B: four rows of A by two rows of Bt are eight accumulators.
ROWS = 2
ROWS_BT = 4
# Rows of B one pass over a strip of C takes: each vector of C loaded and stored once per four.
_B_ROWS = 4
# Width of a strip of C, in bytes per row: ROWS rows of it stay in L1 (32 KiB) with room to
# spare, and each row of B is read 4 KiB (a page, what prefetchers follow) at a time.
_STRIP_BYTES = 4096


def gemv_name(types: tuple[str, str, str], transposed: bool) -> str:
    return "weir_gemv{}_{}_{}_{}".format("_bt" if transposed else "", *types)


class GemvEmitter(Emitter):
    """Writes `weir_gemv_<types>` (B row-major) or `weir_gemv_bt_<types>` (B transposed)."""

    def __init__(self, module: ir.Module, cpu: CpuTarget, lhs: str, rhs: str, acc: str):
        super().__init__(module, cpu, lhs, rhs, acc)
        self.strip = max(self.blk.lanes, _STRIP_BYTES // self.element_bytes)

    def _driver(self, transposed: bool) -> ir.Function:
        """The exported function: rows in groups (ROWS, ROWS_BT), the last by its own count."""
        pointers = [_MEMORY_TYPES[kind].as_pointer() for kind in (self.lhs, self.rhs, self.acc)]
        fn = self._function(gemv_name((self.lhs, self.rhs, self.acc), transposed),
                            [_I64, _I64, _I64, pointers[0], _I64, pointers[1], _I64,
                             pointers[2], _I64], (3, 5, 7))
        m, n, k_extent, a, lda, bsrc, ldb, c, ldc = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        group = ROWS_BT if transposed else ROWS
        kernels = {rows: (self._bt_rows(rows) if transposed else self._rows(rows))
                   for rows in range(1, group + 1)}
        with _loop(b, _i64(0), m, group, "i") as i:
            rows = _min(b, b.sub(m, i), _i64(group))
            args = [n, k_extent, _at(b, a, _mul(b, i, lda)), lda, bsrc, ldb,
                    _at(b, c, _mul(b, i, ldc)), ldc]
            done = fn.append_basic_block("rows.done")
            switch = b.switch(rows, done)
            for count, kernel in kernels.items():
                block = fn.append_basic_block(f"rows{count}")
                switch.add_case(_i64(count), block)
                b.position_at_end(block)
                b.call(kernel, args)
                b.branch(done)
            b.position_at_end(done)
        b.ret_void()
        return fn

    def _kernel(self, name: str) -> tuple[ir.Function, ir.IRBuilder]:
        pointers = [_MEMORY_TYPES[kind].as_pointer() for kind in (self.lhs, self.rhs, self.acc)]
        fn = self._function(name, [_I64, _I64, pointers[0], _I64, pointers[1], _I64, pointers[2],
                                   _I64], (2, 4, 6))
        fn.attributes.add("noinline")  # one copy per row count, compiled once
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    def _broadcast(self, b: ir.IRBuilder, pointer: ir.Value) -> ir.Value:
        """One element of A, widened to the accumulator type, in every lane."""
        element = b.load(pointer, align=_BITS[self.lhs] // 8)
        return _widen(b, _splat(b, element, self.blk.lanes), self.lhs, self.acc,
                      self.native_half)

    # -- B row-major --------------------------------------------------------------------------

    def _rows(self, rows: int) -> ir.Function:
        """`C[rows x n] += A[rows x k] * B[k x n]`, strip by strip of C."""
        fn, b = self._kernel(f"{self.name}.gemv_rows{rows}")
        n, k_extent, a, lda, bsrc, ldb, c, ldc = fn.args
        lanes = self.blk.lanes
        grouped = b.sub(k_extent, b.srem(k_extent, _i64(_B_ROWS)))
        with _loop(b, _i64(0), n, self.strip, "j") as j0:
            width = _min(b, b.sub(n, j0), _i64(self.strip))
            whole = b.sub(width, b.srem(width, _i64(lanes)))
            c_rows = [_at(b, c, b.add(_mul(b, ldc, r), j0)) for r in range(rows)]
            a_rows = [_at(b, a, _mul(b, lda, r)) for r in range(rows)]
            for first, last, count in ((_i64(0), grouped, _B_ROWS), (grouped, k_extent, 1)):
                with _loop(b, first, last, count, "k") as k:
                    xs = [[self._broadcast(b, _at(b, row, b.add(k, _i64(u)))) for u in range(count)]
                          for row in a_rows]
                    b_rows = [_at(b, bsrc, b.add(_mul(b, b.add(k, _i64(u)), ldb), j0))
                              for u in range(count)]
                    with _loop(b, _i64(0), whole, lanes, "v") as v:
                        self._strip_step(b, xs, b_rows, c_rows, v, None)
                    with b.if_then(b.icmp_signed("<", whole, width)):
                        mask = self._lanes_below(b, b.sub(width, whole), 0)
                        self._strip_step(b, xs, b_rows, c_rows, whole, mask)
        b.ret_void()
        return fn

    def _strip_step(self, b: ir.IRBuilder, xs: list[list[ir.Value]], b_rows: list[ir.Value],
                    c_rows: list[ir.Value], v: ir.Value, mask: ir.Value | None) -> None:
        """One vector of columns: each row of C gains its elements of A times the rows of B, in
        k order."""
        align = _BITS[self.rhs] // 8
        ys = [_widen(b, self._load_vector(b, _at(b, row, v), self.rhs, align) if mask is None
                     else self._masked_load(b, _at(b, row, v), mask, self.rhs),
                     self.rhs, self.acc, self.native_half) for row in b_rows]
        for x_row, c_row in zip(xs, c_rows):
            target = _at(b, c_row, v)
            total = self._load_vector(b, target, self.acc, self.element_bytes) \
                if mask is None else self._masked_load(b, target, mask, self.acc)
            for x, y in zip(x_row, ys):
                total = self._multiply_add(b, x, y, total)
            if mask is None:
                self._store_vector(b, total, target, self.element_bytes)
            else:
                self._masked_store(b, total, target, mask)

    # -- B transposed -------------------------------------------------------------------------

    def _bt_rows(self, rows: int) -> ir.Function:
        """`C[rows x n] += A[rows x k] * Bt[n x k]^T`: blocks of rows x `columns` dot products
        (half the register file of accumulators), then the last columns one at a time."""
        fn, b = self._kernel(f"{self.name}.gemv_bt_rows{rows}")
        n, k_extent, a, lda, bt, ldbt, c, ldc = fn.args
        columns = max(1, self._dot_sums() // rows)
        a_rows = [_at(b, a, _mul(b, lda, r)) for r in range(rows)]
        grouped = b.sub(n, b.srem(n, _i64(columns)))
        for first, last, count in ((_i64(0), grouped, columns), (grouped, n, 1)):
            with _loop(b, first, last, count, "j") as j:
                bt_rows = [_at(b, bt, _mul(b, b.add(j, _i64(s)), ldbt)) for s in range(count)]
                sums = self._dots(b, a_rows, bt_rows, k_extent)
                for r in range(rows):
                    for s in range(count):
                        target = _at(b, c, b.add(_mul(b, ldc, r), b.add(j, _i64(s))))
                        self._add_into(b, sums[r * count + s], target)
        b.ret_void()
        return fn

    def _dots(self, b: ir.IRBuilder, a_rows: list[ir.Value], bt_rows: list[ir.Value],
              depth: ir.Value) -> list[ir.Value]:
        """The dot products of every row of A with every row of Bt over `depth` (row-major:
        A row r, Bt row s at r * len(bt_rows) + s), as scalars."""
        lanes = self.blk.lanes
        count = len(a_rows) * len(bt_rows)
        whole = b.sub(depth, b.srem(depth, _i64(lanes)))
        zero = ir.Constant(self.vector, None)
        entry = b.block
        loop = b.append_basic_block("k")
        tail = b.append_basic_block("k.tail")
        b.cbranch(b.icmp_signed("<", _i64(0), whole), loop, tail)
        b.position_at_end(loop)
        k = b.phi(_I64, "k")
        k.add_incoming(_i64(0), entry)
        accumulators = [b.phi(self.vector) for _ in range(count)]
        sums = self._dot_products_step(b, a_rows, bt_rows, k, accumulators, None)
        k_next = b.add(k, _i64(lanes), flags=("nsw",))
        k.add_incoming(k_next, loop)
        for phi, value in zip(accumulators, sums):
            phi.add_incoming(zero, entry)
            phi.add_incoming(value, loop)
        b.cbranch(b.icmp_signed("<", k_next, whole), loop, tail)

        # The last partial vector of k, masked (no lane on when depth is a multiple).
        b.position_at_end(tail)
        totals = [b.phi(self.vector) for _ in range(count)]
        for phi, value in zip(totals, sums):
            phi.add_incoming(zero, entry)
            phi.add_incoming(value, loop)
        mask = self._lanes_below(b, b.sub(depth, whole), 0)
        totals = self._dot_products_step(b, a_rows, bt_rows, whole, totals, mask)
        padded = totals + [zero] * (-len(totals) % lanes)
        scalars = []
        for g in range(0, len(padded), lanes):
            lane_sums = self._lane_sums(b, padded[g:g + lanes])
            scalars += [b.extract_element(lane_sums, ir.Constant(_I32, i)) for i in range(lanes)]
        return scalars[:count]

    def _dot_products_step(self, b: ir.IRBuilder, a_rows: list[ir.Value],
                           bt_rows: list[ir.Value], k: ir.Value, accumulators: list[ir.Value],
                           mask: ir.Value | None) -> list[ir.Value]:
        """One vector of k: accumulator r * len(bt_rows) + s gains A[r, k:] * Bt[s, k:]."""
        def load(row: ir.Value, kind: str) -> ir.Value:
            at = _at(b, row, k)
            value = self._load_vector(b, at, kind, _BITS[kind] // 8) if mask is None \
                else self._masked_load(b, at, mask, kind)
            return _widen(b, value, kind, self.acc, self.native_half)
        xs = [load(row, self.lhs) for row in a_rows]
        ys = [load(row, self.rhs) for row in bt_rows]
        return [self._multiply_add(b, x, y, accumulators[r * len(ys) + s])
                for r, x in enumerate(xs) for s, y in enumerate(ys)]


def get_gemv(module: ir.Module, cpu: CpuTarget, lhs: str, rhs: str, acc: str,
             transposed: bool) -> ir.Function:
    """`void @weir_gemv[_bt]_<lhs>_<rhs>_<acc>(i64 M, i64 N, i64 K, lhs* A, i64 lda, rhs* B,
    i64 ldb, acc* C, i64 ldc)`: C[m, n] += sum_k A[m, k] * B[k, n], where B (row-major, row
    stride ldb) or, `transposed`, Bt = B^T (n x k, row stride ldb) is read in place."""
    _check_kinds(lhs, rhs, acc)
    existing = module.globals.get(gemv_name((lhs, rhs, acc), transposed))
    if isinstance(existing, ir.Function):
        return existing
    return GemvEmitter(module, cpu, lhs, rhs, acc)._driver(transposed)

"""The dot-product kernels of the llvm-cpu GEMM microkernel (gemm.py): products with fewer
columns than a register tile (matrix-vector products), where vectors run along K instead."""

from __future__ import annotations

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.gemm_base import (
    _at,
    _BITS,
    _ceil_div,
    _i64,
    _I32,
    _I64,
    _loop,
    _MEMORY_TYPES,
    _min,
    _mul,
    _widen,
    EmitterBase,
)


class DotEmitter(EmitterBase):
    """Writes the dot-product kernels of one microkernel and the driver's narrow case."""

    # -- narrow products --------------------------------------------------------------------

    def _dot_columns(self) -> tuple[int, ...]:
        """Column counts of the dot-product kernels, widest first: up to eight (four on
        16-register targets) columns of B in registers, never more than a vector's lanes."""
        widest = min(8 if self.cpu.vector_bits == 512 else 4, self.blk.lanes)
        return tuple(1 << i for i in range(widest.bit_length() - 1, -1, -1))

    def _dot_sums(self) -> int:
        """Accumulators of a dot-product kernel: rows x columns, half the register file."""
        return 16 if self.cpu.vector_bits == 512 else 8

    def dot(self, columns: int) -> ir.Function:
        """`C[m x columns] += A[m x k] * B[k x columns]` with vectors along k, from Bt as
        `pack_bt` lays it out (`bt` at the group's first column, `band` elements between one
        vector of k and the next). A is read in place, each row from start to end, as no part
        of it is used twice. A block of rows x columns of C is a set of vector accumulators,
        summed across their lanes at the end."""
        existing = self._defined(f"{self.name}.dot{columns}")
        if existing is not None:
            return existing
        lanes = self.blk.lanes
        rows = self._dot_sums() // columns
        fn = self._function(f"{self.name}.dot{columns}",
                            [_I64, _I64, _MEMORY_TYPES[self.lhs].as_pointer(), _I64,
                             self.scalar.as_pointer(), _I64, self.scalar.as_pointer(), _I64],
                            (2, 4, 6))
        fn.attributes.add("noinline")
        m, k_extent, a, lda, bt, band, c, ldc = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        # Depth in chunks whose columns of Bt stay in L1 (16 KiB) while every row of A passes.
        chunk = 16 * 1024 // self.element_bytes // columns
        with _loop(b, _i64(0), k_extent, chunk, "kk") as k0:
            depth = _min(b, b.sub(k_extent, k0), _i64(chunk))
            bt_chunk = _at(b, bt, _mul(b, b.sdiv(k0, _i64(lanes)), band))
            with _loop(b, _i64(0), m, rows, "r") as r0:
                # Rows past m read the last row again: cheap, and never stored.
                a_rows = [_at(b, a, b.add(_mul(b, _min(b, b.add(r0, _i64(r)), b.sub(m, _i64(1))),
                                               lda), k0)) for r in range(rows)]
                sums = self._dot_rows(b, a_rows, depth, bt_chunk, band, columns)
                for r in range(rows):
                    first = r * columns
                    vector = sums[first // lanes]
                    offset = first % lanes
                    row_sums = b.shuffle_vector(vector, vector, ir.Constant(
                        ir.VectorType(_I32, columns), list(range(offset, offset + columns))))
                    target = b.bitcast(_at(b, c, _mul(b, b.add(r0, _i64(r)), ldc)),
                                       row_sums.type.as_pointer())
                    if r:
                        with b.if_then(b.icmp_signed("<", b.add(r0, _i64(r)), m)):
                            self._add_into(b, row_sums, target)
                    else:
                        self._add_into(b, row_sums, target)
        b.ret_void()
        return fn

    def _dot_rows(self, b: ir.IRBuilder, a_rows: list[ir.Value], depth: ir.Value, bt: ir.Value,
                  band: ir.Value, columns: int) -> list[ir.Value]:
        """The dot products of `a_rows` with `columns` rows of Bt over `depth`, as vectors of
        lane sums (row-major: row r, column s in lane r*columns + s)."""
        lanes = self.blk.lanes
        count = len(a_rows) * columns
        whole = b.sub(depth, b.srem(depth, _i64(lanes)))
        entry = b.block
        loop = b.append_basic_block("k")
        tail = b.append_basic_block("k.tail")
        b.cbranch(b.icmp_signed("<", _i64(0), whole), loop, tail)
        b.position_at_end(loop)
        k = b.phi(_I64, "k")
        k.add_incoming(_i64(0), entry)
        bt_k = b.phi(bt.type, "bt")
        bt_k.add_incoming(bt, entry)
        accumulators = [b.phi(self.vector) for _ in range(count)]
        sums = self._dot_step(b, a_rows, k, bt_k, columns, accumulators, None)
        k_next = b.add(k, _i64(lanes), flags=("nsw",))
        k.add_incoming(k_next, loop)
        bt_k.add_incoming(_at(b, bt_k, band), loop)
        for phi, value in zip(accumulators, sums):
            phi.add_incoming(ir.Constant(self.vector, None), entry)
            phi.add_incoming(value, loop)
        b.cbranch(b.icmp_signed("<", k_next, whole), loop, tail)

        # The last partial vector of k, masked (no lane on when depth is a multiple).
        b.position_at_end(tail)
        totals = [b.phi(self.vector) for _ in range(count)]
        for phi, value in zip(totals, sums):
            phi.add_incoming(ir.Constant(self.vector, None), entry)
            phi.add_incoming(value, loop)
        mask = self._lanes_below(b, b.sub(depth, whole), 0)
        tail_band = _at(b, bt, _mul(b, b.sdiv(whole, _i64(lanes)), band))
        totals = self._dot_step(b, a_rows, whole, tail_band, columns, totals, mask)
        return [self._lane_sums(b, totals[g:g + lanes]) for g in range(0, count, lanes)]

    def _dot_step(self, b: ir.IRBuilder, a_rows: list[ir.Value], k: ir.Value, bt: ir.Value,
                  columns: int, accumulators: list[ir.Value],
                  mask: ir.Value | None) -> list[ir.Value]:
        """One vector of k: accumulator r*columns + s gains A[r, k:] * Bt[s, k:]."""
        lanes = self.blk.lanes
        align = _BITS[self.lhs] // 8
        a_vectors = [_widen(b, self._load_vector(b, _at(b, row, k), self.lhs, align)
                            if mask is None else
                            self._masked_load(b, _at(b, row, k), mask, self.lhs),
                            self.lhs, self.acc, self.native_half) for row in a_rows]
        # Masked, Bt too: past the last vector of k may be past the end of its buffer.
        bt_vectors = [self._load_vector(b, _at(b, bt, s * lanes), self.acc, self.vector_align)
                      if mask is None else self._masked_load(b, _at(b, bt, s * lanes), mask,
                                                             self.acc)
                      for s in range(columns)]
        return [self._multiply_add(b, x, y, accumulators[r * columns + s])
                for r, x in enumerate(a_vectors) for s, y in enumerate(bt_vectors)]

    def _lane_sums(self, b: ir.IRBuilder, vectors: list[ir.Value]) -> ir.Value:
        """The lane sums of `lanes` vectors, as one vector (lane i: the sum of vectors[i]). Pairs
        of vectors are folded together level by level, each vector of a level holding twice as
        many sums, each half as wide: 30 shuffles and 15 adds for 16 vectors of 16, where a
        reduction of each vector would take 64 of each."""
        lanes = self.blk.lanes
        count, width = 1, lanes  # sums per vector, lanes per sum
        while width > 1:
            half = width // 2
            low = [j * width + i for j in range(count) for i in range(half)]
            low = low + [lanes + index for index in low]
            high = [index + half for index in low]
            vectors = [self._add(b, *(b.shuffle_vector(x, y, ir.Constant(
                ir.VectorType(_I32, lanes), mask)) for mask in (low, high)))
                for x, y in zip(vectors[0::2], vectors[1::2])]
            count, width = count * 2, half
        (result,) = vectors
        return result

    def _add_into(self, b: ir.IRBuilder, values: ir.Value, target: ir.Value) -> None:
        old = b.load(target, align=self.element_bytes)
        b.store(self._add(b, old, values), target, align=self.element_bytes)

    def pack_bt(self) -> ir.Function:
        """B[k x n] transposed, in bands of one vector of k: row s of band j (k = j*lanes to
        (j + 1)*lanes) at dst + j*band + s*lanes, so that a dot-product kernel finds the
        columns it needs for one step of k side by side. Rows run to n rounded up to whole
        vectors, k to whole vectors too, zero-padded. Blocks of lanes x lanes are transposed in
        registers; gathers would read simpler, but are microcoded and slow on CPUs that
        mitigate Gather Data Sampling."""
        existing = self._defined(f"{self.name}.pack_bt")
        if existing is not None:
            return existing
        lanes = self.blk.lanes
        fn = self._function(f"{self.name}.pack_bt",
                            [_I64, _I64, _MEMORY_TYPES[self.rhs].as_pointer(), _I64,
                             self.scalar.as_pointer(), _I64], (2, 4))
        fn.attributes.add("noinline")
        k_extent, n, src, ld, dst, band = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        none = ir.Constant(ir.VectorType(ir.IntType(1), lanes), None)
        with _loop(b, _i64(0), k_extent, lanes, "k") as k:
            band_start = _at(b, dst, _mul(b, b.sdiv(k, _i64(lanes)), band))
            with _loop(b, _i64(0), n, lanes, "s") as s:
                columns = self._lanes_below(b, b.sub(n, s), 0)
                rows = []
                for r in range(lanes):
                    row = b.add(k, _i64(r))
                    mask = b.select(b.icmp_signed("<", row, k_extent), columns, none)
                    value = self._masked_load(b, _at(b, src, b.add(_mul(b, row, ld), s)), mask,
                                              self.rhs)
                    rows.append(_widen(b, value, self.rhs, self.acc, self.native_half))
                block = _at(b, band_start, _mul(b, s, lanes))
                for r, value in enumerate(self._transpose(b, rows)):
                    self._store_vector(b, value, _at(b, block, r * lanes), self.vector_align)
        b.ret_void()
        return fn

    def _transpose(self, b: ir.IRBuilder, rows: list[ir.Value]) -> list[ir.Value]:
        """Transpose lanes vectors of lanes elements: at each stage, rows i and i + h swap
        the h x h blocks off their diagonal."""
        lanes = len(rows)
        half = lanes // 2
        while half:
            for i in range(lanes):
                if i & half:
                    continue
                low, high = rows[i], rows[i + half]
                keep = [j if not j & half else lanes + j - half for j in range(lanes)]
                swap = [j + half if not j & half else lanes + j for j in range(lanes)]
                rows[i], rows[i + half] = (
                    b.shuffle_vector(low, high, ir.Constant(ir.VectorType(_I32, lanes), mask))
                    for mask in (keep, swap))
            half //= 2
        return rows

    def _dot_products(self, b: ir.IRBuilder, m: ir.Value, n: ir.Value, k_extent: ir.Value,
                      a: ir.Value, lda: ir.Value, bsrc: ir.Value, ldb: ir.Value, c: ir.Value,
                      ldc: ir.Value) -> None:
        """N narrower than a register tile (a matrix-vector product, a classifier's last
        layer): vectors along N would be mostly padding, and packing A would cost as much as
        the arithmetic, so each C[m, n] is a dot product along k instead. The columns are
        taken in groups of the kernels' widths: 10 = 8 + 2, 31 = 8 + 8 + 8 + 4 + 2 + 1."""
        lanes = self.blk.lanes
        band = _mul(b, _mul(b, _ceil_div(b, n, lanes), lanes), lanes)
        raw, bt = self._scratch(b, _mul(b, _ceil_div(b, k_extent, lanes), band))
        b.call(self.pack_bt(), [k_extent, n, bsrc, ldb, bt, band])
        widths = self._dot_columns()
        kernels = {columns: self.dot(columns) for columns in widths}

        def call(columns: int, first: ir.Value) -> None:
            b.call(kernels[columns], [m, k_extent, a, lda, _at(b, bt, _mul(b, first, lanes)),
                                      band, _at(b, c, first), ldc])

        widest = widths[0]
        grouped = b.sub(n, b.srem(n, _i64(widest)))
        with _loop(b, _i64(0), grouped, widest, "s") as first:
            call(widest, first)
        first = grouped
        for columns in widths[1:]:
            with b.if_then(b.icmp_signed("!=", b.and_(n, _i64(columns)), _i64(0))):
                call(columns, first)
            first = b.add(first, b.and_(n, _i64(columns)))
        self._release(b, raw)

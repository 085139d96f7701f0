"""The register tile of the llvm-cpu GEMM microkernel (gemm.py) and the packing of its
operands: the mr x NR block of C that lives in vector registers through a K loop, over panels of
A and B packed into the layouts it reads (or A read in place)."""

from __future__ import annotations

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.epilogue_program import (
    apply_program,
    at_offset,
    EpilogueProgram,
)
from weir.compiler.targets.llvm_cpu.gemm_base import (
    _at,
    _BITS,
    _i64,
    _I64,
    _LINE_BYTES,
    _loop,
    _MEMORY_TYPES,
    _mul,
    _splat,
    _widen,
    EmitterBase,
    Finish,
)
from weir.compiler.targets.llvm_cpu.scalars import prefetch_l2


class TileEmitter(EmitterBase):
    """Writes the register tiles and the packing functions of one microkernel."""

    # -- the register tile --------------------------------------------------------------------

    def tile(self, rows: int, from_zero: bool = False, prepacked: bool = False,
             from_row: bool = False, prefetch: bool = False,
             program: EpilogueProgram | None = None, strided: bool = False) -> ir.Function:
        """`C[valid x width] += A[valid x kc] * B[kc x NR]` from packed panels (row i of A at
        a + i*a_stride, row k of B at b + k*NR), for kc >= 1 and valid > rows - mr/3. C is
        loaded into the accumulators before the K loop and stored after it, so each element
        is `c = fma(a, b, c)` in k order, rounding at each step, across depth blocks too: the
        sum IREE computes, where a fresh zero partial added to C at the end would round
        differently. The next micro-panel's C is prefetched into L2 meanwhile, so that its
        misses overlap this tile's arithmetic (into L1 it would not survive the stream of B).
        `from_zero`: C's old contents are not read, the accumulators start at +0 (what a fill
        with zero would have put there); `from_row`: they start at the NR values of a row (a
        last argument) in every row of the tile (what a broadcast bias would have put there).
        `prepacked`: B's panels are a binding's memory, which is aligned to its element only,
        so its vectors are loaded unaligned. `prefetch`: a last argument points at the next
        micro-panel of B, whose lines are prefetched into L2 as this tile's k advances (the
        first row panel streams the weights from memory; see `_blocked`). `program`: the tile
        is the last depth block's, and stores `program` of each sum (f32), with its inputs read
        at C's element plus each of the last arguments (byte offsets). `strided`: A is read
        in place, row i at a + i*lda, lda the very last argument, valid = rows (`_blocked`)."""
        lanes, vectors, nr = self.blk.lanes, self.blk.nr_vectors, self.blk.nr
        start = ".from_row" if from_row else ".from_zero" if from_zero else ""
        name = f"{self.name}.tile{rows}{start}" \
               f"{'.prepacked' if prepacked else ''}{'.prefetch' if prefetch else ''}" \
               f"{'' if program is None else '.e' + program.key}{'.strided' if strided else ''}"
        b_align = self.element_bytes if prepacked else self.vector_align
        existing = self._defined(name)
        if existing is not None:
            return existing
        pointer = self.scalar.as_pointer()
        inputs = 0 if program is None else program.inputs
        fn = self._function(name, [_I64, pointer, pointer, pointer, _I64, _I64, _I64] +
                            ([pointer] if from_row else []) + ([pointer] if prefetch else []) +
                            [_I64] * inputs + ([_I64] if strided else []), (1, 2, 3))
        fn.attributes.add("noinline")
        kc, a, bp, c, ldc, valid, width = fn.args[:7]
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        c_rows = [_at(b, c, _mul(b, ldc, i)) for i in range(rows)]
        if strided:
            # Rows lda apart, each start hidden from LLVM's strength reduction: left to it, it
            # chains them (row i + 1 = row i + lda), and the scheduler then hoists both steps'
            # broadcasts ahead of their multiply-adds, spilling accumulators (half the speed).
            # Every row is valid: the driver packs a panel with padding rows instead.
            opaque = ir.InlineAsm(ir.FunctionType(_I64, [_I64]), "", "=r,0")
            a_rows = [a] + [_at(b, a, b.call(opaque, [_mul(b, fn.args[-1], i)]))
                            for i in range(1, rows)]
        else:
            a_rows = [_at(b, a, i * self.a_stride) for i in range(rows)]
        for c_row in c_rows:
            for line in range(0, nr * self.element_bytes, _LINE_BYTES):
                prefetch_l2(b, _at(b, c_row, nr + line // self.element_bytes))
        zero = self._load_row(b, rows, width, fn.args[7]) if from_row else \
            [ir.Constant(self.vector, None)] * (rows * vectors) if from_zero else \
            self._load_c(b, rows, valid, width, c_rows)
        # Two steps of k per iteration, after one on its own when kc is odd: the loop's own
        # instructions would otherwise take a tenth of what the front end can issue.
        entry = b.block
        with b.if_then(b.trunc(kc, ir.IntType(1))):
            first_step = self._tile_step(b, rows, a_rows, bp, _i64(0), zero, b_align)
            odd = b.block
        start = b.phi(_I64, "k.start")
        start.add_incoming(_i64(0), entry)
        start.add_incoming(_i64(1), odd)
        initial = []
        for none, value in zip(zero, first_step):
            phi = b.phi(self.vector)
            phi.add_incoming(none, entry)
            phi.add_incoming(value, odd)
            initial.append(phi)
        head = b.block
        loop = b.append_basic_block("k")
        after = b.append_basic_block("k.done")
        b.cbranch(b.icmp_signed("<", start, kc), loop, after)

        b.position_at_end(loop)
        k = b.phi(_I64, "k")
        k.add_incoming(start, head)
        accumulators = [b.phi(self.vector) for _ in initial]
        stepped = self._tile_step(b, rows, a_rows, bp, k, accumulators, b_align)
        stepped = self._tile_step(b, rows, a_rows, bp, b.add(k, _i64(1), flags=("nsw",)),
                                  stepped, b_align)
        if prefetch:  # the next panel's two rows of k that these steps' rows stand for
            ahead = _at(b, fn.args[8 if from_row else 7], _mul(b, k, nr))
            for line in range(0, 2 * nr * self.element_bytes, _LINE_BYTES):
                prefetch_l2(b, _at(b, ahead, line // self.element_bytes))
        k_next = b.add(k, _i64(2), flags=("nsw",))
        k.add_incoming(k_next, loop)
        for phi, start_value, value in zip(accumulators, initial, stepped):
            phi.add_incoming(start_value, head)
            phi.add_incoming(value, loop)
        b.cbranch(b.icmp_signed("<", k_next, kc), loop, after)

        b.position_at_end(after)
        final = []
        for start_value, value in zip(initial, stepped):
            phi = b.phi(self.vector)
            phi.add_incoming(start_value, head)
            phi.add_incoming(value, loop)
            final.append(phi)
        results = [final[i * vectors:(i + 1) * vectors] for i in range(rows)]
        program_args = list(fn.args[len(fn.args) - inputs - strided:len(fn.args) - strided])
        finish = None if program is None else self._finisher(program, program_args)
        with b.if_else(b.icmp_signed("==", width, _i64(nr))) as (whole, edge):
            with whole:
                self._update_c(b, rows, valid, c_rows, results, None, finish)
            with edge:
                masks = [self._lanes_below(b, width, j * lanes) for j in range(vectors)]
                self._update_c(b, rows, valid, c_rows, results, masks, finish)
        b.ret_void()
        return fn

    def _tile_step(self, b: ir.IRBuilder, rows: int, a_rows: list[ir.Value], bp: ir.Value,
                   k: ir.Value, accumulators: list[ir.Value], b_align: int) -> list[ir.Value]:
        """One step of k: accumulator i*vectors + j gains A[i, k] * B[k, j-th vector]."""
        lanes, vectors = self.blk.lanes, self.blk.nr_vectors
        b_row = _at(b, bp, _mul(b, k, self.blk.nr))
        b_vectors = [self._load_vector(b, _at(b, b_row, j * lanes), self.acc, b_align)
                     for j in range(vectors)]
        results = []
        for i in range(rows):
            element = b.load(_at(b, a_rows[i], k), align=self.element_bytes)
            broadcast = _splat(b, element, lanes)
            results += [self._multiply_add(b, broadcast, y, accumulators[i * vectors + j])
                        for j, y in enumerate(b_vectors)]
        return results

    def _load_row(self, b: ir.IRBuilder, rows: int, width: ir.Value,
                  row: ir.Value) -> list[ir.Value]:
        """Accumulators that start from `row`'s first `width` values (+0 past them, which are
        never stored), the same in every row of the tile."""
        lanes, vectors = self.blk.lanes, self.blk.nr_vectors
        values = [self._masked_load(b, _at(b, row, j * lanes), self._lanes_below(
            b, width, j * lanes), self.acc) for j in range(vectors)]
        return values * rows

    def _load_c(self, b: ir.IRBuilder, rows: int, valid: ir.Value, width: ir.Value,
                c_rows: list[ir.Value]) -> list[ir.Value]:
        """The tile's C as accumulators: masked loads, zeros in the padding rows and columns
        (never stored), and never a touch past the valid part, which may end an allocation."""
        lanes, vectors = self.blk.lanes, self.blk.nr_vectors
        none = ir.Constant(ir.VectorType(ir.IntType(1), lanes), None)
        masks = [self._lanes_below(b, width, j * lanes) for j in range(vectors)]
        always = rows - self.blk.mr // 3 + 1
        values = []
        for i, c_row in enumerate(c_rows):
            live = None if i < always else b.icmp_signed("<", _i64(i), valid)
            for j, mask in enumerate(masks):
                row_mask = mask if live is None else b.select(live, mask, none)
                values.append(self._masked_load(b, _at(b, c_row, j * lanes), row_mask,
                                                self.acc))
        return values

    def _update_c(self, b: ir.IRBuilder, rows: int, valid: ir.Value, c_rows: list[ir.Value],
                  results: list[list[ir.Value]], masks: list[ir.Value] | None,
                  finish: Finish | None = None) -> None:
        """C = the tile (which started from C), over the valid rows (the others are padding
        of the A panel) and, with masks, over the valid columns only; `finish` gives what is
        stored of each vector instead of the vector itself."""
        always = rows - self.blk.mr // 3 + 1
        for i, (c_row, values) in enumerate(zip(c_rows, results)):
            if i < always:
                self._update_row(b, c_row, values, masks, finish)
            else:
                with b.if_then(b.icmp_signed("<", _i64(i), valid)):
                    self._update_row(b, c_row, values, masks, finish)

    def _finisher(self, program: EpilogueProgram, offsets: list[ir.Value]) -> Finish:
        """What stores `program` of a vector of C, whose inputs lie `offsets` bytes from it."""
        def finish(b: ir.IRBuilder, value: ir.Value, target: ir.Value,
                   mask: ir.Value | None) -> ir.Value:
            inputs = []
            for offset in offsets:
                at = at_offset(b, target, offset)
                inputs.append(self._load_vector(b, at, self.acc, self.element_bytes)
                              if mask is None else self._masked_load(b, at, mask, self.acc))
            return apply_program(b, value, program, inputs)
        return finish

    def _update_row(self, b: ir.IRBuilder, c_row: ir.Value, values: list[ir.Value],
                    masks: list[ir.Value] | None, finish: Finish | None = None) -> None:
        for j, value in enumerate(values):
            target = _at(b, c_row, j * self.blk.lanes)
            if finish is not None:
                value = finish(b, value, target, None if masks is None else masks[j])
            if masks is None:
                self._store_vector(b, value, target, self.element_bytes)
            else:
                self._masked_store(b, value, target, masks[j])

    # -- packing ------------------------------------------------------------------------------

    def _copy_row(self, b: ir.IRBuilder, src: ir.Value, count: ir.Value, dst: ir.Value) -> None:
        """dst[0:count] = widen(src[0:count]) for a row of A: whole vectors, then one masked
        vector for the rest; dst is aligned."""
        lanes = self.blk.lanes
        whole = b.sub(count, b.srem(count, _i64(lanes)))
        with _loop(b, _i64(0), whole, lanes, "k") as k:
            value = self._load_vector(b, _at(b, src, k), self.lhs, _BITS[self.lhs] // 8)
            self._store_vector(b, _widen(b, value, self.lhs, self.acc, self.native_half),
                               _at(b, dst, k), self.vector_align)
        with b.if_then(b.icmp_signed("<", whole, count)):
            value = self._masked_load(b, _at(b, src, whole),
                                      self._lanes_below(b, b.sub(count, whole), 0), self.lhs)
            self._store_vector(b, _widen(b, value, self.lhs, self.acc, self.native_half),
                               _at(b, dst, whole), self.vector_align)

    def pack_a(self) -> ir.Function:
        """Copy rows x kc of A into rows a_stride apart, and zero the rows that pad the last
        panel to a tile size: whatever they hold reaches only accumulators that are never
        stored, but stale bits that read as subnormals would slow every step of k."""
        existing = self._defined(f"{self.name}.pack_a")
        if existing is not None:
            return existing
        fn = self._function(f"{self.name}.pack_a",
                            [_I64, _I64, _MEMORY_TYPES[self.lhs].as_pointer(), _I64,
                             self.scalar.as_pointer()], (2, 4))
        fn.attributes.add("noinline")  # kept out of the driver: its loops compile once
        rows, kc, src, ld, dst = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        with _loop(b, _i64(0), rows, 1, "i") as i:
            self._copy_row(b, _at(b, src, _mul(b, i, ld)), kc,
                           _at(b, dst, _mul(b, i, self.a_stride)))
        padding = _at(b, dst, _mul(b, rows, self.a_stride))
        with _loop(b, _i64(0), _i64(self.blk.mr // 3 * self.a_stride), self.blk.lanes, "z") as z:
            self._store_vector(b, ir.Constant(self.vector, None), _at(b, padding, z),
                               self.vector_align)
        b.ret_void()
        return fn

    def pack_b(self) -> ir.Function:
        """Copy kc x nc of B into micro-panels of NR columns (row k of panel p at
        dst + p*kc*NR + k*NR), zero-filling the columns past nc so that the tile needs no
        mask in its K loop. Source rows are read in order, which hardware prefetchers follow."""
        existing = self._defined(f"{self.name}.pack_b")
        if existing is not None:
            return existing
        lanes, vectors, nr = self.blk.lanes, self.blk.nr_vectors, self.blk.nr
        fn = self._function(f"{self.name}.pack_b",
                            [_I64, _I64, _MEMORY_TYPES[self.rhs].as_pointer(), _I64,
                             self.scalar.as_pointer()], (2, 4))
        fn.attributes.add("noinline")
        kc, nc, src, ld, dst = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        whole = b.sub(nc, b.srem(nc, _i64(nr)))
        with _loop(b, _i64(0), kc, 1, "k") as k:
            src_row = _at(b, src, _mul(b, k, ld))
            dst_row = _at(b, dst, _mul(b, k, nr))
            with _loop(b, _i64(0), whole, nr, "j") as j:
                panel = _at(b, dst_row, _mul(b, j, kc))
                for v in range(vectors):
                    value = self._load_vector(b, _at(b, src_row, b.add(j, _i64(v * lanes))),
                                              self.rhs, _BITS[self.rhs] // 8)
                    self._store_vector(b, _widen(b, value, self.rhs, self.acc, self.native_half),
                                       _at(b, panel, v * lanes), self.vector_align)
            with b.if_then(b.icmp_signed("<", whole, nc)):
                panel = _at(b, dst_row, _mul(b, whole, kc))
                rest = b.sub(nc, whole)
                for v in range(vectors):
                    value = self._masked_load(b, _at(b, src_row, b.add(whole, _i64(v * lanes))),
                                              self._lanes_below(b, rest, v * lanes), self.rhs)
                    self._store_vector(b, _widen(b, value, self.rhs, self.acc, self.native_half),
                                       _at(b, panel, v * lanes), self.vector_align)
        b.ret_void()
        return fn

"""The GEMM microkernel every contraction of the llvm-cpu target ends in (matmul, batch_matmul,
matvec, convolution as a sum of strided matmuls): `C[m, n] += sum_k A[m, k] * B[k, n]`.

The structure is the one of high-performance BLAS libraries. A block of A and a kc x nc block
of B (in micro-panels of NR columns, kept in L2) are packed, and an mr x NR tile of C lives in
vector registers through the whole K loop, so that each vector of B loaded feeds mr
multiply-adds and each broadcast element of A feeds NR / lanes of them. Packing also widens
narrow inputs (f16, bf16, i8) to the accumulator type once instead of on every use, and turns
arbitrary row strides (a 4 KiB stride maps every row to the same L1 set) into contiguous,
aligned panels; with N in one block of columns, A of the accumulator's type is read in place
instead, as each of its panels serves only a few tiles. When N is narrower than a tile
(matrix-vector products), vectors run along K instead (gemm_dot.py). The tiles and packing are
in gemm_tile.py, what the parts share in gemm_base.py; the driver and entry points here.

Everything is written against `CpuTarget.vector_bits` (and the accumulator type), so the same
code serves AVX-512, AVX2 and baseline SSE2. Scratch comes from malloc, once per call: callers
run this on worker threads, whose stacks are too small for the blocks."""

from __future__ import annotations

from collections.abc import Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.epilogue_program import EpilogueProgram
from weir.compiler.targets.llvm_cpu.gemm_base import (
    _at,
    _blocking,
    _BOOL,
    _ceil_div,
    _check_kinds,
    _i64,
    _I64,
    _loop,
    _MEMORY_TYPES,
    _min,
    _mul,
    _PREPACKED,
    gemm_epilogue_name,
    gemm_name,
    Tiles,
)
from weir.compiler.targets.llvm_cpu.gemm_dot import DotEmitter
from weir.compiler.targets.llvm_cpu.gemm_tile import TileEmitter
from weir.compiler.targets.llvm_cpu.machine import CpuTarget

__all__ = ["Emitter", "gemm_epilogue_name", "gemm_name", "get_gemm", "get_gemm_epilogue",
           "panel_columns"]


class Emitter(TileEmitter, DotEmitter):
    """Writes the functions behind one `weir_gemm_<lhs>_<rhs>_<acc>` into one module: its
    tiles and packing (gemm_tile.py), its dot-product kernels (gemm_dot.py) and here the
    driver that blocks a product for the caches and its entry points."""

    # -- the driver ---------------------------------------------------------------------------

    def gemm(self, from_zero: bool = False, prepacked: bool = False,
             from_row: bool = False) -> ir.Function:
        """The entry point: `C += A @ B`, or with `from_zero` `C = A @ B`, C's old contents
        never read (a product into a fill of zero, without the fill's pass over C and the first
        depth block's loads of it), or with `from_row` (a last argument, a row of N values)
        `C = row + A @ B`, each sum started from its column's value of the row (a product into
        a broadcast bias, without the broadcast's pass over C). All call one driver with the
        choice as an argument, so that each variant costs three small tiles of code and
        compile time, not a copy of the driver. `prepacked`: B is already in panels of NR
        columns (`panel_columns`), panel p's row k at B + p*ldb*NR + k*NR with ldb = K, as
        global-optimization's pack-matmul-weights stores constant weights; N is a multiple of
        NR."""
        pointers = [_MEMORY_TYPES[kind].as_pointer() for kind in (self.lhs, self.rhs, self.acc)]
        fn = self._function(gemm_name((self.lhs, self.rhs, self.acc), from_zero, prepacked,
                                      from_row, self.wide),
                            [_I64, _I64, _I64, pointers[0], _I64, pointers[1], _I64, pointers[2],
                             _I64] + ([pointers[2]] if from_row else []), (3, 5, 7))
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        row = fn.args[9] if from_row else ir.Constant(pointers[2], None)
        b.call(self._driver(prepacked),
               [*fn.args[:9], ir.Constant(_BOOL, from_zero or from_row), row])
        b.ret_void()
        return fn

    def gemm_epilogue(self, program: EpilogueProgram) -> ir.Function:
        """The f32 entry point over prepacked B that stores `program` of each finished sum (a
        ReLU, a residual add: the epilogue of a 1 x 1 convolution) as the last depth block's
        tiles store C, instead of a pass over C after the call: `(M, N, K, A, lda, B, ldb, C,
        ldc, i64 start, row, i64 offset...)`. `start` nonzero: C starts from `row`, or from +0
        where `row` is null (`from_row`, `from_zero`); zero: from C. Each `offset` places one of
        the program's inputs: its element for C[m, n] lies that many bytes from C[m, n]'s. K
        must be positive (a product without depth has no tile to apply the program)."""
        assert (self.lhs, self.rhs, self.acc) == ("f32", "f32", "f32")
        pointer = self.scalar.as_pointer()
        fn = self._function(gemm_epilogue_name(program, self.wide),
                            [_I64, _I64, _I64, pointer, _I64, pointer, _I64, pointer, _I64,
                             _I64, pointer] + [_I64] * program.inputs, (3, 5, 7))
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        start = b.icmp_signed("!=", fn.args[9], _i64(0))
        b.call(self._driver(True, program), [*fn.args[:9], start, *fn.args[10:]])
        b.ret_void()
        return fn

    def _driver(self, prepacked: bool, program: EpilogueProgram | None = None) -> ir.Function:
        name = f"{self.name}.driver{_PREPACKED if prepacked else ''}" + \
            ("" if program is None else f".e{program.key}")
        existing = self._defined(name)
        if existing is not None:
            return existing
        blk = self.blk
        pointers = [_MEMORY_TYPES[kind].as_pointer() for kind in (self.lhs, self.rhs, self.acc)]
        inputs = 0 if program is None else program.inputs
        fn = self._function(name,
                            [_I64, _I64, _I64, pointers[0], _I64, pointers[1], _I64, pointers[2],
                             _I64, _BOOL, pointers[2]] + [_I64] * inputs, (3, 5, 7))
        fn.attributes.add("noinline")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        *args, from_zero, row = fn.args[:11]
        offsets = list(fn.args[11:])
        m, n, k, *_, c, ldc = args
        empty = b.or_(b.icmp_signed("<=", m, _i64(0)), b.icmp_signed("<=", n, _i64(0)))
        with b.if_then(b.not_(empty)):
            with b.if_else(b.icmp_signed("<=", k, _i64(0))) as (no_depth, depth):
                with no_depth:
                    with b.if_then(from_zero):
                        self._start(b, m, n, c, ldc, row)
                with depth:
                    if prepacked:  # whole panels: never the narrow case
                        self._blocked(b, *args, from_zero, row, prepacked, program, offsets)
                    else:
                        with b.if_else(b.icmp_signed("<", n, _i64(2 * blk.lanes))) as (narrow,
                                                                                     wide):
                            with narrow:
                                with b.if_then(from_zero):  # few columns: this costs little
                                    self._start(b, m, n, c, ldc, row)
                                self._dot_products(b, *args)
                            with wide:
                                self._blocked(b, *args, from_zero, row, False)
        b.ret_void()
        return fn

    def _start(self, b: ir.IRBuilder, m: ir.Value, n: ir.Value, c: ir.Value, ldc: ir.Value,
               row: ir.Value) -> None:
        """C[m x n] = +0, or each of C's rows = `row` when it is not null."""
        given = b.icmp_unsigned("!=", b.ptrtoint(row, _I64), _i64(0))
        with b.if_else(given) as (from_row, from_zero):
            for start, source in ((from_row, row), (from_zero, None)):
                with start:
                    with _loop(b, _i64(0), m, 1, "zi") as i:
                        line = _at(b, c, _mul(b, i, ldc))
                        with _loop(b, _i64(0), n, 1, "zj") as j:
                            value = ir.Constant(self.scalar, None) if source is None else \
                                b.load(_at(b, source, j), align=self.element_bytes)
                            b.store(value, _at(b, line, j), align=self.element_bytes)

    def _blocked(self, b: ir.IRBuilder, m: ir.Value, n: ir.Value, k_extent: ir.Value,
                 a: ir.Value, lda: ir.Value, bsrc: ir.Value, ldb: ir.Value, c: ir.Value,
                 ldc: ir.Value, from_zero: ir.Value, row: ir.Value, prepacked: bool,
                 program: EpilogueProgram | None = None, offsets: list[ir.Value] | None = None
                 ) -> None:
        """Loops: row blocks of mc; depth blocks of kc (balanced, so that K = 784 runs as
        4 x 196 rather than 3 x 256 + 16), their mc x kc block of A packed; column blocks of nc,
        their kc x nc block of B packed into L2; row panels of up to mr, their panel of A in
        L1; micro-panels of NR columns of B, one register tile each (`from_zero`: tiles that
        start from zero, or from `row` when it is not null, rather than C in the first depth
        block). `prepacked`: B's panels are read where they lie, nothing of B is packed. With
        one block of columns, A of the accumulator's type is not packed either: the tiles read
        its rows in place. `program`: the last depth block's tiles store it of each sum, its
        inputs `offsets` bytes from C's elements."""
        blk = self.blk
        # Prepacked B (weights) is cold on every call: the first row panel of the first row
        # block, which reads it from memory, prefetches each next micro-panel meanwhile; the
        # panels after it find B in L2 (packed B was just written there).
        kinds = (False, True) if prepacked else (False,)

        def tile_sets(program: EpilogueProgram | None,
                      strided: bool) -> tuple[Tiles, Tiles, Tiles]:
            """The tiles that start from C, from zero and from a row (reading A in place: the
            full-height tile only)."""
            heights = (blk.mr,) if strided else blk.row_steps
            return tuple({(rows, p): self.tile(rows, zero, prepacked, from_row, p, program,
                                               strided)
                          for rows in heights for p in kinds}
                         for zero, from_row in ((False, False), (True, False), (True, True)))
        # A in one block of columns serves each row panel's few tiles and nothing else: the
        # tiles read it where it lies, as the first one's arithmetic runs, instead of after a
        # copy of the whole block to scratch and back (3136 x 256 x 64, a 1 x 1 projection:
        # 1.10x the GFLOP/s). Only A of the accumulator's type: packing also widens it. Only
        # full panels of mr rows: a shorter last one is packed on its own (its padding rows
        # would lie past A's end), which keeps the extra tiles to one height.
        layouts = (False, True) if self.lhs == self.acc else (False,)
        in_place = b.icmp_signed("<=", n, _i64(blk.nc)) if len(layouts) == 2 else \
            ir.Constant(_BOOL, 0)
        plain = {s: tile_sets(None, s) for s in layouts}
        ending = None if program is None else {s: tile_sets(program, s) for s in layouts}
        pack_a, pack_b = self.pack_a(), self.pack_b()
        given = b.icmp_unsigned("!=", b.ptrtoint(row, _I64), _i64(0))
        kc_step = _ceil_div(b, k_extent, _ceil_div(b, k_extent, blk.kc))
        # Scratch is sized for this call, so that small calls stay small. The A block has
        # room for the padding rows of its last panel.
        nc_max = _min(b, _mul(b, _ceil_div(b, n, blk.nr), blk.nr), _i64(blk.nc))
        b_elements = _i64(0) if prepacked else _mul(b, kc_step, nc_max)
        a_rows = b.add(_min(b, m, _i64(blk.mc)), _i64(blk.mr))
        raw, b_pack = self._scratch(b, b.add(b_elements, _mul(b, a_rows, self.a_stride)))
        a_pack = _at(b, b_pack, b_elements)
        with _loop(b, _i64(0), m, blk.mc, "ic") as ic:
            mc = _min(b, b.sub(m, ic), _i64(blk.mc))
            with _loop(b, _i64(0), k_extent, kc_step, "pc") as pc:
                kc = _min(b, b.sub(k_extent, pc), kc_step)
                a_block = _at(b, a, b.add(_mul(b, ic, lda), pc))
                with b.if_then(b.not_(in_place)):
                    b.call(pack_a, [mc, kc, a_block, lda, a_pack])
                with _loop(b, _i64(0), n, blk.nc, "jc") as jc:
                    nc = _min(b, b.sub(n, jc), _i64(blk.nc))
                    if not prepacked:
                        b.call(pack_b, [kc, nc, _at(b, bsrc, b.add(_mul(b, pc, ldb), jc)), ldb,
                                        b_pack])
                    c_block = _at(b, c, b.add(_mul(b, ic, ldc), jc))

                    def panel(i: ir.Value, rows: ir.Value, valid: ir.Value) -> None:
                        a_here = _at(b, a_block, _mul(b, i, lda))  # the panel's rows in A
                        whole = b.and_(in_place, b.icmp_signed("==", valid, _i64(blk.mr)))
                        with b.if_then(b.and_(in_place, b.not_(whole))):
                            b.call(pack_a, [valid, kc, a_here, lda, a_pack])
                        packed_rows = b.select(in_place, a_pack,
                                               _at(b, a_pack, _mul(b, i, self.a_stride)))
                        with _loop(b, _i64(0), nc, blk.nr, "jr") as jr:
                            width = _min(b, b.sub(nc, jr), _i64(blk.nr))
                            panel_at = _at(b, bsrc, b.add(_mul(b, b.add(jc, jr), ldb),
                                                          _mul(b, pc, blk.nr))) \
                                if prepacked else _at(b, b_pack, _mul(b, jr, kc))
                            rest = [panel_at, _at(b, c_block, b.add(_mul(b, i, ldc), jr)),
                                    ldc, valid, width]
                            first = b.and_(from_zero, b.icmp_signed("==", pc, _i64(0)))

                            def start(sets: tuple[Tiles, Tiles, Tiles], p: bool,
                                      extra: list[ir.Value], a_panel: ir.Value) -> None:
                                tiles, first_tiles, row_tiles = sets
                                args = [kc, a_panel, *rest]
                                with b.if_else(first) as (from_zero_tiles, c_tiles):
                                    with from_zero_tiles:
                                        with b.if_else(given) as (from_row, from_zero_only):
                                            with from_row:
                                                self._dispatch(b, row_tiles, rows, args + [
                                                    _at(b, row, b.add(jc, jr))] + extra, p)
                                            with from_zero_only:
                                                self._dispatch(b, first_tiles, rows,
                                                               args + extra, p)
                                    with c_tiles:
                                        self._dispatch(b, tiles, rows, args + extra, p)

                            def run_as(p: bool, extra: list[ir.Value], strided: bool) -> None:
                                a_panel, tail = (a_here, [lda]) if strided else (packed_rows, [])
                                if ending is None:
                                    start(plain[strided], p, extra + tail, a_panel)
                                    return
                                last = b.icmp_signed(">=", b.add(pc, kc), k_extent)
                                with b.if_else(last) as (ended, partial):
                                    with ended:
                                        start(ending[strided], p,
                                              extra + (offsets or []) + tail, a_panel)
                                    with partial:
                                        start(plain[strided], p, extra + tail, a_panel)

                            def run(p: bool, extra: list[ir.Value]) -> None:
                                if len(layouts) == 1:
                                    run_as(p, extra, False)
                                    return
                                with b.if_else(whole) as (direct, packed):
                                    with direct:
                                        run_as(p, extra, True)
                                    with packed:
                                        run_as(p, extra, False)
                            if not prepacked:
                                run(False, [])
                            else:
                                streaming = b.and_(b.icmp_signed("==", ic, _i64(0)),
                                                   b.icmp_signed("==", i, _i64(0)))
                                with b.if_else(streaming) as (cold, warm):
                                    with cold:
                                        run(True, [_at(b, panel_at, _mul(b, ldb, blk.nr))])
                                    with warm:
                                        run(False, [])
                    self._row_panels(b, mc, panel)
        self._release(b, raw)

    def _row_panels(self, b: ir.IRBuilder, m: ir.Value,
                    body: Callable[[ir.Value, ir.Value, ir.Value], None]) -> None:
        """Walk m rows in panels of mr, with the last 2*mr rows or fewer split into two
        panels of (a third of mr) * i rows, the last one padded: 12 + 4 rows run as 8 + 8, not
        through a 4-row tile, which has too few accumulators to hide the latency of a
        multiply-add. `body` gets the first row, the panel's rows (a tile size) and its valid
        rows."""
        mr, step = self.blk.mr, self.blk.mr // 3
        entry = b.block
        head = b.append_basic_block("ir.head")
        body_block = b.append_basic_block("ir.body")
        done = b.append_basic_block("ir.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(_I64, "ir")
        i.add_incoming(_i64(0), entry)
        b.cbranch(b.icmp_signed("<", i, m), body_block, done)
        b.position_at_end(body_block)
        left = b.sub(m, i)
        share = b.select(b.icmp_signed(">", left, _i64(mr)), _ceil_div(b, left, 2), left)
        rows = _min(b, _mul(b, _ceil_div(b, share, step), step), _i64(mr))
        valid = _min(b, rows, left)
        body(i, rows, valid)
        i.add_incoming(b.add(i, valid, flags=("nsw",)), b.block)
        b.branch(head)
        b.position_at_end(done)

    def _dispatch(self, b: ir.IRBuilder, tiles: dict[tuple[int, bool], ir.Function],
                  rows: ir.Value, args: list[ir.Value], prefetch: bool) -> None:
        fn = b.function
        joined = fn.append_basic_block("tile.done")
        chosen = {count: tile for (count, p), tile in tiles.items() if p == prefetch}
        largest = max(chosen)
        default = fn.append_basic_block(f"tile{largest}")
        switch = b.switch(rows, default)
        for count, tile in chosen.items():
            block = default if count == largest else fn.append_basic_block(f"tile{count}")
            if count != largest:
                switch.add_case(_i64(count), block)
            b.position_at_end(block)
            b.call(tile, args)
            b.branch(joined)
        b.position_at_end(joined)


def panel_columns(cpu: CpuTarget, acc: str, wide: bool = False) -> int:
    """NR, the columns of B in one packed panel for this CPU and accumulator type: the layout
    of prepacked weights (global_opt/pack_matmul_weights.py; `wide`: of the wide tiles'
    weights, pack_conv_filters.py)."""
    return _blocking(cpu, acc, wide).nr


def get_gemm(module: ir.Module, cpu: CpuTarget, lhs: str, rhs: str, acc: str,
             from_zero: bool = False, prepacked: bool = False,
             from_row: bool = False, wide: bool = False) -> ir.Function:
    """`void @weir_gemm_<lhs>_<rhs>_<acc>(i64 M, i64 N, i64 K, lhs* A, i64 lda, rhs* B,
    i64 ldb, acc* C, i64 ldc)`: C[m, n] += sum_k A[m, k] * B[k, n] over row-major operands with
    row strides in elements, on the calling thread (callers split M). `from_zero`:
    `@weir_gemm_<lhs>_<rhs>_<acc>_from_zero`, the same signature, C[m, n] = sum_k ... with the
    sum started from +0, as after a fill with zero. `from_row` (`..._from_row`): one more
    argument, `acc* row`, and C[m, n] = row[n] + sum_k ..., each sum started from the row's
    value, as after a broadcast of it. `prepacked` (`..._prepacked[_from_zero|_from_row]`):
    B in panels of `panel_columns` columns, ldb = K. `wide` (`..._wide_prepacked...`): the
    same over panels of `panel_columns(cpu, acc, True)` columns, run in wide tiles (f32 and
    prepacked only). Declared once per module, internal: each module that needs it carries its
    own copy; the variants share their helpers."""
    _check_kinds(lhs, rhs, acc)
    assert not wide or (prepacked and (lhs, rhs, acc) == ("f32", "f32", "f32"))
    existing = module.globals.get(gemm_name((lhs, rhs, acc), from_zero, prepacked, from_row,
                                            wide))
    if isinstance(existing, ir.Function):
        return existing
    return Emitter(module, cpu, lhs, rhs, acc, wide).gemm(from_zero, prepacked, from_row)


def get_gemm_epilogue(module: ir.Module, cpu: CpuTarget, program: EpilogueProgram,
                      wide: bool = False) -> ir.Function:
    """`@weir_gemm_f32_f32_f32[_wide]_prepacked_e<key>` (`Emitter.gemm_epilogue`), internal
    like `get_gemm`'s."""
    existing = module.globals.get(gemm_epilogue_name(program, wide))
    if isinstance(existing, ir.Function):
        return existing
    return Emitter(module, cpu, "f32", "f32", "f32", wide).gemm_epilogue(program)

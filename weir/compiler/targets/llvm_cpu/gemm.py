"""The GEMM microkernel every contraction of the llvm-cpu target ends in (matmul, batch_matmul,
matvec, convolution as a sum of strided matmuls): `C[m, n] += sum_k A[m, k] * B[k, n]`.

The structure is the one of high-performance BLAS libraries. A block of A and a kc x nc block
of B (in micro-panels of NR columns, kept in L2) are packed, and an mr x NR tile of C lives in
vector registers through the whole K loop, so that each vector of B loaded feeds mr
multiply-adds and each broadcast element of A feeds NR / lanes of them. Packing also widens
narrow inputs (f16, bf16, i8) to the accumulator type once instead of on every use, and turns
arbitrary row strides (a 4 KiB stride maps every row to the same L1 set) into contiguous,
aligned panels. When N is narrower than a tile (matrix-vector products), vectors run along K
instead: see `_dot_products`.

Everything is written against `CpuTarget.vector_bits` (and the accumulator type), so the same
code serves AVX-512, AVX2 and baseline SSE2. Scratch comes from malloc, once per call: callers
run this on worker threads, whose stacks are too small for the blocks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.epilogue_program import (
    apply_program,
    at_offset,
    EpilogueProgram,
)
from weir.compiler.targets.llvm_cpu.halfs import half_to_float
from weir.compiler.targets.llvm_cpu.machine import CpuTarget
from weir.compiler.targets.llvm_cpu.scalars import declared, prefetch_l2
from weir.errors import UsageError

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_BOOL = ir.IntType(1)
_VOID = ir.VoidType()
_BYTES = _I8.as_pointer()

# How each element kind is held in memory. llvmlite has no bfloat type: bf16 stays as its bits
# and is widened by hand (`_widen`).
_MEMORY_TYPES: dict[str, ir.Type] = {
    "f64": ir.DoubleType(), "f32": ir.FloatType(), "f16": ir.HalfType(), "bf16": ir.IntType(16),
    "i8": _I8, "i32": _I32,
}
_BITS = {"f64": 64, "f32": 32, "f16": 16, "bf16": 16, "i8": 8, "i32": 32}
_FLOATS = frozenset({"f64", "f32", "f16", "bf16"})
_INPUTS = frozenset({"f64", "f32", "f16", "bf16", "i8"})
_ACCUMULATORS = frozenset({"f64", "f32", "i32"})
_LINE_BYTES = 64
_PREPACKED = "_prepacked"  # the suffix of the entry points that read B's panels in place
# What a tile stores of a vector of C (`Emitter._finisher`): (builder, vector, its address in
# C, its lane mask or None) -> the vector to store.
Finish = Callable[[ir.IRBuilder, ir.Value, ir.Value, "ir.Value | None"], ir.Value]
# Register tiles by (rows, whether they prefetch B).
Tiles = dict[tuple[int, bool], ir.Function]


def gemm_name(types: tuple[str, str, str], from_zero: bool = False,
              prepacked: bool = False, from_row: bool = False) -> str:
    """The symbol of an entry point of the microkernel: defined here, declared by the entry
    objects that call it (contraction.py)."""
    return "weir_gemm_{}_{}_{}".format(*types) + (_PREPACKED if prepacked else "") + \
        ("_from_row" if from_row else "_from_zero" if from_zero else "")


def gemm_epilogue_name(program: EpilogueProgram) -> str:
    """The symbol of the f32 prepacked microkernel that stores `program` of its sums
    (`Emitter.gemm_epilogue`)."""
    return gemm_name(("f32", "f32", "f32"), prepacked=True) + "_e" + program.key


@dataclass(frozen=True)
class _Blocking:
    """Register and cache blocking for one vector width and accumulator type."""

    lanes: int  # elements per vector register
    mr: int     # rows of the largest register tile: broadcasts of A per step of k
    kc: int     # depth of a packed block
    nc: int     # columns of a packed block of B
    mc: int     # rows of a packed block of A
    nr_vectors: int = 2  # columns of a register tile, in vectors: loads of B per step of k

    @property
    def nr(self) -> int:
        return self.lanes * self.nr_vectors

    @property
    def row_steps(self) -> tuple[int, ...]:
        """The row counts tiles are made for: thirds of mr. A ragged M pads its last panel to
        the next of these (at most mr/3 - 1 wasted rows) instead of needing a tile per count."""
        return tuple(self.mr * i // 3 for i in (1, 2, 3))


def _blocking(cpu: CpuTarget, acc: str) -> _Blocking:
    """AVX-512 has 32 vector registers: a 12 x 2-vector tile holds 24 accumulators, the two
    vectors of B and a broadcast. Narrower targets have 16 registers, which fit 6 x 2. The
    mr x kc panel of A (12 KiB) stays in L1 (32 KiB) while the kc x NR micro-panels of B stream
    past it from the packed kc x nc block of B, which must stay in L2 beside the lines of C
    and A passing through: 1 KiB of depth and 1 KiB of width whatever the element size, 256
    KiB of f32, half of the smallest L2 in use (AMD Zen 2 to 4); a block of twice that, the
    whole of such an L2, is read again from L3 for every row panel. The packed block of A
    (mc rows) only needs to stay in L3."""
    element_bytes = _BITS[acc] // 8
    return _Blocking(lanes=cpu.vector_bits // 8 // element_bytes,
                     mr=12 if cpu.vector_bits == 512 else 6, kc=1024 // element_bytes,
                     nc=1024 // element_bytes, mc=512)


class _Attributes(ir.FunctionAttributes):
    """llvmlite only spells keyword attributes; the vector-width hint is a string attribute.
    Without it the x86 backend may split 512-bit vectors on CPUs tuned to prefer 256 bits."""

    _known = ir.FunctionAttributes._known | frozenset({'"min-legal-vector-width"="512"'})


def _i64(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


def _min(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", x, y), x, y)


def _mul(b: ir.IRBuilder, x: ir.Value, y: ir.Value | int) -> ir.Value:
    return b.mul(x, _i64(y) if isinstance(y, int) else y, flags=("nsw",))


def _at(b: ir.IRBuilder, pointer: ir.Value, offset: ir.Value | int) -> ir.Value:
    return b.gep(pointer, [_i64(offset) if isinstance(offset, int) else offset], inbounds=True)


def _ceil_div(b: ir.IRBuilder, x: ir.Value, y: ir.Value | int) -> ir.Value:
    divisor = _i64(y) if isinstance(y, int) else y
    return b.sdiv(b.add(x, b.sub(divisor, _i64(1))), divisor)


@contextmanager
def _loop(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, step: int | ir.Value,
          name: str) -> Iterator[ir.Value]:
    """`for (iv = start; iv < stop; iv += step)`, tested at the top: every extent may be 0."""
    entry = b.block
    head = b.append_basic_block(f"{name}.head")
    body = b.append_basic_block(f"{name}.body")
    done = b.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    iv = b.phi(_I64, name)
    iv.add_incoming(start, entry)
    b.cbranch(b.icmp_signed("<", iv, stop), body, done)
    b.position_at_end(body)
    yield iv
    iv.add_incoming(b.add(iv, _i64(step) if isinstance(step, int) else step, flags=("nsw",)),
                    b.block)
    b.branch(head)
    b.position_at_end(done)


def _vector_type(kind: str, lanes: int) -> ir.VectorType:
    return ir.VectorType(_MEMORY_TYPES[kind], lanes)


def _splat(b: ir.IRBuilder, value: ir.Value, lanes: int) -> ir.Value:
    undef = ir.Constant(ir.VectorType(value.type, lanes), ir.Undefined)
    first = b.insert_element(undef, value, ir.Constant(_I32, 0))
    return b.shuffle_vector(first, undef, ir.Constant(ir.VectorType(_I32, lanes), [0] * lanes))


def _splat_i32(value: int, lanes: int) -> ir.Constant:
    return ir.Constant(_vector_type("i32", lanes), [value] * lanes)


def _widen(b: ir.IRBuilder, value: ir.Value, src: str, dst: str, native_half: bool) -> ir.Value:
    """Convert a vector of `src` elements to the accumulator kind `dst`."""
    if src == dst:
        return value
    lanes = value.type.count
    if src == "bf16":  # the high half of an f32
        bits = b.shl(b.zext(value, _vector_type("i32", lanes)), _splat_i32(16, lanes))
        return _widen(b, b.bitcast(bits, _vector_type("f32", lanes)), "f32", dst, native_half)
    if src == "f16" and not native_half:
        return _widen(b, half_to_float(b, value), "f32", dst, native_half)
    if src in _FLOATS:
        return b.fpext(value, _vector_type(dst, lanes))
    if dst in _FLOATS:
        return b.sitofp(value, _vector_type(dst, lanes))
    return b.sext(value, _vector_type(dst, lanes))


def _check_kinds(lhs: str, rhs: str, acc: str) -> None:
    if acc not in _ACCUMULATORS:
        raise UsageError(f"gemm: accumulator type '{acc}' is not one of "
                         f"{', '.join(sorted(_ACCUMULATORS))}")
    for name, kind in (("lhs", lhs), ("rhs", rhs)):
        if kind not in _INPUTS:
            raise UsageError(f"gemm: {name} element type '{kind}' is not one of "
                             f"{', '.join(sorted(_INPUTS))}")
        if acc not in _FLOATS and kind in _FLOATS:
            raise UsageError(f"gemm: {name} element type '{kind}' cannot accumulate in '{acc}'")
        if _BITS[kind] > _BITS[acc]:
            raise UsageError(f"gemm: {name} element type '{kind}' is wider than the "
                             f"accumulator type '{acc}'")


class Emitter:
    """Writes the functions behind one `weir_gemm_<lhs>_<rhs>_<acc>` into one module."""

    def __init__(self, module: ir.Module, cpu: CpuTarget, lhs: str, rhs: str, acc: str):
        self.module = module
        self.cpu = cpu
        self.lhs, self.rhs, self.acc = lhs, rhs, acc
        self.name = gemm_name((lhs, rhs, acc))
        self.blk = _blocking(cpu, acc)
        self.scalar = _MEMORY_TYPES[acc]
        self.vector = _vector_type(acc, self.blk.lanes)
        self.element_bytes = _BITS[acc] // 8
        # Rows of a packed A block are a cache line longer than kc, so that the rows of a
        # panel do not all fall into the same L1 sets.
        self.a_stride = self.blk.kc + _LINE_BYTES // self.element_bytes
        self.vector_align = min(_LINE_BYTES, self.blk.lanes * self.element_bytes)
        self.native_half = "f16c" in cpu.required_features

    # -- declarations and vector helpers ------------------------------------------------------

    def _function(self, name: str, args: list[ir.Type], noalias: tuple[int, ...]) -> ir.Function:
        fn = ir.Function(self.module, ir.FunctionType(_VOID, args), name)
        fn.linkage = "internal"
        fn.attributes = _Attributes()
        fn.attributes.add("nounwind")
        if self.cpu.vector_bits == 512:
            fn.attributes.add('"min-legal-vector-width"="512"')
        for index in noalias:
            fn.args[index].add_attribute("noalias")
        return fn

    def _defined(self, name: str) -> ir.Function | None:
        """A helper already emitted into the module (by the other variant of the driver)."""
        existing = self.module.globals.get(name)
        return existing if isinstance(existing, ir.Function) else None

    def _declare(self, name: str, ftype: ir.FunctionType) -> ir.Function:
        fn = declared(self.module, name, ftype)
        fn.attributes.add("nounwind")
        return fn

    def _suffix(self, kind: str) -> str:
        letter = "f" if kind in _FLOATS and kind != "bf16" else "i"
        return f"v{self.blk.lanes}{letter}{_BITS[kind]}"

    def _load_vector(self, b: ir.IRBuilder, pointer: ir.Value, kind: str, align: int) -> ir.Value:
        vector = _vector_type(kind, self.blk.lanes)
        return b.load(b.bitcast(pointer, vector.as_pointer()), align=align)

    def _store_vector(self, b: ir.IRBuilder, value: ir.Value, pointer: ir.Value,
                      align: int) -> None:
        b.store(value, b.bitcast(pointer, value.type.as_pointer()), align=align)

    def _masked_load(self, b: ir.IRBuilder, pointer: ir.Value, mask: ir.Value,
                     kind: str) -> ir.Value:
        """The lanes of `mask` from memory, zeros elsewhere: edges never touch memory past an
        operand, which may be the end of an allocation."""
        vector = _vector_type(kind, self.blk.lanes)
        fn = self._declare(f"llvm.masked.load.{self._suffix(kind)}.p0",
                           ir.FunctionType(vector, [vector.as_pointer(), mask.type, vector]))
        return b.call(fn, [b.bitcast(pointer, vector.as_pointer()), mask,
                           ir.Constant(vector, None)])

    def _masked_store(self, b: ir.IRBuilder, value: ir.Value, pointer: ir.Value,
                      mask: ir.Value) -> None:
        fn = self._declare(f"llvm.masked.store.{self._suffix(self.acc)}.p0",
                           ir.FunctionType(_VOID, [value.type, value.type.as_pointer(),
                                                   mask.type]))
        b.call(fn, [value, b.bitcast(pointer, value.type.as_pointer()), mask])

    def _lanes_below(self, b: ir.IRBuilder, count: ir.Value, first: int) -> ir.Value:
        """The mask of lanes with `first + lane < count`."""
        lanes = self.blk.lanes
        index = ir.Constant(ir.VectorType(_I64, lanes), list(range(first, first + lanes)))
        return b.icmp_signed("<", index, _splat(b, count, lanes))

    def _multiply_add(self, b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
        if self.acc not in _FLOATS:
            return b.add(b.mul(x, y), z)
        # fmuladd rather than fma: it fuses where the CPU has FMA and stays a multiply and an
        # add, rather than a call to libm, where it has not.
        fn = self._declare(f"llvm.fmuladd.{self._suffix(self.acc)}",
                           ir.FunctionType(self.vector, [self.vector] * 3))
        return b.call(fn, [x, y, z])

    def _add(self, b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
        return b.fadd(x, y) if self.acc in _FLOATS else b.add(x, y)

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
        in place, row i at a + i*lda, lda the very last argument (`_blocked`)."""
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
        always = rows - self.blk.mr // 3 + 1
        if strided:
            # Rows lda apart, each start hidden from LLVM's strength reduction: left to it, it
            # chains them (row i + 1 = row i + lda), and the scheduler then hoists both steps'
            # broadcasts ahead of their multiply-adds, spilling accumulators (half the speed).
            # The padding rows of a last panel read its last valid row: A may end there.
            lda, last = fn.args[-1], b.sub(valid, _i64(1))
            opaque = ir.InlineAsm(ir.FunctionType(_I64, [_I64]), "", "=r,0")
            offs = [_i64(0)] + [b.call(opaque, [_mul(b, lda, i if i < always else
                                                     _min(b, _i64(i), last))])
                                for i in range(1, rows)]
            a_rows = [_at(b, a, o) for o in offs]
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
                                      from_row),
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
        fn = self._function(gemm_epilogue_name(program),
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
            """The tiles that start from C, from zero and from a row."""
            return tuple({(rows, p): self.tile(rows, zero, prepacked, from_row, p, program,
                                               strided)
                          for rows in blk.row_steps for p in kinds}
                         for zero, from_row in ((False, False), (True, False), (True, True)))
        # A in one block of columns serves each row panel's few tiles and nothing else: the
        # tiles read it where it lies, as the first one's arithmetic runs, instead of after a
        # copy of the whole block to scratch and back (3136 x 256 x 64, a 1 x 1 projection:
        # 1.10x the GFLOP/s). Only A of the accumulator's type: packing also widens it.
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
                                a_panel, tail = (_at(b, a_block, _mul(b, i, lda)), [lda]) \
                                    if strided else (_at(b, a_pack, _mul(b, i, self.a_stride)), [])
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
                                with b.if_else(in_place) as (direct, packed):
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

    def _scratch(self, b: ir.IRBuilder, elements: ir.Value) -> tuple[ir.Value, ir.Value]:
        """malloc for `elements` accumulator-typed elements, and the first line-aligned one."""
        malloc = self._declare("malloc", ir.FunctionType(_BYTES, [_I64]))
        bytes_needed = _mul(b, b.add(elements, _i64(_LINE_BYTES // self.element_bytes)),
                            self.element_bytes)
        raw = b.call(malloc, [bytes_needed])
        aligned = b.and_(b.add(b.ptrtoint(raw, _I64), _i64(_LINE_BYTES - 1)),
                         _i64(-_LINE_BYTES))
        return raw, b.inttoptr(aligned, self.scalar.as_pointer())

    def _release(self, b: ir.IRBuilder, raw: ir.Value) -> None:
        b.call(self._declare("free", ir.FunctionType(_VOID, [_BYTES])), [raw])

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


def panel_columns(cpu: CpuTarget, acc: str) -> int:
    """NR, the columns of B in one packed panel for this CPU and accumulator type: the layout
    of prepacked weights (global_opt/pack_matmul_weights.py)."""
    return _blocking(cpu, acc).nr


def get_gemm(module: ir.Module, cpu: CpuTarget, lhs: str, rhs: str, acc: str,
             from_zero: bool = False, prepacked: bool = False,
             from_row: bool = False) -> ir.Function:
    """`void @weir_gemm_<lhs>_<rhs>_<acc>(i64 M, i64 N, i64 K, lhs* A, i64 lda, rhs* B,
    i64 ldb, acc* C, i64 ldc)`: C[m, n] += sum_k A[m, k] * B[k, n] over row-major operands with
    row strides in elements, on the calling thread (callers split M). `from_zero`:
    `@weir_gemm_<lhs>_<rhs>_<acc>_from_zero`, the same signature, C[m, n] = sum_k ... with the
    sum started from +0, as after a fill with zero. `from_row` (`..._from_row`): one more
    argument, `acc* row`, and C[m, n] = row[n] + sum_k ..., each sum started from the row's
    value, as after a broadcast of it. `prepacked` (`..._prepacked[_from_zero|_from_row]`):
    B in panels of `panel_columns` columns, ldb = K. Declared once per module, internal: each
    module that needs it carries its own copy; the variants share their helpers."""
    _check_kinds(lhs, rhs, acc)
    existing = module.globals.get(gemm_name((lhs, rhs, acc), from_zero, prepacked, from_row))
    if isinstance(existing, ir.Function):
        return existing
    return Emitter(module, cpu, lhs, rhs, acc).gemm(from_zero, prepacked, from_row)


def get_gemm_epilogue(module: ir.Module, cpu: CpuTarget, program: EpilogueProgram
                      ) -> ir.Function:
    """`@weir_gemm_f32_f32_f32_prepacked_e<key>` (`Emitter.gemm_epilogue`), internal like
    `get_gemm`'s."""
    existing = module.globals.get(gemm_epilogue_name(program))
    if isinstance(existing, ir.Function):
        return existing
    return Emitter(module, cpu, "f32", "f32", "f32").gemm_epilogue(program)

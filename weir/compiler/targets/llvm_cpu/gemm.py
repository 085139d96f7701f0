"""The GEMM microkernel every contraction of the llvm-cpu target ends in (matmul, batch_matmul,
matvec, convolution as a sum of strided matmuls): `C[m, n] += sum_k A[m, k] * B[k, n]`.

The structure is the one of high-performance BLAS libraries. A is packed a block of rows at a
time, B a kc x nc block at a time into micro-panels of NR columns that stay in L2, and an
mr x NR tile of C lives in vector registers through the whole K loop, so that each vector of B
loaded feeds mr multiply-adds and each broadcast element of A feeds NR / lanes of them. Packing
also widens narrow inputs (f16, bf16, i8) to the accumulator type once instead of on every use,
and turns arbitrary row strides (a 4 KiB stride maps every row to the same L1 set) into
contiguous, aligned panels."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.machine import CpuTarget
from weir.errors import UsageError

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
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
    mr x kc panel of A and the rows of B in flight share L1 (32 KiB); a packed kc x nc block of
    B and the source of the next one share L2 (1 MiB on server parts)."""
    element_bytes = _BITS[acc] // 8
    kc = 1024 // element_bytes
    return _Blocking(lanes=cpu.vector_bits // 8 // element_bytes,
                     mr=12 if cpu.vector_bits == 512 else 6, kc=kc,
                     nc=256 * 1024 // element_bytes // kc, mc=1024)


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
        return _widen(b, _half_to_float(b, value), "f32", dst, native_half)
    if src in _FLOATS:
        return b.fpext(value, _vector_type(dst, lanes))
    if dst in _FLOATS:
        return b.sitofp(value, _vector_type(dst, lanes))
    return b.sext(value, _vector_type(dst, lanes))


def _half_to_float(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """f16 -> f32 with integer operations, for CPUs without F16C, where LLVM would otherwise
    call `__extendhfsf2`, a symbol an in-memory linker may not find. Exact for every input,
    and without subnormal f32 arithmetic, which a flush-to-zero mode would spoil."""
    lanes = value.type.count
    f32, i32 = _vector_type("f32", lanes), _vector_type("i32", lanes)
    half = b.zext(b.bitcast(value, _vector_type("bf16", lanes)), i32)
    magnitude = b.and_(half, _splat_i32(0x7FFF, lanes))
    shifted = b.shl(magnitude, _splat_i32(13, lanes))
    normal = b.add(shifted, _splat_i32((127 - 15) << 23, lanes))
    special = b.or_(shifted, _splat_i32(0x7F800000, lanes))
    subnormal = b.bitcast(b.fmul(b.sitofp(magnitude, f32),
                                 ir.Constant(f32, [2.0 ** -24] * lanes)), i32)
    bits = b.select(b.icmp_unsigned("<", magnitude, _splat_i32(0x0400, lanes)), subnormal,
                    b.select(b.icmp_unsigned("<", magnitude, _splat_i32(0x7C00, lanes)), normal,
                             special))
    sign = b.shl(b.and_(half, _splat_i32(0x8000, lanes)), _splat_i32(16, lanes))
    return b.bitcast(b.or_(bits, sign), f32)


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


class _Emitter:
    """Writes the functions behind one `weir_gemm_<lhs>_<rhs>_<acc>` into one module."""

    def __init__(self, module: ir.Module, cpu: CpuTarget, lhs: str, rhs: str, acc: str):
        self.module = module
        self.cpu = cpu
        self.lhs, self.rhs, self.acc = lhs, rhs, acc
        self.name = f"weir_gemm_{lhs}_{rhs}_{acc}"
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

    def _declare(self, name: str, ftype: ir.FunctionType) -> ir.Function:
        existing = self.module.globals.get(name)
        if isinstance(existing, ir.Function):
            return existing
        fn = ir.Function(self.module, ftype, name)
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

    def _prefetch(self, b: ir.IRBuilder, pointer: ir.Value) -> None:
        """Into L2 (locality 2): a line fetched long before its use would not survive in L1
        the stream of B micro-panels through it."""
        fn = self._declare("llvm.prefetch.p0",
                           ir.FunctionType(_VOID, [_BYTES, _I32, _I32, _I32]))
        b.call(fn, [b.bitcast(pointer, _BYTES), ir.Constant(_I32, 0), ir.Constant(_I32, 2),
                    ir.Constant(_I32, 1)])

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

    def tile(self, rows: int) -> ir.Function:
        """`C[valid x nr] += A[valid x kc] * B[kc x NR]` from packed panels, kc >= 1, valid > rows - mr/3: row i of A at a + i*a_stride, row k of B at
        b + k*NR. C is read and written once, after the K loop, and prefetched before it so
        that its misses overlap the arithmetic. Step k also prefetches the line at
        `ahead + k*ahead_stride` (bytes): the driver points that at the source of the next
        block of B, so that packing it finds it in L2."""
        lanes, vectors, nr = self.blk.lanes, self.blk.nr_vectors, self.blk.nr
        pointer = self.scalar.as_pointer()
        fn = self._function(f"{self.name}.tile{rows}",
                            [_I64, pointer, pointer, pointer, _I64, _I64, _I64, _BYTES, _I64],
                            (1, 2, 3))
        fn.attributes.add("noinline")
        kc, a, bp, c, ldc, valid, width, ahead, ahead_stride = fn.args
        entry = fn.append_basic_block("entry")
        loop = fn.append_basic_block("k")
        b = ir.IRBuilder(entry)
        c_rows = [_at(b, c, _mul(b, ldc, i)) for i in range(rows)]
        for c_row in c_rows:
            for line in range(0, nr * self.element_bytes, _LINE_BYTES):
                self._prefetch(b, _at(b, c_row, line // self.element_bytes))
        b.branch(loop)

        b.position_at_end(loop)
        k = b.phi(_I64, "k")
        k.add_incoming(_i64(0), entry)
        accumulators = [[b.phi(self.vector) for _ in range(vectors)] for _ in range(rows)]
        self._prefetch(b, _at(b, ahead, _mul(b, k, ahead_stride)))
        b_row = _at(b, bp, _mul(b, k, nr))
        b_vectors = [self._load_vector(b, _at(b, b_row, j * lanes), self.acc, self.vector_align)
                     for j in range(vectors)]
        results = []
        for i in range(rows):
            element = b.load(_at(b, a, b.add(k, _i64(i * self.a_stride))),
                             align=self.element_bytes)
            broadcast = _splat(b, element, lanes)
            results.append([self._multiply_add(b, broadcast, b_vectors[j], accumulators[i][j])
                            for j in range(vectors)])
        for phis, values in zip(accumulators, results):
            for phi, value in zip(phis, values):
                phi.add_incoming(ir.Constant(self.vector, None), entry)
                phi.add_incoming(value, loop)
        k_next = b.add(k, _i64(1), flags=("nsw",))
        k.add_incoming(k_next, loop)
        after = fn.append_basic_block("k.done")
        b.cbranch(b.icmp_signed("<", k_next, kc), loop, after)

        b.position_at_end(after)
        with b.if_else(b.icmp_signed("==", width, _i64(nr))) as (whole, edge):
            with whole:
                self._update_c(b, rows, valid, c_rows, results, None)
            with edge:
                masks = [self._lanes_below(b, width, j * lanes) for j in range(vectors)]
                self._update_c(b, rows, valid, c_rows, results, masks)
        b.ret_void()
        return fn

    def _update_c(self, b: ir.IRBuilder, rows: int, valid: ir.Value, c_rows: list[ir.Value],
                  results: list[list[ir.Value]], masks: list[ir.Value] | None) -> None:
        """C += the tile, over the valid rows (the others are padding of the A panel) and,
        with masks, over the valid columns only."""
        always = rows - self.blk.mr // 3 + 1
        for i, (c_row, values) in enumerate(zip(c_rows, results)):
            if i < always:
                self._update_row(b, c_row, values, masks)
            else:
                with b.if_then(b.icmp_signed("<", _i64(i), valid)):
                    self._update_row(b, c_row, values, masks)

    def _update_row(self, b: ir.IRBuilder, c_row: ir.Value, values: list[ir.Value],
                    masks: list[ir.Value] | None) -> None:
        for j, value in enumerate(values):
            target = _at(b, c_row, j * self.blk.lanes)
            if masks is None:
                old = self._load_vector(b, target, self.acc, self.element_bytes)
                self._store_vector(b, self._add(b, old, value), target, self.element_bytes)
            else:
                old = self._masked_load(b, target, masks[j], self.acc)
                self._masked_store(b, self._add(b, old, value), target, masks[j])

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
        """Column counts of the dot-product kernels, widest first: eight (four on 16-register
        targets) B columns in registers with as many rows of A as keep the accumulators and
        operands within the register file."""
        widest = 8 if self.cpu.vector_bits == 512 else 4
        return tuple(1 << i for i in range(widest.bit_length() - 1, -1, -1))

    def _dot_rows(self, columns: int) -> int:
        return max(1, (20 if self.cpu.vector_bits == 512 else 8) // columns)

    def dot(self, columns: int) -> ir.Function:
        """`C[m x columns] += A[m x k] * Bt[columns x k]^T` with vectors along k: row s of Bt
        at bt + s*bt_stride, zero-padded to whole vectors. A is read in place, row after row in
        order, as no panel of it is used more than once. Each rows x columns block of C is a
        set of vector accumulators summed across their lanes at the end."""
        lanes = self.blk.lanes
        rows = self._dot_rows(columns)
        fn = self._function(f"{self.name}.dot{columns}",
                            [_I64, _I64, _MEMORY_TYPES[self.lhs].as_pointer(), _I64,
                             self.scalar.as_pointer(), _I64, self.scalar.as_pointer(), _I64],
                            (2, 4, 6))
        fn.attributes.add("noinline")
        m, k_extent, a, lda, bt, bt_stride, c, ldc = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        whole = b.sub(k_extent, b.srem(k_extent, _i64(lanes)))
        bt_rows = [_at(b, bt, _mul(b, bt_stride, s)) for s in range(columns)]
        source_align = _BITS[self.lhs] // 8
        with _loop(b, _i64(0), m, rows, "r") as r0:
            # Rows past m read the last row again: cheap, and their sums are never stored.
            a_rows = [_at(b, a, _mul(b, _min(b, b.add(r0, _i64(r)), b.sub(m, _i64(1))), lda))
                      for r in range(rows)]
            entry = b.block
            loop = b.append_basic_block("k")
            tail = b.append_basic_block("k.tail")
            b.cbranch(b.icmp_signed("<", _i64(0), whole), loop, tail)
            b.position_at_end(loop)
            k = b.phi(_I64, "k")
            k.add_incoming(_i64(0), entry)
            accumulators = [[b.phi(self.vector) for _ in range(columns)] for _ in range(rows)]
            a_vectors = [_widen(b, self._load_vector(b, _at(b, row, k), self.lhs, source_align),
                                self.lhs, self.acc, self.native_half) for row in a_rows]
            bt_vectors = [self._load_vector(b, _at(b, row, k), self.acc, self.vector_align)
                          for row in bt_rows]
            sums = [[self._multiply_add(b, x, y, acc) for y, acc in zip(bt_vectors, phis)]
                    for x, phis in zip(a_vectors, accumulators)]
            k_next = b.add(k, _i64(lanes), flags=("nsw",))
            k.add_incoming(k_next, loop)
            for phis, values in zip(accumulators, sums):
                for phi, value in zip(phis, values):
                    phi.add_incoming(ir.Constant(self.vector, None), entry)
                    phi.add_incoming(value, loop)
            b.cbranch(b.icmp_signed("<", k_next, whole), loop, tail)

            # The last partial vector of k, masked (all lanes off when k is a multiple).
            b.position_at_end(tail)
            totals = [[b.phi(self.vector) for _ in range(columns)] for _ in range(rows)]
            for phis, values in zip(totals, sums):
                for phi, value in zip(phis, values):
                    phi.add_incoming(ir.Constant(self.vector, None), entry)
                    phi.add_incoming(value, loop)
            mask = self._lanes_below(b, b.sub(k_extent, whole), 0)
            a_vectors = [_widen(b, self._masked_load(b, _at(b, row, whole), mask, self.lhs),
                                self.lhs, self.acc, self.native_half) for row in a_rows]
            bt_vectors = [self._masked_load(b, _at(b, row, whole), mask, self.acc)
                          for row in bt_rows]
            for r, (x, phis) in enumerate(zip(a_vectors, totals)):
                c_row = _at(b, c, _mul(b, b.add(r0, _i64(r)), ldc))
                values = [self._horizontal_sum(b, self._multiply_add(b, x, y, acc))
                          for y, acc in zip(bt_vectors, phis)]
                if r == 0:
                    self._add_to_row(b, c_row, values)
                else:
                    with b.if_then(b.icmp_signed("<", b.add(r0, _i64(r)), m)):
                        self._add_to_row(b, c_row, values)
        b.ret_void()
        return fn

    def _add_to_row(self, b: ir.IRBuilder, c_row: ir.Value, values: list[ir.Value]) -> None:
        for s, value in enumerate(values):
            target = _at(b, c_row, s)
            b.store(self._add(b, b.load(target, align=self.element_bytes), value), target,
                    align=self.element_bytes)

    def _horizontal_sum(self, b: ir.IRBuilder, vector: ir.Value) -> ir.Value:
        """Halve the vector until one lane is left, as a tree: an ordered reduction would
        chain every lane through the latency of one add."""
        width = self.blk.lanes
        while width > 1:
            width //= 2
            low, high = (b.shuffle_vector(vector, vector, ir.Constant(
                ir.VectorType(_I32, width), list(range(start, start + width))))
                for start in (0, width))
            vector = self._add(b, low, high)
        return b.extract_element(vector, ir.Constant(_I32, 0))

    def pack_bt(self) -> ir.Function:
        """Bt = B[k x n] transposed, each row padded with zeros to whole vectors, gathered a
        vector of k at a time."""
        lanes = self.blk.lanes
        source = _MEMORY_TYPES[self.rhs]
        fn = self._function(f"{self.name}.pack_bt",
                            [_I64, _I64, source.as_pointer(), _I64, self.scalar.as_pointer(),
                             _I64], (2, 4))
        fn.attributes.add("noinline")
        k_extent, n, src, ld, dst, stride = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        source_vector = _vector_type(self.rhs, lanes)
        pointers = ir.VectorType(source.as_pointer(), lanes)
        mask_type = ir.VectorType(ir.IntType(1), lanes)
        gather = self._declare(f"llvm.masked.gather.{self._suffix(self.rhs)}.v{lanes}p0",
                               ir.FunctionType(source_vector, [pointers, mask_type,
                                                               source_vector]))
        element_bytes = _BITS[self.rhs] // 8
        lane_offsets = b.mul(ir.Constant(ir.VectorType(_I64, lanes), list(range(lanes))),
                             _splat(b, _mul(b, ld, element_bytes), lanes))
        with _loop(b, _i64(0), n, 1, "s") as s:
            with _loop(b, _i64(0), k_extent, lanes, "k") as k:
                first = b.ptrtoint(_at(b, src, b.add(_mul(b, k, ld), s)), _I64)
                addresses = b.inttoptr(b.add(_splat(b, first, lanes), lane_offsets), pointers)
                mask = self._lanes_below(b, b.sub(k_extent, k), 0)
                value = b.call(gather, [addresses, mask, ir.Constant(source_vector, None)])
                self._store_vector(b, _widen(b, value, self.rhs, self.acc, self.native_half),
                                   _at(b, dst, b.add(_mul(b, s, stride), k)), self.vector_align)
        b.ret_void()
        return fn

    def _dot_products(self, b: ir.IRBuilder, m: ir.Value, n: ir.Value, k_extent: ir.Value,
                      a: ir.Value, lda: ir.Value, bsrc: ir.Value, ldb: ir.Value, c: ir.Value,
                      ldc: ir.Value) -> None:
        """N narrower than a register tile (a matrix-vector product, a classifier's last
        layer): vectors along N would be mostly padding, and packing A would cost as much as
        the arithmetic, so each C[m, n] is a dot product along k instead. The columns are
        taken in groups of the kernels' widths: 10 = 8 + 2, 31 = 8 + 8 + 8 + 4 + 2 + 1."""
        lanes = self.blk.lanes
        stride = _mul(b, _ceil_div(b, k_extent, lanes), lanes)
        raw, bt = self._scratch(b, _mul(b, n, stride))
        b.call(self.pack_bt(), [k_extent, n, bsrc, ldb, bt, stride])
        widths = self._dot_columns()
        kernels = {columns: self.dot(columns) for columns in widths}

        def call(columns: int, first: ir.Value) -> None:
            b.call(kernels[columns], [m, k_extent, a, lda, _at(b, bt, _mul(b, first, stride)),
                                      stride, _at(b, c, first), ldc])

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

    def gemm(self) -> ir.Function:
        blk = self.blk
        pointers = [_MEMORY_TYPES[kind].as_pointer() for kind in (self.lhs, self.rhs, self.acc)]
        fn = self._function(self.name, [_I64, _I64, _I64, pointers[0], _I64, pointers[1], _I64,
                                        pointers[2], _I64], (3, 5, 7))
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        m, n, k, *_ = fn.args
        empty = b.or_(b.or_(b.icmp_signed("<=", m, _i64(0)), b.icmp_signed("<=", n, _i64(0))),
                      b.icmp_signed("<=", k, _i64(0)))
        with b.if_then(b.not_(empty)):
            with b.if_else(b.icmp_signed("<", n, _i64(2 * blk.lanes))) as (narrow, wide):
                with narrow:
                    self._dot_products(b, *fn.args)
                with wide:
                    self._blocked(b, *fn.args)
        b.ret_void()
        return fn

    def _blocked(self, b: ir.IRBuilder, m: ir.Value, n: ir.Value, k_extent: ir.Value,
                 a: ir.Value, lda: ir.Value, bsrc: ir.Value, ldb: ir.Value, c: ir.Value,
                 ldc: ir.Value) -> None:
        """Loops: row blocks of mc (A packed once per depth block), depth blocks of kc
        (balanced, so that K = 784 runs as 4 x 196 rather than 3 x 256 + 16), column blocks of
        nc (B packed into L2), row panels of up to mr (a panel of A in L1), column panels of
        NR (a register tile each)."""
        blk = self.blk
        nr = blk.nr
        tiles = {rows: self.tile(rows) for rows in blk.row_steps}
        pack_a, pack_b = self.pack_a(), self.pack_b()
        kc_step = _ceil_div(b, k_extent, _ceil_div(b, k_extent, blk.kc))
        # Scratch is sized for this call rather than for the largest blocks, so that small
        # calls stay small. The A block has room for the padding rows of its last panel.
        nc_max = _min(b, _mul(b, _ceil_div(b, n, nr), nr), _i64(blk.nc))
        b_elements = _mul(b, kc_step, nc_max)
        a_rows = b.add(_min(b, m, _i64(blk.mc)), _i64(blk.mr))
        a_elements = _mul(b, a_rows, self.a_stride)
        raw, b_pack = self._scratch(b, b.add(b_elements, a_elements))
        a_pack = _at(b, b_pack, b_elements)

        with _loop(b, _i64(0), m, blk.mc, "ic") as ic:
            mc = _min(b, b.sub(m, ic), _i64(blk.mc))
            with _loop(b, _i64(0), k_extent, kc_step, "pc") as pc:
                kc = _min(b, b.sub(k_extent, pc), kc_step)
                b.call(pack_a, [mc, kc, _at(b, a, b.add(_mul(b, ic, lda), pc)), lda, a_pack])
                with _loop(b, _i64(0), n, blk.nc, "jc") as jc:
                    nc = _min(b, b.sub(n, jc), _i64(blk.nc))
                    b.call(pack_b, [kc, nc, _at(b, bsrc, b.add(_mul(b, pc, ldb), jc)), ldb,
                                    b_pack])
                    # The next block of B: to the right, else one block down, else the first
                    # one again, for the next block of rows.
                    right, down = b.add(jc, _i64(blk.nc)), b.add(pc, kc_step)
                    next_offset = b.select(
                        b.icmp_signed("<", right, n), b.add(_mul(b, pc, ldb), right),
                        b.select(b.icmp_signed("<", down, k_extent), _mul(b, down, ldb), _i64(0)))
                    next_block = b.bitcast(_at(b, bsrc, next_offset), _BYTES)
                    c_block = _at(b, c, b.add(_mul(b, ic, ldc), jc))

                    def panel(i: ir.Value, rows: ir.Value, valid: ir.Value,
                              after: ir.Value) -> None:
                        self._row_panel(b, tiles, nr, rows, valid, after, kc, nc,
                                        _at(b, a_pack, _mul(b, i, self.a_stride)), b_pack,
                                        _at(b, c_block, _mul(b, i, ldc)), ldc, next_block, ldb)
                    self._row_panels(b, mc, panel)
        self._release(b, raw)

    def _scratch(self, b: ir.IRBuilder, elements: ir.Value) -> tuple[ir.Value, ir.Value]:
        """malloc for `elements` accumulator-typed elements, and the first line-aligned one:
        the calling thread's stack may be a worker's, too small for blocks this size."""
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
                    body: Callable[[ir.Value, ir.Value, ir.Value, ir.Value], None]) -> None:
        """Walk m rows in panels of mr, with the last 2*mr rows or fewer split into two
        panels of (a third of mr) * i rows, the last one padded: 12 + 4 rows run as 8 + 8, not
        through a 4-row tile, which has too few accumulators to hide the latency of a
        multiply-add. `body` gets the first row, the panel's rows (a tile size), its valid rows
        and the rows left after it."""
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
        after = b.sub(left, valid)
        body(i, rows, valid, after)
        i.add_incoming(b.add(i, valid, flags=("nsw",)), b.block)
        b.branch(head)
        b.position_at_end(done)

    def _row_panel(self, b: ir.IRBuilder, tiles: dict[int, ir.Function], nr: int,
                   rows: ir.Value, valid: ir.Value, rows_after: ir.Value, kc: ir.Value,
                   nc: ir.Value, a_panel: ir.Value, b_pack: ir.Value, c: ir.Value,
                   ldc: ir.Value, next_block: ir.Value, ldb: ir.Value) -> None:
        """The tiles of the last two row panels prefetch the next block of B, one line of each
        of its rows per step of k: the last panel the first line of each micro-panel's
        columns, the one before it the second. Earlier lines would be evicted before their
        use; the other tiles prefetch their own micro-panel, which costs next to nothing."""
        source_bytes = _BITS[self.rhs] // 8
        prefetching = b.icmp_signed("<=", rows_after, _i64(self.blk.mr))
        line = b.select(b.icmp_signed("==", rows_after, _i64(0)), _i64(0), _i64(_LINE_BYTES))
        stride = b.select(prefetching, _mul(b, ldb, source_bytes), _i64(0))
        with _loop(b, _i64(0), nc, nr, "jr") as jr:
            width = _min(b, b.sub(nc, jr), _i64(nr))
            b_panel = _at(b, b_pack, _mul(b, jr, kc))
            ahead = b.select(prefetching,
                             _at(b, next_block, b.add(_mul(b, jr, source_bytes), line)),
                             b.bitcast(b_panel, _BYTES))
            self._dispatch(b, tiles, rows, [kc, a_panel, b_panel, _at(b, c, jr), ldc, valid,
                                            width, ahead, stride])

    def _dispatch(self, b: ir.IRBuilder, tiles: dict[int, ir.Function], rows: ir.Value,
                  args: list[ir.Value]) -> None:
        fn = b.function
        joined = fn.append_basic_block("tile.done")
        largest = max(tiles)
        default = fn.append_basic_block(f"tile{largest}")
        switch = b.switch(rows, default)
        for count, tile in tiles.items():
            block = default if count == largest else fn.append_basic_block(f"tile{count}")
            if count != largest:
                switch.add_case(_i64(count), block)
            b.position_at_end(block)
            b.call(tile, args)
            b.branch(joined)
        b.position_at_end(joined)


def get_gemm(module: ir.Module, cpu: CpuTarget, lhs: str, rhs: str, acc: str) -> ir.Function:
    """`void @weir_gemm_<lhs>_<rhs>_<acc>(i64 M, i64 N, i64 K, lhs* A, i64 lda, rhs* B,
    i64 ldb, acc* C, i64 ldc)`: C[m, n] += sum_k A[m, k] * B[k, n] over row-major operands with
    row strides in elements, on the calling thread (callers split M). Declared once per
    module, internal: each module that needs it carries its own copy."""
    _check_kinds(lhs, rhs, acc)
    existing = module.globals.get(f"weir_gemm_{lhs}_{rhs}_{acc}")
    if isinstance(existing, ir.Function):
        return existing
    return _Emitter(module, cpu, lhs, rhs, acc).gemm()

"""What the parts of the llvm-cpu GEMM microkernel (gemm.py) share: element kinds and their
memory types, the register and cache blocking, small IR helpers, and `EmitterBase`, which holds
one microkernel's kinds, blocking and module and declares the intrinsics its parts call. The
parts are the register tile and packing (gemm_tile.py), the dot-product kernels of narrow
products (gemm_dot.py) and the driver with its entry points (gemm.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.epilogue_program import EpilogueProgram
from weir.compiler.targets.llvm_cpu.halfs import half_to_float
from weir.compiler.targets.llvm_cpu.machine import CpuTarget
from weir.compiler.targets.llvm_cpu.scalars import declared
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
              prepacked: bool = False, from_row: bool = False, wide: bool = False) -> str:
    """The symbol of an entry point of the microkernel: defined here, declared by the entry
    objects that call it (gemm_calls.py). `wide`: the one of wide tiles (`_blocking`)."""
    return "weir_gemm_{}_{}_{}".format(*types) + ("_wide" if wide else "") + \
        (_PREPACKED if prepacked else "") + \
        ("_from_row" if from_row else "_from_zero" if from_zero else "")


def gemm_epilogue_name(program: EpilogueProgram, wide: bool = False) -> str:
    """The symbol of the f32 prepacked microkernel that stores `program` of its sums
    (`Emitter.gemm_epilogue`)."""
    return gemm_name(("f32", "f32", "f32"), prepacked=True, wide=wide) + "_e" + program.key


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


def _blocking(cpu: CpuTarget, acc: str, wide: bool = False) -> _Blocking:
    """AVX-512 has 32 vector registers: a 12 x 2-vector tile holds 24 accumulators, the two
    vectors of B and a broadcast. Narrower targets have 16 registers, which fit 6 x 2. The
    mr x kc panel of A (12 KiB) stays in L1 (32 KiB) while the kc x NR micro-panels of B stream
    past it from the packed kc x nc block of B, which must stay in L2 beside the lines of C
    and A passing through: 1 KiB of depth and 1 KiB of width whatever the element size, 256
    KiB of f32, half of the smallest L2 in use (AMD Zen 2 to 4); a block of twice that, the
    whole of such an L2, is read again from L3 for every row panel. The packed block of A
    (mc rows) only needs to stay in L3.

    `wide` (AVX-512 only): a 6 x 4-vector tile, as many accumulators, whose step of k loads 10
    values for 24 multiply-adds where the 12 x 2 one loads 14. It streams twice the lines of B
    per row of A, which pays where a product has many rows and B stays in L2 between them: a
    1 x 1 convolution over many pixels (`conv_blocking.wide_gemm`)."""
    element_bytes = _BITS[acc] // 8
    if wide:
        assert cpu.vector_bits == 512, "wide GEMM tiles need 32 vector registers"
    return _Blocking(lanes=cpu.vector_bits // 8 // element_bytes,
                     mr=6 if wide or cpu.vector_bits != 512 else 12, kc=1024 // element_bytes,
                     nc=1024 // element_bytes, mc=512, nr_vectors=4 if wide else 2)


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



class EmitterBase:
    """One microkernel's kinds, blocking and module, and the declarations and vector helpers
    every part of it uses."""

    def __init__(self, module: ir.Module, cpu: CpuTarget, lhs: str, rhs: str, acc: str,
                 wide: bool = False):
        self.module = module
        self.cpu = cpu
        self.lhs, self.rhs, self.acc = lhs, rhs, acc
        self.wide = wide
        self.name = gemm_name((lhs, rhs, acc), wide=wide)
        self.blk = _blocking(cpu, acc, wide)
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

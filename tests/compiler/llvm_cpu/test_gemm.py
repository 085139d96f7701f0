"""The llvm-cpu GEMM microkernel against numpy: every element-type combination, empty and ragged
shapes around the blocking, row strides with poisoned padding, operands that end at an
unreadable page, scratch memory that is poison until written, accumulation into C, and builds
for generic x86-64 and AVX2 run on this machine."""

from __future__ import annotations

import ctypes
import mmap
from collections.abc import Callable
from functools import cache

import llvmlite.binding as llvm
import llvmlite.ir as ir
import ml_dtypes
import numpy as np
import pytest

from weir.compiler.targets.llvm_cpu.gemm import get_gemm
from weir.compiler.targets.llvm_cpu.gemm_base import _blocking
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
from weir.compiler.targets.llvm_cpu.target import Jit
from weir.errors import UsageError

DTYPES: dict[str, type] = {
    "f64": np.float64, "f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
    "i8": np.int8, "i32": np.int32,
}
COMBINATIONS = [("f32", "f32", "f32"), ("f16", "f16", "f32"), ("bf16", "bf16", "f32"),
                ("i8", "i8", "i32"), ("f64", "f64", "f64"), ("f16", "f32", "f32"),
                ("f32", "bf16", "f32"), ("i8", "i8", "f32")]
# (M, N, K): empty extents, single elements, K=1, and sizes that are not multiples of any
# register tile or vector width.
EDGE_SHAPES = [(0, 5, 7), (5, 0, 7), (5, 7, 0), (1, 1, 1), (1, 17, 1), (3, 1, 33), (17, 33, 3),
               (33, 65, 17), (65, 3, 33), (13, 31, 1), (2, 100, 5)]
# Across cache blocks: K past one packed depth, M past one packed block of rows, ragged row
# panels, N past a micro-panel.
BLOCK_SHAPES = [(41, 600, 300), (24, 64, 513), (18, 1040, 2), (530, 37, 70)]
_GEMM_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                              ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                              ctypes.c_void_p, ctypes.c_int64)
_PROT_NONE = 0  # the mmap module names PROT_READ and PROT_WRITE but not this
rng = np.random.default_rng(7)


class Gemm:
    """One compiled `weir_gemm_*`, called on 2-d numpy views with unit column strides."""

    def __init__(self, cpu_name: str, lhs: str, rhs: str, acc: str,
                 poisoned_scratch: bool = False, from_zero: bool = False) -> None:
        cpu = resolve_cpu(cpu_name)
        module = ir.Module(f"gemm_{cpu_name}")
        module.triple = cpu.triple
        if poisoned_scratch:
            define_poisoning_malloc(module)
        fn = get_gemm(module, cpu, lhs, rhs, acc, from_zero)
        fn.linkage = "external"
        self.jit = Jit(module, cpu)
        self.fn: Callable[..., None] = _GEMM_TYPE(self.jit.address(fn.name))

    def __call__(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        (m, k), n = a.shape, b.shape[1]
        assert b.shape[0] == k and c.shape == (m, n)
        self.fn(m, n, k, a.ctypes.data, _row_stride(a), b.ctypes.data, _row_stride(b),
                c.ctypes.data, _row_stride(c))


def define_poisoning_malloc(module: ir.Module) -> None:
    """An internal `malloc` for the kernel to find in its module: it hands out memory whose
    every byte, and a page past the end, is 0xff (NaN as f32, -1 as i32), so that a read of
    scratch before it is written, or past its end, shows in the result. (It allocates with
    aligned_alloc: LLVM would turn realloc(NULL, n) into a call of this very malloc.)"""
    i8p, i64 = ir.IntType(8).as_pointer(), ir.IntType(64)
    aligned_alloc = ir.Function(module, ir.FunctionType(i8p, [i64, i64]), "aligned_alloc")
    memset = ir.Function(module, ir.FunctionType(ir.VoidType(), [i8p, ir.IntType(8), i64,
                                                                 ir.IntType(1)]),
                         "llvm.memset.p0.i64")
    malloc = ir.Function(module, ir.FunctionType(i8p, [i64]), "malloc")
    malloc.linkage = "internal"
    b = ir.IRBuilder(malloc.append_basic_block("entry"))
    pages = b.udiv(b.add(malloc.args[0], ir.Constant(i64, 2 * 4096 - 1)), ir.Constant(i64, 4096))
    size = b.mul(pages, ir.Constant(i64, 4096))
    memory = b.call(aligned_alloc, [ir.Constant(i64, 4096), size])
    b.call(memset, [memory, ir.Constant(ir.IntType(8), 0xFF), size, ir.Constant(ir.IntType(1), 0)])
    b.ret(memory)


def _row_stride(x: np.ndarray) -> int:
    assert x.size == 0 or x.strides[1] == x.itemsize
    return x.strides[0] // x.itemsize


@cache
def compiled(cpu_name: str, lhs: str, rhs: str, acc: str, from_zero: bool = False) -> Gemm:
    return Gemm(cpu_name, lhs, rhs, acc, from_zero=from_zero)


def random(kind: str, shape: tuple[int, int]) -> np.ndarray:
    if kind in ("i8", "i32"):
        info = np.iinfo(DTYPES[kind])
        low, high = (info.min, info.max + 1) if kind == "i8" else (-1000, 1000)
        return rng.integers(low, high, shape).astype(DTYPES[kind])
    return rng.uniform(-1, 1, shape).astype(DTYPES[kind])


def padded(values: np.ndarray, pad: int, sentinel: float) -> np.ndarray:
    """`values` as a view into rows `pad` elements longer, the padding set to `sentinel`."""
    rows, cols = values.shape
    buffer = np.full((rows, cols + pad), sentinel, dtype=values.dtype)
    buffer[:, :cols] = values
    return buffer[:, :cols]


def poison(kind: str) -> float:
    """Padding that would show in any result it leaked into."""
    return float("nan") if kind not in ("i8", "i32") else 99


def expected(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    wide = np.int64 if c.dtype == np.int32 else np.float64
    return c.astype(wide) + a.astype(wide) @ b.astype(wide)


def check(result: np.ndarray, reference: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """Integers exactly; floats within a rounding error that grows with K and the size of the
    products summed."""
    if result.dtype == np.int32:
        np.testing.assert_array_equal(result, reference)
        return
    scale = a.shape[1] * float(np.abs(a.astype(np.float64)).max(initial=0)) * \
        float(np.abs(b.astype(np.float64)).max(initial=0))
    epsilon = np.finfo(result.dtype).eps
    np.testing.assert_allclose(result, reference, rtol=8 * epsilon,
                               atol=8 * epsilon * max(scale, 1.0))


def run_case(cpu_name: str, kinds: tuple[str, str, str], shape: tuple[int, int, int],
             pad: int = 0) -> None:
    lhs, rhs, acc = kinds
    m, n, k = shape
    a, b, c = random(lhs, (m, k)), random(rhs, (k, n)), random(acc, (m, n))
    reference = expected(a, b, c)
    if pad:
        a, b = padded(a, pad, poison(lhs)), padded(b, pad + 3, poison(rhs))
        c = padded(c, pad + 1, -7777)
    compiled(cpu_name, *kinds)(a, b, c)
    check(c, reference, a, b)
    if pad:
        assert (c.base[:, n:] == -7777).all(), "the padding of C was written"


@pytest.mark.parametrize("kinds", COMBINATIONS, ids="-".join)
def test_types_and_edge_shapes(kinds: tuple[str, str, str]) -> None:
    for shape in EDGE_SHAPES:
        run_case("host", kinds, shape)


@pytest.mark.parametrize("kinds", COMBINATIONS, ids="-".join)
def test_shapes_across_blocks(kinds: tuple[str, str, str]) -> None:
    for shape in BLOCK_SHAPES:
        run_case("host", kinds, shape)


@pytest.mark.parametrize("kinds", COMBINATIONS[:5], ids="-".join)
def test_row_strides_with_poisoned_padding(kinds: tuple[str, str, str]) -> None:
    for shape in [(17, 33, 65), (3, 1, 17), (41, 70, 300)]:
        run_case("host", kinds, shape, pad=5)


@pytest.mark.parametrize("kinds", [("f32", "f32", "f32"), ("f64", "f64", "f64"),
                                   ("f16", "f16", "f32")], ids="-".join)
def test_one_block_of_columns_reads_a_in_place(kinds: tuple[str, str, str]) -> None:
    """Products whose N fits one block of columns read A's rows where they lie when A needs no
    widening (f32, f64), in rows a padded stride apart, across blocks of rows and of depth,
    with ragged last panels whose padding rows would lie past A's end; f16 is still packed."""
    # Optimised: the tiles that read A in place survive only where the driver can call them.
    strided = ".strided(" in compiled("host", *kinds).jit.optimized_ir
    assert strided == (kinds[0] == kinds[2])
    for shape in [(530, 64, 70), (25, 256, 513), (13, 32, 300), (1, 40, 9), (29, 200, 256)]:
        run_case("host", kinds, shape, pad=5)


@pytest.mark.parametrize(("cpu_name", "kinds"), [
    *(("x86-64", kinds) for kinds in COMBINATIONS[:5]),
    ("x86-64-v3", ("f32", "f32", "f32")), ("x86-64-v3", ("f16", "i8", "f32"))],
    ids=lambda value: value if isinstance(value, str) else "-".join(value))
def test_narrower_targets_run_here(cpu_name: str, kinds: tuple[str, str, str]) -> None:
    for shape in [(0, 3, 3), (1, 1, 1), (7, 9, 5), (19, 37, 70), (13, 300, 260)]:
        run_case(cpu_name, kinds, shape, pad=2)


def _guarded(dtype: type, shape: tuple[int, int]) -> np.ndarray:
    """A C-contiguous array that ends where an unreadable page begins: a load of even one
    element past the operand faults."""
    page = mmap.PAGESIZE
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    span = -(-nbytes // page) * page
    region = mmap.mmap(-1, span + page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc = ctypes.CDLL(None)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    assert libc.mprotect(base + span, page, _PROT_NONE) == 0
    array = np.frombuffer(region, dtype=np.uint8, count=nbytes, offset=span - nbytes)
    return array.view(dtype).reshape(shape)


@pytest.mark.parametrize("kinds", [("f32", "f32", "f32"), ("f16", "bf16", "f32"),
                                   ("i8", "i8", "i32")], ids="-".join)
def test_nothing_is_read_past_an_operand(kinds: tuple[str, str, str]) -> None:
    lhs, rhs, acc = kinds
    for m, n, k in [(5, 3, 7), (13, 17, 1), (1, 45, 33)]:
        a, b, c = _guarded(DTYPES[lhs], (m, k)), _guarded(DTYPES[rhs], (k, n)), \
            _guarded(DTYPES[acc], (m, n))
        a[...], b[...], c[...] = random(lhs, (m, k)), random(rhs, (k, n)), random(acc, (m, n))
        reference = expected(a, b, c)
        compiled("host", *kinds)(a, b, c)
        check(c, reference, a, b)


@pytest.mark.parametrize("kinds", [("f32", "f32", "f32"), ("f16", "i8", "f32")], ids="-".join)
def test_no_scratch_is_read_before_it_is_written_or_past_its_end(
        kinds: tuple[str, str, str]) -> None:
    gemm = Gemm("host", *kinds, poisoned_scratch=True)
    lhs, rhs, acc = kinds
    # Both paths, depths that are and are not whole vectors, ragged rows and columns.
    for m, n, k in [(5, 10, 64), (7, 3, 1024), (13, 1, 17), (30, 40, 256), (17, 70, 33),
                    (41, 600, 300)]:
        a, b, c = random(lhs, (m, k)), random(rhs, (k, n)), random(acc, (m, n))
        reference = expected(a, b, c)
        gemm(a, b, c)
        check(c, reference, a, b)


def test_half_precision_specials_on_a_cpu_without_f16c() -> None:
    """Without F16C the conversion is done by hand: subnormals, the largest finite values,
    infinities and NaN must come through exactly."""
    values = np.array([[6e-8, -6e-8, 1e-5, -1.5, 65504, -65504, np.inf, -np.inf, np.nan]],
                      np.float16)
    a = np.ones((1, 1), np.float16)
    for cpu_name in ("x86-64", "host"):
        c = np.zeros((1, values.shape[1]), np.float32)
        compiled(cpu_name, "f16", "f16", "f32")(a, values, c)
        np.testing.assert_array_equal(c, values.astype(np.float32))


def test_wide_targets_use_their_widest_registers() -> None:
    for cpu_name, register in [("x86-64-v4", "%zmm"), ("x86-64-v3", "%ymm")]:
        cpu = resolve_cpu(cpu_name)
        module = ir.Module("asm")
        module.triple = cpu.triple
        get_gemm(module, cpu, "f32", "f32", "f32").linkage = "external"
        assembly = cpu.target_machine().emit_assembly(llvm.parse_assembly(str(module)))
        assert register in assembly
    generic = resolve_cpu("x86-64")
    module = ir.Module("asm")
    module.triple = generic.triple
    get_gemm(module, generic, "f32", "f32", "f32").linkage = "external"
    assert "%ymm" not in generic.target_machine().emit_assembly(llvm.parse_assembly(str(module)))


def test_declared_once_per_module_and_kinds_share_a_module() -> None:
    cpu = resolve_cpu("host")
    module = ir.Module("shared")
    first = get_gemm(module, cpu, "f32", "f32", "f32")
    assert get_gemm(module, cpu, "f32", "f32", "f32") is first
    assert first.name == "weir_gemm_f32_f32_f32"
    assert "nounwind" in first.attributes
    other = get_gemm(module, cpu, "i8", "i8", "i32")
    assert [str(t) for t in other.ftype.args] == ["i64", "i64", "i64", "i8*", "i64", "i8*",
                                                  "i64", "i32*", "i64"]
    llvm.parse_assembly(str(module)).verify()


@pytest.mark.parametrize("kinds", [("f32", "f32", "i32"), ("i16", "i8", "i32"),
                                   ("f32", "f32", "f16"), ("f64", "f64", "f32")], ids="-".join)
def test_unsupported_kinds_are_refused(kinds: tuple[str, str, str]) -> None:
    with pytest.raises(UsageError, match="gemm"):
        get_gemm(ir.Module("refused"), resolve_cpu("host"), *kinds)


@pytest.mark.parametrize("cpu_name", ["x86-64", "x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("acc", ["f32", "i32", "f64"])
def test_packed_block_of_b_fits_half_the_smallest_l2(cpu_name: str, acc: str) -> None:
    """The kc x nc block of B is read again for every row panel: it must stay in L2 beside
    the C and A lines passing through, which a block the size of a Zen core's whole 512 KiB
    L2 does not."""
    blocking = _blocking(resolve_cpu(cpu_name), acc)
    element_bytes = np.dtype(DTYPES[acc]).itemsize
    assert blocking.kc * blocking.nc * element_bytes <= 256 * 1024
    assert blocking.nc % blocking.nr == 0 and blocking.nc >= 4 * blocking.nr


@pytest.mark.parametrize("kinds", COMBINATIONS, ids="-".join)
def test_from_zero_never_reads_c(kinds: tuple[str, str, str]) -> None:
    """The `_from_zero` driver computes C = A @ B over C full of poison (NaN, or 99 for
    integers) that would show if any of it were read, through both paths, every depth block
    and K = 0 (C all zeros); the padding past each row of C is not written."""
    lhs, rhs, acc = kinds
    for m, n, k in EDGE_SHAPES + BLOCK_SHAPES + [(17, 33, 65), (41, 70, 300)]:
        a, b = random(lhs, (m, k)), random(rhs, (k, n))
        reference = expected(a, b, np.zeros((m, n), DTYPES[acc]))
        c = padded(np.full((m, n), poison(acc), DTYPES[acc]), 3, -7777)
        compiled("host", *kinds, from_zero=True)(padded(a, 2, poison(lhs)), b, c)
        check(c, reference, a, b)
        assert (c.base[:, n:] == -7777).all(), "the padding of C was written"


def test_both_drivers_share_one_module() -> None:
    """The accumulating and the from-zero driver in one module, their helpers emitted once,
    each still computing its own sum."""
    cpu = resolve_cpu("host")
    module = ir.Module("both")
    module.triple = cpu.triple
    names = [get_gemm(module, cpu, "f32", "f32", "f32", from_zero).name
             for from_zero in (False, True)]
    assert names == ["weir_gemm_f32_f32_f32", "weir_gemm_f32_f32_f32_from_zero"]
    for name in names:
        module.globals[name].linkage = "external"
    jit = Jit(module, cpu)
    accumulate, start_from_zero = (_GEMM_TYPE(jit.address(name)) for name in names)
    a, b = random("f32", (19, 70)), random("f32", (70, 45))
    for fn, start in ((accumulate, 1.0), (start_from_zero, 0.0)):
        c = np.ones((19, 45), np.float32)
        fn(19, 45, 70, a.ctypes.data, 70, b.ctypes.data, 45, c.ctypes.data, 45)
        check(c, expected(a, b, np.full((19, 45), start, np.float32)), a, b)


_ROW_GEMM_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                  ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                  ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                  ctypes.c_void_p)


@cache
def _row_variants(kinds: tuple[str, str, str]) -> tuple[Callable[..., None], Callable[..., None]]:
    """The accumulating entry point and the `_from_row` one, in one module."""
    cpu = resolve_cpu("host")
    module = ir.Module("rows")
    module.triple = cpu.triple
    accumulate = get_gemm(module, cpu, *kinds)
    from_row = get_gemm(module, cpu, *kinds, from_row=True)
    assert from_row.name == "weir_gemm_{}_{}_{}_from_row".format(*kinds)
    for fn in (accumulate, from_row):
        fn.linkage = "external"
    jit = Jit(module, cpu)
    _row_variants.jits.append(jit)  # type: ignore[attr-defined]
    return _GEMM_TYPE(jit.address(accumulate.name)), _ROW_GEMM_TYPE(jit.address(from_row.name))


_row_variants.jits = []  # type: ignore[attr-defined]


@pytest.mark.parametrize("kinds", COMBINATIONS, ids="-".join)
def test_from_row_starts_every_row_of_c_from_the_row(kinds: tuple[str, str, str]) -> None:
    """`_from_row` computes C = row + A @ B over C full of poison, through both paths, every
    depth block and K = 0 (C = the row in each of its rows), bit for bit what accumulating
    into C filled with the row gives (the sums start from the row in both); the padding past
    each row of C and past the row's N values is neither written nor read."""
    lhs, rhs, acc = kinds
    accumulate, from_row = _row_variants(kinds)
    for m, n, k in EDGE_SHAPES + BLOCK_SHAPES + [(17, 33, 65), (41, 70, 300)]:
        a, b = random(lhs, (m, k)), random(rhs, (k, n))
        row = padded(random(acc, (1, n)), 5, poison(acc))
        filled = np.repeat(row, m, axis=0)
        accumulate(m, n, k, a.ctypes.data, _row_stride(a), b.ctypes.data, _row_stride(b),
                   filled.ctypes.data, max(n, 1))
        c = padded(np.full((m, n), poison(acc), DTYPES[acc]), 3, -7777)
        from_row(m, n, k, a.ctypes.data, _row_stride(a), b.ctypes.data, _row_stride(b),
                 c.ctypes.data, _row_stride(c), row.ctypes.data)
        check(c, expected(a, b, np.repeat(row, m, axis=0)), a, b)
        np.testing.assert_array_equal(c, filled)
        assert (c.base[:, n:] == -7777).all(), "the padding of C was written"


def test_prepacked_weights_are_prefetched_a_panel_ahead() -> None:
    """Prepacked B (constant weights, cold on every call) has tiles that prefetch the next
    micro-panel, NR * K elements on, two rows of k per iteration; packed B (just written to
    L2 by pack_b) has none. Results: tests/e2e/test_prepacked_weights.py."""
    cpu = resolve_cpu("host")
    for prepacked in (False, True):
        module = ir.Module("prefetch")
        module.triple = cpu.triple
        get_gemm(module, cpu, "f32", "f32", "f32", prepacked=prepacked)
        tiles = [fn for fn in module.functions if ".tile" in fn.name]
        prefetching = [fn for fn in tiles if fn.name.endswith(".prefetch")]
        assert bool(prefetching) == prepacked
        for fn in prefetching:
            plain = module.globals[fn.name[:-len(".prefetch")]]
            assert len(fn.args) == len(plain.args) + 1  # the next panel
            assert "llvm.prefetch" in str(fn)
    driver = str(module.globals["weir_gemm_f32_f32_f32.driver_prepacked"])
    assert ".prefetch" in driver and ".prepacked\"(" in driver  # both kinds of tile are run

"""The llvm-cpu few-rows kernels (gemv.py) against numpy, B row-major and B given transposed:
every element-type combination of the GEMM, row counts across the kernels' row groups, ragged
columns and depths around the vector width and the strips of C, row strides with poisoned
padding, operands that end at an unreadable page, accumulation into C, and builds for generic
x86-64 and AVX2 run on this machine."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

from test_gemm import (COMBINATIONS, DTYPES, _GEMM_TYPE, _guarded, _row_stride, check, expected,
                       padded, poison, random)
from weir.compiler.targets.llvm_cpu.gemv import get_gemv
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
from weir.compiler.targets.llvm_cpu.target import Jit

# (M, N, K): no rows, one element, rows in each group size and past one group, columns and
# depths short of a vector, ragged, and past a 4 KiB strip of C.
SHAPES = [(0, 5, 7), (3, 0, 7), (2, 7, 0), (1, 1, 1), (1, 17, 3), (2, 9, 33), (3, 31, 5),
          (4, 70, 17), (5, 33, 64), (1, 1100, 9), (2, 2049, 6), (3, 5, 1030)]


class Gemv:
    """One compiled `weir_gemv[_bt]_*`, called on 2-d numpy views with unit column strides
    (B as given: k x n, or n x k when transposed)."""

    def __init__(self, cpu_name: str, kinds: tuple[str, str, str], transposed: bool) -> None:
        cpu = resolve_cpu(cpu_name)
        module = ir.Module(f"gemv_{cpu_name}")
        module.triple = cpu.triple
        fn = get_gemv(module, cpu, *kinds, transposed)
        fn.linkage = "external"
        self.transposed = transposed
        self.jit = Jit(module, cpu)
        self.fn: Callable[..., None] = _GEMM_TYPE(self.jit.address(fn.name))

    def __call__(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        (m, k), n = a.shape, c.shape[1]
        assert b.shape == ((n, k) if self.transposed else (k, n))
        self.fn(m, n, k, a.ctypes.data, _row_stride(a), b.ctypes.data, _row_stride(b),
                c.ctypes.data, _row_stride(c))


@cache
def compiled(cpu_name: str, kinds: tuple[str, str, str], transposed: bool) -> Gemv:
    return Gemv(cpu_name, kinds, transposed)


def run_case(cpu_name: str, kinds: tuple[str, str, str], transposed: bool,
             shape: tuple[int, int, int], pad: int = 0) -> None:
    lhs, rhs, acc = kinds
    m, n, k = shape
    a, b, c = random(lhs, (m, k)), random(rhs, (k, n)), random(acc, (m, n))
    reference = expected(a, b, c)
    given = np.ascontiguousarray(b.T) if transposed else b
    if pad:
        a, given = padded(a, pad, poison(lhs)), padded(given, pad + 3, poison(rhs))
        c = padded(c, pad + 1, -7777)
    compiled(cpu_name, kinds, transposed)(a, given, c)
    check(c, reference, a, b)
    if pad:
        assert (c.base[:, n:] == -7777).all(), "the padding of C was written"


@pytest.mark.parametrize("transposed", [False, True], ids=["b", "bt"])
@pytest.mark.parametrize("kinds", COMBINATIONS, ids="-".join)
def test_types_and_shapes(kinds: tuple[str, str, str], transposed: bool) -> None:
    for shape in SHAPES:
        run_case("host", kinds, transposed, shape)


@pytest.mark.parametrize("transposed", [False, True], ids=["b", "bt"])
@pytest.mark.parametrize("kinds", COMBINATIONS[:5], ids="-".join)
def test_row_strides_with_poisoned_padding(kinds: tuple[str, str, str], transposed: bool) -> None:
    for shape in [(1, 33, 65), (3, 1, 17), (4, 70, 300), (2, 1500, 7)]:
        run_case("host", kinds, transposed, shape, pad=5)


@pytest.mark.parametrize("transposed", [False, True], ids=["b", "bt"])
@pytest.mark.parametrize(("cpu_name", "kinds"), [
    *(("x86-64", kinds) for kinds in COMBINATIONS[:5]),
    ("x86-64-v3", ("f32", "f32", "f32")), ("x86-64-v3", ("f16", "i8", "f32"))],
    ids=lambda value: value if isinstance(value, str) else "-".join(value))
def test_narrower_targets_run_here(cpu_name: str, kinds: tuple[str, str, str],
                                   transposed: bool) -> None:
    for shape in [(0, 3, 3), (1, 1, 1), (3, 9, 5), (4, 37, 70), (2, 1100, 13)]:
        run_case(cpu_name, kinds, transposed, shape, pad=2)


@pytest.mark.parametrize("transposed", [False, True], ids=["b", "bt"])
@pytest.mark.parametrize("kinds", [("f32", "f32", "f32"), ("f16", "bf16", "f32"),
                                   ("i8", "i8", "i32")], ids="-".join)
def test_nothing_is_read_past_an_operand(kinds: tuple[str, str, str], transposed: bool) -> None:
    lhs, rhs, acc = kinds
    for m, n, k in [(1, 3, 7), (3, 17, 1), (2, 45, 33), (4, 5, 9)]:
        b_shape = (n, k) if transposed else (k, n)
        a, given, c = _guarded(DTYPES[lhs], (m, k)), _guarded(DTYPES[rhs], b_shape), \
            _guarded(DTYPES[acc], (m, n))
        a[...], given[...], c[...] = random(lhs, (m, k)), random(rhs, b_shape), \
            random(acc, (m, n))
        b = given.T if transposed else given
        reference = expected(a, b, c)
        compiled("host", kinds, transposed)(a, given, c)
        check(c, reference, a, b)


def test_row_major_sums_k_in_order_into_c() -> None:
    """Each element gains its products one at a time in k order, rounding after each, starting
    from C: with A = 1 the result is the sequential f32 sum of C and a column of B."""
    k = 1027
    a = np.ones((1, k), np.float32)
    b = np.random.default_rng(3).uniform(0.1, 1.0, (k, 3)).astype(np.float32)
    b[:, 0] = np.float32(0.4)
    c = np.full((1, 3), 0.7, np.float32)
    total = c[0].copy()
    for row in b:
        total = (total + row).astype(np.float32)
    compiled("host", ("f32", "f32", "f32"), False)(a, b, c)
    np.testing.assert_array_equal(c[0], total)


def test_declared_once_per_module() -> None:
    cpu = resolve_cpu("host")
    module = ir.Module("shared")
    first = get_gemv(module, cpu, "f32", "f32", "f32", True)
    assert get_gemv(module, cpu, "f32", "f32", "f32", True) is first
    assert get_gemv(module, cpu, "f32", "f32", "f32", False) is not first


@pytest.mark.parametrize("transposed", [False, True], ids=["b", "bt"])
def test_wide_targets_use_their_widest_registers(transposed: bool) -> None:
    for cpu_name, register in [("x86-64-v4", "%zmm"), ("x86-64-v3", "%ymm")]:
        cpu = resolve_cpu(cpu_name)
        module = ir.Module("asm")
        module.triple = cpu.triple
        get_gemv(module, cpu, "f32", "f32", "f32", transposed).linkage = "external"
        assembly = cpu.target_machine().emit_assembly(llvm.parse_assembly(str(module)))
        assert register in assembly

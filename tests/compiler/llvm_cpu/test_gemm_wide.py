"""The GEMM microkernel's wide tiles (6 rows x 64 columns on AVX-512, gemm_base's `_blocking`)
over prepacked B in panels of 64 columns, against numpy and bit for bit against the narrow
tiles over their own 32-column panels (each sum is the same chain of multiply-adds in k order):
accumulating into C, from zero and from a row, ragged rows around the tile heights and past a
packed block of A, columns past a block of B and a zero-padded last panel, depth past a packed
block, and C with padding that must stay untouched."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import cache

import llvmlite.ir as ir
import numpy as np
import pytest

from weir.compiler.targets.llvm_cpu.gemm import get_gemm, panel_columns
from weir.compiler.targets.llvm_cpu.gemm_base import _blocking
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
from weir.compiler.targets.llvm_cpu.target import Jit

HOST = resolve_cpu("host")
pytestmark = pytest.mark.skipif(HOST.vector_bits != 512,
                                reason="wide GEMM tiles exist on AVX-512 only")
_ARGS = [ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
         ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64]
_GEMM = ctypes.CFUNCTYPE(None, *_ARGS)
_ROW_GEMM = ctypes.CFUNCTYPE(None, *_ARGS, ctypes.c_void_p)
# (M, N, K): one row, each tile height (2, 4, 6) and ragged ones, rows past a packed block of A
# (mc = 512), a zero-padded last panel (N = 96), columns past a block of B (nc = 256), depth 1,
# odd depth and depth past a packed block (kc = 256).
SHAPES = [(1, 64, 1), (2, 64, 3), (5, 128, 17), (7, 96, 40), (13, 64, 300), (49, 320, 64),
          (200, 256, 513), (530, 64, 33)]
rng = np.random.default_rng(5)


@cache
def entry_points(wide: bool) -> tuple[Callable[..., None], Callable[..., None],
                                      Callable[..., None]]:
    """The prepacked f32 entry points that start from C, from zero and from a row."""
    module = ir.Module(f"wide_{wide}")
    module.triple = HOST.triple
    fns = [get_gemm(module, HOST, "f32", "f32", "f32", from_zero, True, from_row, wide)
           for from_zero, from_row in ((False, False), (True, False), (False, True))]
    for fn in fns:
        fn.linkage = "external"
    jit = Jit(module, HOST)
    _JITS.append(jit)
    return _GEMM(jit.address(fns[0].name)), _GEMM(jit.address(fns[1].name)), \
        _ROW_GEMM(jit.address(fns[2].name))


_JITS: list[Jit] = []  # kept alive as long as the entry points are called


def panels(b: np.ndarray, nr: int) -> np.ndarray:
    """B (K x N) as the prepacked layout: panel p's row k at p*K*nr + k*nr, the last panel
    padded with zeros."""
    k, n = b.shape
    whole = np.pad(b, [(0, 0), (0, -n % nr)])
    return np.ascontiguousarray(whole.reshape(k, -1, nr).transpose(1, 0, 2))


def run(wide: bool, start: str, a: np.ndarray, b: np.ndarray, c: np.ndarray,
        row: np.ndarray) -> np.ndarray:
    """C (with 3 columns of padding) after the entry point for `start`."""
    m, k = a.shape
    n = b.shape[1]
    packed = panels(b, panel_columns(HOST, "f32", wide))
    out = np.full((m, n + 3), -7777.0, np.float32)
    out[:, :n] = c
    accumulate, from_zero, from_row = entry_points(wide)
    args = (m, n, k, a.ctypes.data, k, packed.ctypes.data, k, out.ctypes.data, n + 3)
    if start == "row":
        from_row(*args, row.ctypes.data)
    else:
        (from_zero if start == "zero" else accumulate)(*args)
    assert (out[:, n:] == -7777.0).all(), "the padding of C was written"
    return out[:, :n]


def test_wide_blocking_is_six_rows_of_four_vectors() -> None:
    """24 accumulators, like the narrow tile's 12 x 2, in 64-column panels."""
    wide, narrow = _blocking(HOST, "f32", True), _blocking(HOST, "f32")
    assert (wide.mr, wide.nr_vectors, wide.nr) == (6, 4, 64)
    assert wide.mr * wide.nr_vectors == narrow.mr * narrow.nr_vectors
    assert panel_columns(HOST, "f32", True) == 64 and panel_columns(HOST, "f32") == 32


@pytest.mark.parametrize("start", ["c", "zero", "row"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_wide_tiles_match_numpy_and_the_narrow_tiles(start: str,
                                                     shape: tuple[int, int, int]) -> None:
    m, n, k = shape
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    row = rng.uniform(-1, 1, n).astype(np.float32)
    got = run(True, start, a, b, c, row)
    base = {"c": c.astype(np.float64), "zero": 0.0, "row": row.astype(np.float64)}[start]
    reference = base + a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=8 * np.finfo(np.float32).eps * k)
    np.testing.assert_array_equal(got, run(False, start, a, b, c, row))

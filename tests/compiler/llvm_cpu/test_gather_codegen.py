"""The llvm-cpu code of a gather: an embedding lookup's row index is checked once per row (the
check on the column is proven by the loop bound), and the row copy is vector loads and stores;
a failed check returns its number and fills the fault record, which names the check."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest
from lowered import lowered_entry

from weir.compiler.targets.llvm_cpu.target import Jit

EMBEDDING = """
func.func @main(%table: tensor<100xWxf32>, %ids: tensor<2x5xi64>) -> tensor<2x5xWxf32> {
  %e = tensor.empty() : tensor<2x5xWxf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x5xi64>) outs(%e : tensor<2x5xWxf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %j = linalg.index 2 : index
    %x = tensor.extract %table[%i, %j] : tensor<100xWxf32>
    linalg.yield %x : f32
  } -> tensor<2x5xWxf32>
  return %0 : tensor<2x5xWxf32>
}"""


def _jit(width: int) -> tuple[Jit, tuple[str, ...]]:
    """The embedding of rows of `width` as one native entry, and its checks."""
    lowered = lowered_entry(EMBEDDING.replace("W", str(width)), "weir_gather")
    return Jit(lowered.module, lowered.cpu), lowered.entry.checks


# The row loop becomes one copy of the row's bytes (a memcpy that codegen expands into vector
# moves when short), or a vectorised loop.
@pytest.mark.parametrize("width", [16, 256])
def test_the_row_copy_is_vectorised_with_one_check_per_row(width: int) -> None:
    jit, checks = _jit(width)
    assert len(checks) == 1 and checks[0].startswith("tensor.extract at ")
    code = jit.optimized_ir
    assert re.search(rf"call void @llvm\.memcpy\S* .*, i64 {width * 4}, i1 false\)", code) or (
        re.search(r"load <\d+ x float>", code) and re.search(r"store <\d+ x float>", code))
    # Row checks (against the table's 100 rows): at most one per output row (2x5), none per
    # element; the column check is gone (the loop bound proves it).
    row_checks = re.findall(r"icmp (?:samesign )?ult i64 %\S+, 100\b", code)
    assert 1 <= len(row_checks) <= 10
    assert not re.search(rf"icmp \w+ (?:\w+ )?i64 %\S+, {width}\b", code)


def test_an_index_out_of_range_returns_its_check_and_fault_record() -> None:
    jit, _ = _jit(16)
    entry = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                             ctypes.c_int64, ctypes.c_void_p)(jit.address("weir_gather"))
    table = np.arange(100 * 16, dtype=np.float32).reshape(100, 16)
    ids = np.array([[1, 2, 3, 4, 5], [6, 7, 99, 0, 1]], dtype=np.int64)
    out = np.zeros((2, 5, 16), dtype=np.float32)
    pointers = (ctypes.c_void_p * 3)(ids.ctypes.data, table.ctypes.data, out.ctypes.data)
    record = (ctypes.c_int64 * 4)()
    assert entry(pointers, None, 0, 1 << 20, record) == 0
    np.testing.assert_array_equal(out, table[ids])
    ids[1, 2] = -5
    assert entry(pointers, None, 0, 1 << 20, record) == 1
    assert tuple(record) == (1, 0, -5, 100)

"""An elementwise dispatch's workgroups are sized by the work of an element: a chain of
exponentials and divisions over a few thousand elements (an LSTM step's gates) is cut into
several workgroups, so the threads of a device share it, where the same count of additions
stays one workgroup. The split chain's results match numpy's on both drivers."""

from __future__ import annotations

import numpy as np
import pytest
from lowered import kernel_description, lowered_entry

import weir.api as weir
from weir.compiler.targets.llvm_cpu.elementwise import COSTLY_OP_WORK, element_work
from weir.compiler.targets.llvm_cpu.kernel_values import KernelValues


def _program(body: str) -> str:
    return f"""
    func.func @f(%x: tensor<8x256xf32>, %y: tensor<8x256xf32>) -> tensor<8x256xf32> {{
      %e = tensor.empty() : tensor<8x256xf32>
      %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}} ins(%x, %y : tensor<8x256xf32>, tensor<8x256xf32>) outs(%e : tensor<8x256xf32>) {{
      ^bb0(%a: f32, %b: f32, %o: f32):
        {body}
      }} -> tensor<8x256xf32>
      return %r : tensor<8x256xf32>
    }}"""


# sigmoid(a) * tanh(b): two exponentials' worth of polynomials and a division.
GATES = _program("""%one = arith.constant 1.0 : f32
        %n = arith.negf %a : f32
        %e1 = math.exp %n : f32
        %d = arith.addf %e1, %one : f32
        %s = arith.divf %one, %d : f32
        %t = math.tanh %b : f32
        %v = arith.mulf %s, %t : f32
        linalg.yield %v : f32""")
SUM = _program("""%v = arith.addf %a, %b : f32
        linalg.yield %v : f32""")


def test_costly_elements_split_into_workgroups() -> None:
    entry = lowered_entry(GATES).entry
    assert entry.grid_extent == 8 and entry.grid_tile < 8  # rows in several workgroups


def test_cheap_elements_stay_one_workgroup() -> None:
    entry = lowered_entry(SUM).entry
    assert entry.grid_extent == 8 and entry.grid_tile >= 8  # one workgroup of all 8 rows


def test_element_work_weighs_costly_ops() -> None:
    def work(src: str) -> int:
        return element_work(KernelValues(kernel_description(src)))
    # negf, addf, mulf and the yield's element: simple; exp, divf, tanh: costly.
    assert work(GATES) == 1 + 3 + 3 * COSTLY_OP_WORK
    assert work(SUM) == 1 + 1


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_split_gates_compute_what_numpy_does(device: str) -> None:
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((8, 256)).astype(np.float32) * 4 for _ in range(2))
    module = weir.compile_string(GATES, "gates.mlir",
                                 weir.CompilerOptions(target_backends=("llvm-cpu",)))
    got = weir.load([module], device=device).lookup_function("f")(x, y)
    expected = np.tanh(y.astype(np.float64)) / (1.0 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)

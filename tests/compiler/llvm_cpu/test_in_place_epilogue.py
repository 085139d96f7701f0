"""An epilogue that finishes its root in place (a matmul's bias was its init, the ReLU
overwrites each element of the result where it lies) compiles to plain vector stores on x86:
LLVM's code generator turns `store (select m, x, y)` of an x just loaded from the same address
into a masked store (vmaskmovps), which AMD CPUs microcode; the root's reads are frozen so that
it cannot (a fused ReLU cost more than its GEMM before). The values stay numpy's."""

from __future__ import annotations

import numpy as np
import pytest
from lowered import lowered_entry

import weir.api as weir
from weir.compiler.targets.llvm_cpu.object_code import optimize

RELU = {"maximumf": "%m = arith.maximumf %in, %zero : f32",
        "select": "%gt = arith.cmpf ugt, %in, %zero : f32\n    %m = arith.select %gt, %in, %zero : f32"}


def program(relu: str) -> str:
    return f"""
    func.func @f(%x: tensor<64x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<64x32xf32> {{
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<64x32xf32>
      %i = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e : tensor<64x32xf32>) dimensions = [0]
      %c = linalg.matmul ins(%x, %w : tensor<64x16xf32>, tensor<16x32xf32>) outs(%i : tensor<64x32xf32>) -> tensor<64x32xf32>
      %r = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}} ins(%c : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {{
      ^bb0(%in: f32, %out: f32):
        {RELU[relu]}
        linalg.yield %m : f32
      }} -> tensor<64x32xf32>
      return %r : tensor<64x32xf32>
    }}"""


@pytest.mark.parametrize("relu", sorted(RELU))
def test_no_masked_store_on_avx2(relu: str) -> None:
    lowered = lowered_entry(program(relu), cpu_name="x86-64-v3")
    module, cpu = lowered.module, lowered.cpu
    assert "freeze" in str(module)
    assembly = cpu.target_machine().emit_assembly(optimize(str(module), cpu))
    assert "vmaxps" in assembly or "vcmp" in assembly  # the ReLU is vectorised...
    assert "vmaskmov" not in assembly  # ...and stored whole


@pytest.mark.parametrize("relu", sorted(RELU))
def test_values(relu: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 16)).astype(np.float32)
    w = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    module = weir.compile_string(program(relu), "relu.mlir",
                                 weir.CompilerOptions(target_backends=("llvm-cpu",)))
    got = weir.load([module], device="local-sync").lookup_function("f")(x, w, b)
    expected = np.maximum(x.astype(np.float64) @ w + b, 0.0)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)

"""The workgroup count the host program computes (weir/format/workgroups.py: a constant, or
ceil(push constant / tile) at run time) is the grid the llvm-cpu loader checks and runs, for
sizes around the tile and for an empty tensor, on both devices, with llvm-cpu alone and beside
the reference target (whose binary runs any count)."""

from __future__ import annotations

import numpy as np
import pytest

import weir.api as weir

SOURCE = """
func.func @rows(%a: tensor<?x1024xf32>) -> tensor<?x1024xf32> {
  %0 = math.exp %a : tensor<?x1024xf32>
  return %0 : tensor<?x1024xf32>
}"""


@pytest.mark.parametrize("targets", [("llvm-cpu",), ("reference", "llvm-cpu")],
                         ids=["llvm-cpu", "reference+llvm-cpu"])
@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_dynamic_counts_cover_every_row(targets: tuple[str, ...], device: str) -> None:
    module = weir.compile_string(SOURCE, "rows.mlir", weir.CompilerOptions(target_backends=targets))
    rows = weir.load([module], device=device).lookup_function("rows")
    rng = np.random.default_rng(3)
    for n in (0, 1, 31, 32, 33, 70):
        x = rng.standard_normal((n, 1024)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(rows(x)), np.exp(x), rtol=1e-6)

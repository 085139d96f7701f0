"""Test programs written with the `check` dialect (tests/e2e/check/*.mlir), compiled for every
host target and run by weir-check-module's machinery on both local drivers: every test function
must pass, and a failed check anywhere fails the test with the values it saw."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import DRIVERS, TARGETS, compiled

import weir.api as weir
from weir.tools.check_module import CheckResult, run_check_tests

PROGRAMS = sorted((Path(__file__).parent / "check").glob("*.mlir"))
WEIGHT_BYTES = 1024 * 1024 * 4


def _run(module_bytes: bytes | Path, driver: str) -> list[CheckResult]:
    context = weir.load([module_bytes], device=driver)
    return run_check_tests(context, context.last_module())


def _assert_all_passed(results: list[CheckResult]) -> None:
    failed = {r.name: r.failures for r in results if not r.passed}
    assert not failed, "\n".join(f"{name}: {'; '.join(f)}" for name, f in failed.items())


def test_there_are_enough_programs() -> None:
    assert len(PROGRAMS) >= 15


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_check_program(program: Path, target: str, driver: str) -> None:
    results = _run(compiled(program.read_text(), target), driver)
    assert results, f"{program.name} has no test functions"
    _assert_all_passed(results)


# A 1024x1024 f32 weight read by two matmuls in one function and by a third in another: the
# module file holds its 4 MiB once, and the runtime reads it from the file's mapping.
WEIGHTS = """
func.func @two_layers() {
  %x = util.unfoldable_constant dense<1.0> : tensor<1x1024xf32>
  %w = util.unfoldable_constant dense<0.5> : tensor<1024x1024xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x1024xf32>, tensor<1024x1024xf32>) outs(%acc : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %z = linalg.matmul ins(%y, %w : tensor<1x1024xf32>, tensor<1024x1024xf32>) outs(%acc : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  check.expect_eq_const(%y, dense<512.0> : tensor<1x1024xf32>) : tensor<1x1024xf32>
  check.expect_eq_const(%z, dense<262144.0> : tensor<1x1024xf32>) : tensor<1x1024xf32>
  return
}

func.func @same_weight_elsewhere() {
  %x = util.unfoldable_constant dense<2.0> : tensor<1x1024xf32>
  %w = util.unfoldable_constant dense<0.5> : tensor<1024x1024xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x1024xf32>, tensor<1024x1024xf32>) outs(%acc : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  check.expect_eq_const(%y, dense<1024.0> : tensor<1x1024xf32>) : tensor<1x1024xf32>
  return
}
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_weight_used_twice_is_stored_once_and_mapped(target: str, tmp_path: Path) -> None:
    data = compiled(WEIGHTS, target)
    # One copy of the 4 MiB weight and the code: llvm-cpu's is about 290 KiB with AVX-512 (the
    # GEMM microkernel's entry points and tiles); a second copy would add 4 MiB.
    assert WEIGHT_BYTES < len(data) < WEIGHT_BYTES + 512 * 1024
    path = tmp_path / "weights.wvm"
    path.write_bytes(data)
    module = weir.load_module_file(path)
    weights = [s for s in module.image.segments if s.nbytes == WEIGHT_BYTES]
    assert len(weights) == 1 and type(weights[0].obj).__name__ == "mmap"
    np.testing.assert_array_equal(np.frombuffer(weights[0], np.float32)[:4], 0.5)
    for driver in DRIVERS:
        _assert_all_passed(_run(path, driver))

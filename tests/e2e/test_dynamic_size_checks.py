"""Sizes a program requires to agree but leaves dynamic (`?`) are checked on the host before any
dispatch runs, on every target and driver: a mismatch is one RuntimeFault naming the op's
location, the op, the function, both sides and both sizes; the same context then runs a correct
call. Without the checks, llvm-cpu read past the end of a buffer (a wrong result, or SIGSEGV for
a large one) and a matmul used one operand's contraction size; the crash cases run in a child
process so that a regression cannot take pytest down with it."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import compiled, DRIVERS, TARGETS

import weir.api as weir
from weir.errors import RuntimeFault

REPO = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(17)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@dataclass(frozen=True)
class Case:
    source: str
    function: str
    good: tuple[Any, ...]
    expected: Callable[..., Any] | None  # numpy's result for the good arguments
    bad: tuple[Any, ...]
    message: str  # after "test.mlir:LINE:COL: "


ADD = """
func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.addf %a, %b : tensor<?xf32>
  return %0 : tensor<?xf32>
}"""

MATMUL = """
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}"""

BIAS = """
func.func @bias(%a: tensor<?x?xf32>, %row: tensor<?xf32>, %col: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %a, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                                        affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %row, %col : tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%x: f32, %r: f32, %c: f32, %o: f32):
    %s = arith.addf %x, %r : f32
    %t = arith.mulf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}"""

CHAIN = """
func.func @chain(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %sum = arith.addf %a, %b : tensor<?x?xf32>
  %e = math.exp %sum : tensor<?x?xf32>
  %0 = arith.mulf %e, %c : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}"""

BATCH_MATMUL = """
func.func @bmm(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %a, %c0 : tensor<?x?x?xf32>
  %m = tensor.dim %a, %c1 : tensor<?x?x?xf32>
  %k = tensor.dim %b, %c2 : tensor<?x?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n, %m, %k) : tensor<?x?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %0 = linalg.batch_matmul ins(%a, %b : tensor<?x?x?xf32>, tensor<?x?x?xf32>) outs(%acc : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}"""

MATVEC = """
func.func @mv(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %0 = linalg.matvec ins(%a, %x : tensor<?x?xf32>, tensor<?xf32>) outs(%y : tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}"""

TRANSPOSE = """
func.func @t(%a: tensor<?x?xf32>, %m: index, %n: index) -> tensor<?x?xf32> {
  %e = tensor.empty(%n, %m) : tensor<?x?xf32>
  %0 = linalg.transpose ins(%a : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) permutation = [1, 0]
  return %0 : tensor<?x?xf32>
}"""

REDUCE = """
func.func @r(%a: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %0 = linalg.reduce ins(%a : tensor<?x?xf32>) outs(%init : tensor<?xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<?xf32>
}"""

SOFTMAX = """
func.func @s(%a: tensor<?x?xf32>, %o: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = linalg.softmax dimension(1) ins(%a : tensor<?x?xf32>) outs(%o : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}"""

CONV = """
func.func @conv(%x: tensor<1x?x?x2xf32>, %w: tensor<?x?x2x3xf32>, %o: tensor<1x?x?x3xf32>) -> tensor<1x?x?x3xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x?x?x2xf32>, tensor<?x?x2x3xf32>) outs(%o : tensor<1x?x?x3xf32>) -> tensor<1x?x?x3xf32>
  return %0 : tensor<1x?x?x3xf32>
}"""

DEPTHWISE = """
func.func @dw(%x: tensor<1x?x?x?xf32>, %w: tensor<3x3x?xf32>, %o: tensor<1x?x?x?xf32>) -> tensor<1x?x?x?xf32> {
  %0 = linalg.depthwise_conv_2d_nhwc_hwc
      ins(%x, %w : tensor<1x?x?x?xf32>, tensor<3x3x?xf32>) outs(%o : tensor<1x?x?x?xf32>) -> tensor<1x?x?x?xf32>
  return %0 : tensor<1x?x?x?xf32>
}"""

SLICES = """
func.func @slices(%a: tensor<?xf32>, %s: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %0 = tensor.insert_slice %s into %a[1] [%n] [1] : tensor<?xf32> into tensor<?xf32>
  return %0 : tensor<?xf32>
}"""

CONCAT = """
func.func @cat(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = tensor.concat dim(0) %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}"""

EXPAND = """
func.func @rows(%a: tensor<?xf32>, %n: index) -> tensor<?x4xf32> {
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [%n, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}"""

LOOP = """
func.func @loop(%a: tensor<?xf32>, %b: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<?xf32>) {
    %s = arith.addf %acc, %b : tensor<?xf32>
    scf.yield %s : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}"""

CALL = """
func.func @twice(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.addf %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @caller(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %t = func.call @twice(%a) : (tensor<?xf32>) -> tensor<?xf32>
  %0 = arith.subf %t, %b : tensor<?xf32>
  return %0 : tensor<?xf32>
}"""

A34, A35 = _f32(3, 4), _f32(3, 5)
CASES: dict[str, Case] = {
    "elementwise": Case(
        ADD, "f", (_f32(4), _f32(4)), np.add, (_f32(5), _f32(4)),
        "'arith.addf' in @f: dimension 0 of operand 0 (%a) differs from dimension 0 of "
        "operand 1 (%b): 5 vs 4"),
    "matmul_contraction": Case(
        MATMUL, "mm", (_f32(4, 8), _f32(8, 3)), np.matmul, (_f32(4, 8), _f32(7, 3)),
        "'linalg.matmul' in @mm: dimension 1 of operand 0 (%a) differs from dimension 0 of "
        "operand 1 (%b): 8 vs 7"),
    "broadcast_row": Case(
        BIAS, "bias", (A34, _f32(4), _f32(3)), lambda a, r, c: (a + r) * c[:, None],
        (A34, _f32(5), _f32(3)),
        "'linalg.generic' in @bias: dimension 1 of operand 0 (%a) differs from dimension 0 of "
        "operand 1 (%row): 4 vs 5"),
    "broadcast_column": Case(
        BIAS, "bias", (A35, _f32(5), _f32(3)), lambda a, r, c: (a + r) * c[:, None],
        (A35, _f32(5), _f32(2)),
        "'linalg.generic' in @bias: dimension 0 of operand 0 (%a) differs from dimension 0 of "
        "operand 2 (%col): 3 vs 2"),
    "fused_chain": Case(
        CHAIN, "chain", (A34, A34, A34), lambda a, b, c: np.exp(a + b) * c, (A34, A34, A35),
        "'arith.mulf' in @chain: dimension 1 of operand 0 (%e) differs from dimension 1 of "
        "operand 1 (%c): 4 vs 5"),
    "batch_matmul_batch": Case(
        BATCH_MATMUL, "bmm", (_f32(2, 3, 4), _f32(2, 4, 5)), np.matmul,
        (_f32(2, 3, 4), _f32(6, 4, 5)),
        "'linalg.batch_matmul' in @bmm: dimension 0 of operand 0 (%a) differs from dimension 0 "
        "of operand 1 (%b): 2 vs 6"),
    "matvec": Case(
        MATVEC, "mv", (A34, _f32(4), _f32(3)), lambda a, x, y: y + a @ x,
        (A34, _f32(6), _f32(3)),
        "'linalg.matvec' in @mv: dimension 1 of operand 0 (%a) differs from dimension 0 of "
        "operand 1 (%x): 4 vs 6"),
    "transpose_output": Case(
        TRANSPOSE, "t", (A34, 3, 4), lambda a, m, n: a.T, (A34, 3, 5),
        "'linalg.transpose' in @t: dimension 1 of operand 0 (%a) differs from dimension 0 of "
        "operand 1 (%e): 4 vs 5"),
    "reduce_output": Case(
        REDUCE, "r", (A34, _f32(3)), lambda a, init: init + a.sum(axis=1), (A34, _f32(4)),
        "'linalg.reduce' in @r: dimension 0 of operand 0 (%a) differs from dimension 0 of "
        "operand 1 (%init): 3 vs 4"),
    "softmax_output": Case(
        SOFTMAX, "s", (A34, A34),
        lambda a, o: np.exp(a - a.max(1, keepdims=True)) / np.exp(
            a - a.max(1, keepdims=True)).sum(1, keepdims=True), (A34, A35),
        "'linalg.softmax' in @s: dimension 1 of operand 0 (%a) differs from dimension 1 of "
        "operand 1 (%o): 4 vs 5"),
    "conv_window": Case(
        CONV, "conv", (_f32(1, 7, 6, 2), _f32(3, 2, 2, 3), np.zeros((1, 3, 3, 3), np.float32)),
        None, (_f32(1, 7, 6, 2), _f32(3, 2, 2, 3), np.zeros((1, 3, 4, 3), np.float32)),
        "'linalg.conv_2d_nhwc_hwcf' in @conv: dimension 2 (W) of operand 2 (%o) differs from "
        "the W size operand 0 (%x) and operand 1 (%w) give it (stride 2, dilation 1): 4 vs 3"),
    "depthwise_channels": Case(
        DEPTHWISE, "dw", (_f32(1, 5, 5, 2), _f32(3, 3, 2), np.zeros((1, 3, 3, 2), np.float32)),
        None, (_f32(1, 5, 5, 2), _f32(3, 3, 3), np.zeros((1, 3, 3, 2), np.float32)),
        "'linalg.depthwise_conv_2d_nhwc_hwc' in @dw: dimension 3 of operand 0 (%x) differs "
        "from dimension 2 of operand 1 (%w): 2 vs 3"),
    "insert_slice_window": Case(
        SLICES, "slices", (np.zeros(8, np.float32), np.ones(3, np.float32), 3),
        lambda a, s, n: np.r_[0, 1, 1, 1, 0, 0, 0, 0].astype(np.float32),
        (np.zeros(8, np.float32), np.ones(3, np.float32), 2),
        "'tensor.insert_slice' in @slices: dimension 0 of operand 0 (%s) differs from size 0 "
        "of the slice: 3 vs 2"),
    "concat_columns": Case(
        CONCAT, "cat", (A34, _f32(2, 4)), lambda a, b: np.concatenate([a, b]), (A34, A35),
        "'tensor.concat' in @cat: dimension 1 of operand 0 (%a) differs from dimension 1 of "
        "operand 1 (%b): 4 vs 5"),
    "expand_group": Case(
        EXPAND, "rows", (_f32(12), 3), lambda a, n: a.reshape(3, 4), (_f32(12), 2),
        "'tensor.expand_shape' in @rows: dimension 0 of operand 0 (%a) differs from the product "
        "of result dimensions 0, 1: 12 vs 8"),
    "inside_a_loop": Case(
        LOOP, "loop", (_f32(4), _f32(4), 3), lambda a, b, n: a + b + b + b,
        (_f32(4), _f32(5), 3),
        "'arith.addf' in @loop: dimension 0 of operand 0 (%acc) differs from dimension 0 of "
        "operand 1 (%b): 4 vs 5"),
    "after_a_call": Case(
        CALL, "caller", (_f32(4), _f32(4)), lambda a, b: a + a - b, (_f32(4), _f32(3)),
        "'arith.subf' in @caller: dimension 0 of operand 0 (%t) differs from dimension 0 of "
        "operand 1 (%b): 4 vs 3"),
}


@pytest.fixture(params=[(t, d) for t in TARGETS for d in DRIVERS],
                ids=lambda p: f"{p[0]}-{p[1]}")
def target_driver(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", list(CASES))
def test_a_mismatch_fails_before_the_dispatch_and_the_context_stays_usable(
        name: str, target_driver: tuple[str, str]) -> None:
    case = CASES[name]
    target, driver = target_driver
    context = weir.load([compiled(case.source, target)], device=driver)
    function = context.lookup_function(case.function)
    first = function(*case.good)
    with pytest.raises(RuntimeFault) as raised:
        function(*case.bad)
    assert re.fullmatch(r"test\.mlir:\d+:\d+: " + re.escape(case.message), str(raised.value)), \
        str(raised.value)
    again = function(*case.good)
    np.testing.assert_array_equal(again, first)
    if case.expected is not None:
        np.testing.assert_allclose(first, case.expected(*case.good), rtol=1e-5, atol=1e-5)


POOL = """
func.func @pool(%x: tensor<1x?x?x2xf32>, %w: tensor<2x2xf32>, %o: tensor<1x?x?x2xf32>) -> tensor<1x?x?x2xf32> {
  %0 = linalg.pooling_nhwc_sum ins(%x, %w : tensor<1x?x?x2xf32>, tensor<2x2xf32>) outs(%o : tensor<1x?x?x2xf32>) -> tensor<1x?x?x2xf32>
  return %0 : tensor<1x?x?x2xf32>
}"""


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_pooling_window_mismatch_fails_on_llvm_cpu(driver: str) -> None:
    # llvm-cpu only: the reference target does not compile pooling over dynamic shapes yet.
    function = weir.load([compiled(POOL, "llvm-cpu")], device=driver).lookup_function("pool")
    x, w = _f32(1, 5, 5, 2), np.ones((2, 2), np.float32)
    with pytest.raises(RuntimeFault, match=re.escape(
            "'linalg.pooling_nhwc_sum' in @pool: dimension 1 (H) of operand 2 (%o) differs from "
            "the H size operand 0 (%x) and operand 1 (%w) give it (stride 1, dilation 1): 5 vs 4")):
        function(x, w, np.zeros((1, 5, 4, 2), np.float32))
    got = function(x, w, np.zeros((1, 4, 4, 2), np.float32))
    expected = sum(x[:, i:i + 4, j:j + 4] for i in (0, 1) for j in (0, 1))
    np.testing.assert_allclose(got, expected, rtol=1e-5)


TRANSFER = """
func.func @move(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %b = flow.tensor.transfer %a : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  %0 = arith.mulf %b, %b : tensor<?xf32>
  return %0 : tensor<?xf32>
}"""


@pytest.mark.parametrize("elide", [True, False], ids=["shared", "copied"])
def test_a_transfer_checks_the_sizes_it_states(target_driver: tuple[str, str],
                                               elide: bool) -> None:
    target, driver = target_driver
    options = weir.CompilerOptions(
        target_backends=(target,),
        target_devices=(weir.TargetDevice("device_a", "local", 0),
                        weir.TargetDevice("device_b", "local", 1)),
        disabled_passes=frozenset() if elide else frozenset({"elide-transfers"}))
    module = weir.compile_string(TRANSFER, "test.mlir", options)
    move = weir.load([module], device=[driver, driver]).lookup_function("move")
    a = np.arange(4, dtype=np.float32)
    with pytest.raises(RuntimeFault, match=re.escape(
            "'flow.tensor.transfer' in @move: dimension 0 of operand 0 (%a) differs from size 0 "
            "of the transfer's {...}: 4 vs 6")):
        move(a, 6)
    np.testing.assert_array_equal(move(a, 4), a * a)


# ----------------------------------------------------------------------- in a child process


def _module_file(tmp_path: Path, source: str, target: str) -> Path:
    path = tmp_path / f"{target}.wvm"
    path.write_bytes(compiled(source, target))
    return path


def _run_module(module: Path, driver: str, *inputs: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "weir.tools.run_module", f"--device={driver}",
         f"--module={module}", "--function=f", *(f"--input={i}" for i in inputs)],
        capture_output=True, text=True, cwd=REPO, timeout=300)


ADD_MESSAGE = ("'arith.addf' in @f: dimension 0 of operand 0 (%a) differs from dimension 0 of "
               "operand 1 (%b)")


@pytest.mark.parametrize("size", [5, 16777216])
def test_weir_run_module_reports_a_mismatch_in_one_line(
        tmp_path: Path, target_driver: tuple[str, str], size: int) -> None:
    # 16777216 elements against 4 crashed the process with SIGSEGV on llvm-cpu.
    target, driver = target_driver
    module = _module_file(tmp_path, ADD, target)
    failed = _run_module(module, driver, f"{size}xf32=1", "4xf32=10,20,30,40")
    assert failed.returncode == 1, failed.stderr
    assert re.fullmatch(r"test\.mlir:3:3: " + re.escape(f"{ADD_MESSAGE}: {size} vs 4") + "\n",
                        failed.stderr), failed.stderr
    assert failed.stdout == "EXEC @f\n"
    ok = _run_module(module, driver, "4xf32=1,2,3,4", "4xf32=10,20,30,40")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[-1] == "4xf32=11 22 33 44"


def test_the_python_api_reports_a_large_mismatch_and_goes_on(
        tmp_path: Path, target_driver: tuple[str, str]) -> None:
    target, driver = target_driver
    module = _module_file(tmp_path, ADD, target)
    child = textwrap.dedent(f"""
        import numpy as np
        import weir.api as weir
        from weir.errors import RuntimeFault
        context = weir.load([open({str(module)!r}, "rb").read()], device={driver!r})
        f = context.lookup_function("f")
        try:
            f(np.ones(16777216, np.float32), np.ones(4, np.float32))
        except RuntimeFault as e:
            print(e)
        print(f(np.ones(4, np.float32), np.full(4, 2, np.float32)))
        """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"test.mlir:3:3: {ADD_MESSAGE}: 16777216 vs 4",
                                        "[3. 3. 3. 3.]"]

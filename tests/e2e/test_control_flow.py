"""Host control flow end to end: scf.for / scf.if / scf.while with dynamic bounds and conditions,
tensors (static and dynamic shapes) and scalars carried across iterations, dispatches and calls
inside regions, compared with the same computation in numpy."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import weir.api as weir
from weir.errors import CompileError
from weir.runtime.api import BufferView, Context, Instance, NativeModule, export

Runner = Callable[..., object]  # the `run` fixture (conftest.py)

RNG = np.random.default_rng(11)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


FOR_ACCUMULATE = """
func.func @accumulate(%a: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<8xf32>) {
    %s = arith.addf %acc, %a : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}"""


@pytest.mark.parametrize("n", [0, 1, 5])
def test_for_accumulates_a_tensor_a_dynamic_number_of_times(run: Runner, n: int) -> None:
    a = _f32(8)
    expected = a.copy()
    for _ in range(n):
        expected = expected + a
    np.testing.assert_allclose(run(FOR_ACCUMULATE, "accumulate", a, n), expected, rtol=1e-6)


def test_for_with_bounds_and_step_from_arguments(run: Runner) -> None:
    src = """
    func.func @stepped(%a: tensor<4xi32>, %lb: index, %ub: index, %step: index) -> (tensor<4xi32>, index) {
      %c0 = arith.constant 0 : index
      %r:2 = scf.for %i = %lb to %ub step %step iter_args(%acc = %a, %count = %c0) -> (tensor<4xi32>, index) {
        %k = arith.index_cast %i : index to i32
        %e = tensor.empty() : tensor<4xi32>
        %ks = linalg.fill ins(%k : i32) outs(%e : tensor<4xi32>) -> tensor<4xi32>
        %s = arith.addi %acc, %ks : tensor<4xi32>
        %c1 = arith.constant 1 : index
        %next = arith.addi %count, %c1 : index
        scf.yield %s, %next : tensor<4xi32>, index
      }
      return %r#0, %r#1 : tensor<4xi32>, index
    }"""
    a = np.arange(4, dtype=np.int32)
    out, count = run(src, "stepped", a, 3, 17, 4)  # type: ignore[misc]
    steps = list(range(3, 17, 4))
    np.testing.assert_array_equal(out, a + sum(steps))
    assert count == len(steps)


def test_power_iteration_with_a_fixed_count(run: Runner) -> None:
    src = """
    func.func @power(%m: tensor<4x4xf32>, %v: tensor<4x1xf32>) -> tensor<4x1xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %zero = arith.constant 0.0 : f32
      %r = scf.for %i = %c0 to %c6 step %c1 iter_args(%x = %v) -> (tensor<4x1xf32>) {
        %e = tensor.empty() : tensor<4x1xf32>
        %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
        %y = linalg.matmul ins(%m, %x : tensor<4x4xf32>, tensor<4x1xf32>) outs(%acc : tensor<4x1xf32>) -> tensor<4x1xf32>
        %half = arith.constant dense<0.25> : tensor<4x1xf32>
        %scaled = arith.mulf %y, %half : tensor<4x1xf32>
        scf.yield %scaled : tensor<4x1xf32>
      }
      return %r : tensor<4x1xf32>
    }"""
    m = _f32(4, 4)
    v = _f32(4, 1)
    expected = v
    for _ in range(6):
        expected = (m @ expected) * np.float32(0.25)
    np.testing.assert_allclose(run(src, "power", m, v), expected, rtol=1e-5, atol=1e-6)


def test_while_runs_until_a_host_counter_reaches_an_argument(run: Runner) -> None:
    src = """
    func.func @doubling(%a: tensor<6xf32>, %n: index) -> (tensor<6xf32>, index) {
      %c0 = arith.constant 0 : index
      %r:2 = scf.while (%i = %c0, %x = %a) : (index, tensor<6xf32>) -> (index, tensor<6xf32>) {
        %go = arith.cmpi slt, %i, %n : index
        scf.condition(%go) %i, %x : index, tensor<6xf32>
      } do {
      ^bb0(%j: index, %y: tensor<6xf32>):
        %c1 = arith.constant 1 : index
        %next = arith.addi %j, %c1 : index
        %d = arith.addf %y, %y : tensor<6xf32>
        scf.yield %next, %d : index, tensor<6xf32>
      }
      return %r#1, %r#0 : tensor<6xf32>, index
    }"""
    a = _f32(6)
    for n in (0, 4):
        out, count = run(src, "doubling", a, n)  # type: ignore[misc]
        np.testing.assert_allclose(out, a * np.float32(2 ** n), rtol=1e-6)
        assert count == n


def test_while_with_scalars_only_counts_halvings(run: Runner) -> None:
    src = """
    func.func @halvings(%x: i64) -> i64 {
      %zero = arith.constant 0 : i64
      %r:2 = scf.while (%v = %x, %k = %zero) : (i64, i64) -> (i64, i64) {
        %one = arith.constant 1 : i64
        %more = arith.cmpi sgt, %v, %one : i64
        scf.condition(%more) %v, %k : i64, i64
      } do {
      ^bb0(%w: i64, %c: i64):
        %two = arith.constant 2 : i64
        %one = arith.constant 1 : i64
        %h = arith.divsi %w, %two : i64
        %c2 = arith.addi %c, %one : i64
        scf.yield %h, %c2 : i64, i64
      }
      return %r#1 : i64
    }"""
    for x in (1, 2, 1000, 1 << 40):
        assert run(src, "halvings", x) == max(0, int(x).bit_length() - 1)


IF_CHAINS = """
func.func @pick(%a: tensor<16xf32>, %b: tensor<16xf32>, %k: i32) -> tensor<16xf32> {
  %c0 = arith.constant 0 : i32
  %positive = arith.cmpi sgt, %k, %c0 : i32
  %r = scf.if %positive -> (tensor<16xf32>) {
    %0 = arith.mulf %a, %b : tensor<16xf32>
    %1 = math.exp %0 : tensor<16xf32>
    scf.yield %1 : tensor<16xf32>
  } else {
    %0 = arith.subf %a, %b : tensor<16xf32>
    %1 = math.absf %0 : tensor<16xf32>
    %2 = arith.addf %1, %a : tensor<16xf32>
    scf.yield %2 : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}"""


@pytest.mark.parametrize("k", [3, -2])
def test_if_else_picks_between_two_dispatch_chains(run: Runner, k: int) -> None:
    a, b = _f32(16), _f32(16)
    expected = np.exp(a * b) if k > 0 else np.abs(a - b) + a
    np.testing.assert_allclose(run(IF_CHAINS, "pick", a, b, np.int32(k)), expected, rtol=1e-5)


def test_if_with_tensor_and_scalar_results(run: Runner) -> None:
    src = """
    func.func @branch(%a: tensor<2x3xi32>, %n: index) -> (tensor<2x3xi32>, index) {
      %c10 = arith.constant 10 : index
      %small = arith.cmpi ult, %n, %c10 : index
      %r:2 = scf.if %small -> (tensor<2x3xi32>, index) {
        %d = arith.muli %a, %a : tensor<2x3xi32>
        %m = arith.muli %n, %n : index
        scf.yield %d, %m : tensor<2x3xi32>, index
      } else {
        %m = arith.subi %n, %c10 : index
        scf.yield %a, %m : tensor<2x3xi32>, index
      }
      return %r#0, %r#1 : tensor<2x3xi32>, index
    }"""
    a = np.arange(6, dtype=np.int32).reshape(2, 3) - 2
    out, m = run(src, "branch", a, 4)  # type: ignore[misc]
    np.testing.assert_array_equal(out, a * a)
    assert m == 16
    out, m = run(src, "branch", a, 25)  # type: ignore[misc]
    np.testing.assert_array_equal(out, a)
    assert m == 15


def test_if_yielding_a_constant_in_one_branch(run: Runner) -> None:
    src = """
    func.func @or_ones(%a: tensor<5xf32>, %use: i1) -> tensor<5xf32> {
      %r = scf.if %use -> (tensor<5xf32>) {
        %d = arith.addf %a, %a : tensor<5xf32>
        scf.yield %d : tensor<5xf32>
      } else {
        %ones = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
        scf.yield %ones : tensor<5xf32>
      }
      %twice = arith.mulf %r, %r : tensor<5xf32>
      return %twice : tensor<5xf32>
    }"""
    a = _f32(5)
    np.testing.assert_allclose(run(src, "or_ones", a, 1), (2 * a) ** 2, rtol=1e-6)
    np.testing.assert_allclose(run(src, "or_ones", a, 0),
                               np.arange(1, 6, dtype=np.float32) ** 2, rtol=1e-6)


def test_nested_loops_accumulate_a_matmul(run: Runner) -> None:
    src = """
    func.func @nested(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %n: index, %m: index) -> tensor<3x5xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<3x5xf32>
      %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%outer = %init) -> (tensor<3x5xf32>) {
        %inner = scf.for %j = %c0 to %m step %c1 iter_args(%acc = %outer) -> (tensor<3x5xf32>) {
          %p = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%acc : tensor<3x5xf32>) -> tensor<3x5xf32>
          scf.yield %p : tensor<3x5xf32>
        }
        scf.yield %inner : tensor<3x5xf32>
      }
      return %r : tensor<3x5xf32>
    }"""
    a, b = _f32(3, 4), _f32(4, 5)
    np.testing.assert_allclose(run(src, "nested", a, b, 2, 3), 6 * (a @ b), rtol=1e-5, atol=1e-5)


def test_loop_carries_a_tensor_whose_dynamic_size_changes(run: Runner) -> None:
    src = """
    func.func @grow(%n: index, %start: index) -> tensor<?xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f32
      %init = tensor.empty(%start) : tensor<?xf32>
      %t0 = linalg.fill ins(%zero : f32) outs(%init : tensor<?xf32>) -> tensor<?xf32>
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %t0) -> (tensor<?xf32>) {
        %size = tensor.dim %acc, %c0 : tensor<?xf32>
        %bigger = arith.addi %size, %c1 : index
        %e = tensor.empty(%bigger) : tensor<?xf32>
        %k = arith.index_cast %i : index to i32
        %v = arith.sitofp %k : i32 to f32
        %t = linalg.fill ins(%v : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
        scf.yield %t : tensor<?xf32>
      }
      return %r : tensor<?xf32>
    }"""
    np.testing.assert_array_equal(run(src, "grow", 3, 2), np.full(5, 2, np.float32))
    np.testing.assert_array_equal(run(src, "grow", 0, 2), np.zeros(2, np.float32))


def test_loop_over_a_dynamic_shape_argument(run: Runner) -> None:
    src = """
    func.func @smooth(%a: tensor<?x?xf32>, %n: index) -> tensor<?x?xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (tensor<?x?xf32>) {
        %t = math.tanh %x : tensor<?x?xf32>
        %s = arith.addf %t, %a : tensor<?x?xf32>
        scf.yield %s : tensor<?x?xf32>
      }
      return %r : tensor<?x?xf32>
    }"""
    a = _f32(3, 7)
    expected = a
    for _ in range(4):
        expected = np.tanh(expected) + a
    np.testing.assert_allclose(run(src, "smooth", a, 4), expected, rtol=1e-5, atol=1e-6)


def test_fibonacci_on_two_carried_tensors(run: Runner) -> None:
    src = """
    func.func @fib(%a: tensor<3xi64>, %b: tensor<3xi64>, %n: index) -> tensor<3xi64> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a, %y = %b) -> (tensor<3xi64>, tensor<3xi64>) {
        %s = arith.addi %x, %y : tensor<3xi64>
        scf.yield %y, %s : tensor<3xi64>, tensor<3xi64>
      }
      return %r#0 : tensor<3xi64>
    }"""
    a = np.array([0, 2, -1], dtype=np.int64)
    b = np.array([1, 3, 1], dtype=np.int64)
    x, y = a, b
    for _ in range(10):
        x, y = y, x + y
    np.testing.assert_array_equal(run(src, "fib", a, b, 10), x)


def test_scalar_only_loop_sums_its_induction_variable(run: Runner) -> None:
    src = """
    func.func @triangle(%n: index) -> (index, f32) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %f0 = arith.constant 0.5 : f32
      %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%s = %c0, %f = %f0) -> (index, f32) {
        %t = arith.addi %s, %i : index
        %g = arith.mulf %f, %f0 : f32
        scf.yield %t, %g : index, f32
      }
      return %r#0, %r#1 : index, f32
    }"""
    total, f = run(src, "triangle", 10)  # type: ignore[misc]
    assert total == 45
    assert f == pytest.approx(0.5 ** 11)


def test_loop_with_an_i32_induction_variable(run: Runner) -> None:
    src = """
    func.func @count(%a: tensor<4xi32>, %n: i32) -> tensor<4xi32> {
      %c0 = arith.constant 0 : i32
      %c2 = arith.constant 2 : i32
      %r = scf.for %i = %c0 to %n step %c2 iter_args(%acc = %a) -> (tensor<4xi32>) : i32 {
        %e = tensor.empty() : tensor<4xi32>
        %f = linalg.fill ins(%i : i32) outs(%e : tensor<4xi32>) -> tensor<4xi32>
        %s = arith.addi %acc, %f : tensor<4xi32>
        scf.yield %s : tensor<4xi32>
      }
      return %r : tensor<4xi32>
    }"""
    a = np.array([1, 2, 3, 4], dtype=np.int32)
    np.testing.assert_array_equal(run(src, "count", a, np.int32(9)), a + (0 + 2 + 4 + 6 + 8))


def test_if_inside_a_loop_alternates_dispatches(run: Runner) -> None:
    src = """
    func.func @alternate(%a: tensor<10xf32>, %n: index) -> tensor<10xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (tensor<10xf32>) {
        %parity = arith.remui %i, %c2 : index
        %even = arith.cmpi eq, %parity, %c0 : index
        %y = scf.if %even -> (tensor<10xf32>) {
          %d = arith.addf %x, %a : tensor<10xf32>
          scf.yield %d : tensor<10xf32>
        } else {
          %h = arith.constant dense<0.5> : tensor<10xf32>
          %d = arith.mulf %x, %h : tensor<10xf32>
          scf.yield %d : tensor<10xf32>
        }
        scf.yield %y : tensor<10xf32>
      }
      return %r : tensor<10xf32>
    }"""
    a = _f32(10)
    x = a
    for i in range(7):
        x = x + a if i % 2 == 0 else x * np.float32(0.5)
    np.testing.assert_allclose(run(src, "alternate", a, 7), x, rtol=1e-6)


def test_loop_inside_an_if(run: Runner) -> None:
    src = """
    func.func @maybe_loop(%a: tensor<2x2xf32>, %n: index, %go: i1) -> tensor<2x2xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.if %go -> (tensor<2x2xf32>) {
        %l = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (tensor<2x2xf32>) {
          %zero = arith.constant 0.0 : f32
          %e = tensor.empty() : tensor<2x2xf32>
          %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
          %p = linalg.matmul ins(%x, %a : tensor<2x2xf32>, tensor<2x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
          scf.yield %p : tensor<2x2xf32>
        }
        scf.yield %l : tensor<2x2xf32>
      } else {
        %neg = arith.negf %a : tensor<2x2xf32>
        scf.yield %neg : tensor<2x2xf32>
      }
      return %r : tensor<2x2xf32>
    }"""
    a = np.array([[1.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    np.testing.assert_allclose(run(src, "maybe_loop", a, 3, 1),
                               np.linalg.matrix_power(a, 4), rtol=1e-6)
    np.testing.assert_allclose(run(src, "maybe_loop", a, 3, 0), -a, rtol=1e-6)


def test_dispatches_before_inside_and_after_a_loop(run: Runner) -> None:
    src = """
    func.func @around(%a: tensor<4x8xf32>, %n: index) -> tensor<8x4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %pre = math.sin %a : tensor<4x8xf32>
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %pre) -> (tensor<4x8xf32>) {
        %s = arith.mulf %x, %pre : tensor<4x8xf32>
        scf.yield %s : tensor<4x8xf32>
      }
      %e = tensor.empty() : tensor<8x4xf32>
      %t = linalg.transpose ins(%r : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
      return %t : tensor<8x4xf32>
    }"""
    a = _f32(4, 8)
    pre = np.sin(a)
    np.testing.assert_allclose(run(src, "around", a, 3), (pre ** 4).T, rtol=1e-5, atol=1e-6)


def test_loop_carried_value_initialised_from_a_constant(run: Runner) -> None:
    src = """
    func.func @from_constant(%a: tensor<4xi32>, %n: index) -> tensor<4xi32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %init = arith.constant dense<[1, -1, 2, -2]> : tensor<4xi32>
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init) -> (tensor<4xi32>) {
        %s = arith.addi %x, %a : tensor<4xi32>
        scf.yield %s : tensor<4xi32>
      }
      return %r : tensor<4xi32>
    }"""
    a = np.array([3, 4, 5, 6], dtype=np.int32)
    init = np.array([1, -1, 2, -2], dtype=np.int32)
    np.testing.assert_array_equal(run(src, "from_constant", a, 4), init + 4 * a)
    np.testing.assert_array_equal(run(src, "from_constant", a, 0), init)


HELPERS = """
func.func private @scale(%x: tensor<6xf32>, %k: f32) -> tensor<6xf32> {
  %e = tensor.empty() : tensor<6xf32>
  %f = linalg.fill ins(%k : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %y = arith.mulf %x, %f : tensor<6xf32>
  return %y : tensor<6xf32>
}
func.func private @step(%x: tensor<6xf32>, %a: tensor<6xf32>) -> tensor<6xf32> {
  %half = arith.constant 0.5 : f32
  %s = func.call @scale(%x, %half) : (tensor<6xf32>, f32) -> tensor<6xf32>
  %t = arith.addf %s, %a : tensor<6xf32>
  return %t : tensor<6xf32>
}
func.func @iterate(%a: tensor<6xf32>, %n: index) -> tensor<6xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (tensor<6xf32>) {
    %y = func.call @step(%x, %a) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    scf.yield %y : tensor<6xf32>
  }
  return %r : tensor<6xf32>
}
func.func @twice(%a: tensor<6xf32>) -> tensor<6xf32> {
  %three = arith.constant 3.0 : f32
  %x = func.call @scale(%a, %three) : (tensor<6xf32>, f32) -> tensor<6xf32>
  %y = func.call @scale(%x, %three) : (tensor<6xf32>, f32) -> tensor<6xf32>
  %z = func.call @step(%y, %a) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  return %z : tensor<6xf32>
}
func.func @calls_exported(%a: tensor<6xf32>) -> tensor<6xf32> {
  %c2 = arith.constant 2 : index
  %x = func.call @iterate(%a, %c2) : (tensor<6xf32>, index) -> tensor<6xf32>
  %y = func.call @twice(%x) : (tensor<6xf32>) -> tensor<6xf32>
  return %y : tensor<6xf32>
}"""


def _step(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    return x * np.float32(0.5) + a


def test_calls_inside_a_loop_to_helpers_that_call_helpers(run: Runner) -> None:
    a = _f32(6)
    x = a
    for _ in range(5):
        x = _step(x, a)
    np.testing.assert_allclose(run(HELPERS, "iterate", a, 5), x, rtol=1e-6)


def test_exported_functions_share_a_private_helper_called_several_times(run: Runner) -> None:
    a = _f32(6)
    np.testing.assert_allclose(run(HELPERS, "twice", a), _step(a * 9, a), rtol=1e-6)


def test_an_exported_function_calls_other_exported_functions(run: Runner) -> None:
    a = _f32(6)
    x = _step(_step(a, a), a)
    np.testing.assert_allclose(run(HELPERS, "calls_exported", a), _step(x * 9, x), rtol=1e-6)


def test_loop_counts_down_with_a_while_and_a_tensor_in_the_condition_region(run: Runner) -> None:
    src = """
    func.func @countdown(%a: tensor<3xf32>, %n: i32) -> (tensor<3xf32>, i32) {
      %r:2 = scf.while (%k = %n, %x = %a) : (i32, tensor<3xf32>) -> (i32, tensor<3xf32>) {
        %doubled = arith.addf %x, %x : tensor<3xf32>
        %zero = arith.constant 0 : i32
        %more = arith.cmpi sgt, %k, %zero : i32
        scf.condition(%more) %k, %doubled : i32, tensor<3xf32>
      } do {
      ^bb0(%j: i32, %y: tensor<3xf32>):
        %one = arith.constant 1 : i32
        %next = arith.subi %j, %one : i32
        %e = math.exp %y : tensor<3xf32>
        %s = arith.subf %y, %e : tensor<3xf32>
        scf.yield %next, %s : i32, tensor<3xf32>
      }
      return %r#1, %r#0 : tensor<3xf32>, i32
    }"""
    a = np.array([0.1, -0.2, 0.05], dtype=np.float32)
    x = a
    for _ in range(3):
        d = x + x
        x = d - np.exp(d)
    x = x + x  # the condition region doubles once more before leaving
    out, k = run(src, "countdown", a, np.int32(3))  # type: ignore[misc]
    np.testing.assert_allclose(out, x, rtol=1e-5, atol=1e-6)
    assert k == 0


SWITCH = """
func.func @switch(%a: tensor<2x4xf32>, %k: index) -> tensor<2x4xf32> {
  %r = scf.index_switch %k -> tensor<2x4xf32>
  case 2 {
    %d = arith.addf %a, %a : tensor<2x4xf32>
    scf.yield %d : tensor<2x4xf32>
  }
  case 5 {
    %d = arith.mulf %a, %a : tensor<2x4xf32>
    scf.yield %d : tensor<2x4xf32>
  }
  default {
    %d = math.floor %a : tensor<2x4xf32>
    scf.yield %d : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}"""


@pytest.mark.parametrize("k", [2, 5, 0, 7])
def test_index_switch_picks_a_case_or_the_default(run: Runner, k: int) -> None:
    a = _f32(2, 4)
    expected = {2: a + a, 5: a * a}.get(k, np.floor(a))
    np.testing.assert_allclose(run(SWITCH, "switch", a, k), expected, rtol=1e-6)


def test_while_until_an_element_read_back_on_the_host_converges(run: Runner) -> None:
    src = """
    func.func @converge(%a: tensor<4xf32>, %limit: f32) -> (tensor<4xf32>, index) {
      %c0 = arith.constant 0 : index
      %r:2 = scf.while (%x = %a, %k = %c0) : (tensor<4xf32>, index) -> (tensor<4xf32>, index) {
        %v = tensor.extract %x[%c0] : tensor<4xf32>
        %big = arith.cmpf ogt, %v, %limit : f32
        scf.condition(%big) %x, %k : tensor<4xf32>, index
      } do {
      ^bb0(%y: tensor<4xf32>, %j: index):
        %h = arith.constant dense<0.5> : tensor<4xf32>
        %z = arith.mulf %y, %h : tensor<4xf32>
        %c1 = arith.constant 1 : index
        %j1 = arith.addi %j, %c1 : index
        scf.yield %z, %j1 : tensor<4xf32>, index
      }
      return %r#0, %r#1 : tensor<4xf32>, index
    }"""
    a = np.array([100.0, 2.0, 3.0, 4.0], dtype=np.float32)
    out, k = run(src, "converge", a, np.float32(1.0))  # type: ignore[misc]
    assert k == 7  # 100 / 2**7 = 0.78
    np.testing.assert_allclose(out, a / np.float32(2 ** 7), rtol=1e-6)


PINGPONG = """
func.func @pingpong(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                    %n: index) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xf32>) {
    %b = flow.tensor.transfer %acc : tensor<4xf32> to #hal.device.promise<@device_b>
    %m = arith.mulf %b, %b : tensor<4xf32>
    %back = flow.tensor.transfer %m : tensor<4xf32> to #hal.device.promise<@device_a>
    %s = arith.addf %back, %x : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}"""


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
@pytest.mark.parametrize("model", ["async-internal", "async-external"])
@pytest.mark.parametrize("elide", [True, False], ids=["elided", "copied"])
def test_loop_moving_its_carried_tensor_between_two_devices(driver: str, model: str,
                                                            elide: bool) -> None:
    options = weir.CompilerOptions(
        execution_model=model,  # type: ignore[arg-type]
        target_devices=(weir.TargetDevice("device_a", "local", 0),
                        weir.TargetDevice("device_b", "local", 1)),
        disabled_passes=frozenset() if elide else frozenset({"elide-transfers"}))
    ctx = weir.load([weir.compile_string(PINGPONG, "pingpong.mlir", options)],
                    device=[driver, driver])
    x = np.array([0.1, 0.2, -0.3, 0.4], dtype=np.float32)
    expected = x
    for _ in range(3):
        expected = expected * expected + x
    np.testing.assert_allclose(ctx.lookup_function("pingpong")(x, 3), expected, rtol=1e-6)
    stats = [d.statistics.snapshot() for d in ctx.devices]
    # The multiply runs on device_b and the add on device_a, once per iteration each.
    assert [sum(s["dispatches_by_entry_point"].values()) for s in stats] == [3, 3]
    copies = [s["queue_submitted"]["copy"] for s in stats]
    assert copies == ([0, 0] if elide else [3, 3])


def test_async_external_loop_returns_before_its_wait_fence_is_signalled() -> None:
    options = weir.CompilerOptions(execution_model="async-external")
    ctx = weir.load([weir.compile_string(FOR_ACCUMULATE, "acc.mlir", options)],
                    device="local-task")
    device = ctx.devices[0]
    a = _f32(8)
    view = weir.BufferView.from_numpy(a, device.allocator)
    timeline = device.create_semaphore(0)
    (result,) = ctx.lookup_function("accumulate").invoke_async(
        [view, 4], wait=weir.Fence.create(timeline, 1), signal=weir.Fence.create(timeline, 2))
    assert not weir.Fence.create(timeline, 2).wait(timeout=0)  # nothing ran yet
    timeline.signal(1)
    assert weir.Fence.create(timeline, 2).wait(timeout=10)
    np.testing.assert_allclose(result.to_numpy(), a * 5, rtol=1e-6)


class _Triple(NativeModule):
    module_name = "custom"

    @export("0r_r", name="triple")
    def triple(self, state: Any, arg: BufferView) -> BufferView:
        return BufferView.from_numpy(arg.to_numpy() * 3)


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
def test_loop_calls_an_imported_python_function_every_iteration(driver: str) -> None:
    src = """
    func.func private @custom.triple(tensor<4xf32>) -> tensor<4xf32>
    func.func @main(%a: tensor<4xf32>, %n: index) -> tensor<4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (tensor<4xf32>) {
        %y = func.call @custom.triple(%x) : (tensor<4xf32>) -> tensor<4xf32>
        %z = arith.addf %y, %a : tensor<4xf32>
        scf.yield %z : tensor<4xf32>
      }
      return %r : tensor<4xf32>
    }"""
    instance = Instance()
    ctx = Context(instance, devices=[instance.create_device(driver)],
                  modules=[_Triple(), weir.load_module_bytes(weir.compile_string(src, "m.mlir"))])
    a = _f32(4)
    expected = a
    for _ in range(3):
        expected = expected * 3 + a
    np.testing.assert_allclose(ctx.lookup("m.main")(a, 3), expected, rtol=1e-6)


def _compile_error(src: str) -> str:
    with pytest.raises(CompileError) as info:
        weir.compile_string(src, "cf.mlir")
    return str(info.value)


def test_recursion_is_a_located_compile_error() -> None:
    message = _compile_error("""
func.func private @down(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (tensor<4xf32>) {
    scf.yield %x : tensor<4xf32>
  } else {
    %c1 = arith.constant 1 : index
    %m = arith.subi %n, %c1 : index
    %y = func.call @down(%x, %m) : (tensor<4xf32>, index) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c3 = arith.constant 3 : index
  %r = func.call @down(%x, %c3) : (tensor<4xf32>, index) -> tensor<4xf32>
  return %r : tensor<4xf32>
}""")
    assert "cf.mlir:10:5" in message and "recursive call to @down is not supported" in message


def test_scf_parallel_is_a_located_compile_error() -> None:
    message = _compile_error("""
func.func @par(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    scf.reduce
  }) : (index, index, index) -> ()
  return %n : index
}""")
    assert "cf.mlir:5:3" in message and "'scf.parallel' is not supported" in message

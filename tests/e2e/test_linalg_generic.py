"""linalg.generic in its less common forms, compiled and run on every host target (the `run`
fixture), against numpy: reductions in any loop position, transposed and broadcast maps
(including constant-0 results and rank-0 operands), several inputs and results, `linalg.index`,
reduction bodies that are not a plain combine (argmax, recurrences), bodies reading their output
and dynamic shapes. Floats to 1e-5 relative, integers exactly."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir
from weir.errors import CompileError

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(43)


def generic(maps: list[str], iterators: str, ins: str, outs: str, body: str, results: str) -> str:
    """A linalg.generic; `iterators` has one letter per loop, p(arallel) or r(eduction)."""
    kinds = ", ".join('"parallel"' if c == "p" else '"reduction"' for c in iterators)
    amaps = ", ".join(f"affine_map<{m}>" for m in maps)
    return (f"linalg.generic {{indexing_maps = [{amaps}], iterator_types = [{kinds}]}} "
            f"ins({ins}) outs({outs}) {{\n{body}\n      }} -> {results}")


def check(got: object, expected: np.ndarray, rtol: float = 1e-5) -> None:
    got = np.asarray(got)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, got.dtype)
    if expected.dtype.kind in "iub":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_reduction_in_the_middle_with_transposed_output_and_broadcast_input(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<3x5x4xf32>, %b: tensor<4xf32>) -> tensor<4x3xf32> {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4x3xf32>
      %acc = linalg.fill ins(%z : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
      %0 = """ + generic(
        ["(i, r, j) -> (i, r, j)", "(i, r, j) -> (j)", "(i, r, j) -> (j, i)"], "prp",
        "%a, %b : tensor<3x5x4xf32>, tensor<4xf32>", "%acc : tensor<4x3xf32>", """
      ^bb0(%x: f32, %y: f32, %s: f32):
        %m = arith.mulf %x, %y : f32
        %r = arith.addf %m, %s : f32
        linalg.yield %r : f32""", "tensor<4x3xf32>") + """
      return %0 : tensor<4x3xf32>
    }"""
    a, b = f32(3, 5, 4), f32(4)
    check(run(src, "f", a, b), (a * b).sum(axis=1).T)


def test_constant_zero_map_results_broadcast_size_one_dims(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<1x4xf32>, %b: tensor<3x1xf32>) -> tensor<3x4xf32> {
      %e = tensor.empty() : tensor<3x4xf32>
      %0 = """ + generic(
        ["(i, j) -> (0, j)", "(i, j) -> (i, 0)", "(i, j) -> (i, j)"], "pp",
        "%a, %b : tensor<1x4xf32>, tensor<3x1xf32>", "%e : tensor<3x4xf32>", """
      ^bb0(%x: f32, %y: f32, %s: f32):
        %r = arith.subf %x, %y : f32
        linalg.yield %r : f32""", "tensor<3x4xf32>") + """
      return %0 : tensor<3x4xf32>
    }"""
    a, b = f32(1, 4), f32(3, 1)
    check(run(src, "f", a, b), a - b)


def test_keepdims_reduction_into_a_constant_zero_output_dim(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<3x7xf32>) -> tensor<3x1xf32> {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<3x1xf32>
      %acc = linalg.fill ins(%z : f32) outs(%e : tensor<3x1xf32>) -> tensor<3x1xf32>
      %0 = """ + generic(
        ["(i, r) -> (i, r)", "(i, r) -> (i, 0)"], "pr", "%a : tensor<3x7xf32>",
        "%acc : tensor<3x1xf32>", """
      ^bb0(%x: f32, %s: f32):
        %m = arith.mulf %x, %x : f32
        %r = arith.addf %s, %m : f32
        linalg.yield %r : f32""", "tensor<3x1xf32>") + """
      return %0 : tensor<3x1xf32>
    }"""
    a = f32(3, 7)
    check(run(src, "f", a), (a * a).sum(axis=1, keepdims=True))


def test_rank0_input_and_a_body_reading_its_output(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<f32>, %o: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %0 = """ + generic(
        ["(i, j) -> ()", "(i, j) -> (i, j)"], "pp", "%a : tensor<f32>", "%o : tensor<2x3xf32>", """
      ^bb0(%x: f32, %s: f32):
        %r = arith.addf %s, %x : f32
        linalg.yield %r : f32""", "tensor<2x3xf32>") + """
      return %0 : tensor<2x3xf32>
    }"""
    a, o = np.array(2.5, np.float32), f32(2, 3)
    check(run(src, "f", a, o), o + np.float32(2.5))


def test_full_reduction_to_rank0_over_reduction_loops_only(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<6x5xi32>) -> tensor<i32> {
      %z = arith.constant 0 : i32
      %e = tensor.empty() : tensor<i32>
      %acc = linalg.fill ins(%z : i32) outs(%e : tensor<i32>) -> tensor<i32>
      %0 = """ + generic(
        ["(r, s) -> (r, s)", "(r, s) -> ()"], "rr", "%a : tensor<6x5xi32>", "%acc : tensor<i32>", """
      ^bb0(%x: i32, %s: i32):
        %r = arith.addi %x, %s : i32
        linalg.yield %r : i32""", "tensor<i32>") + """
      return %0 : tensor<i32>
    }"""
    a = RNG.integers(-9, 9, (6, 5)).astype(np.int32)
    check(run(src, "f", a), np.asarray(a.sum(), np.int32))


def test_two_reductions_of_one_input_reduced_over_the_first_loop(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<6x5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
      %z = arith.constant 0.0 : f32
      %ninf = arith.constant 0xFF800000 : f32
      %e = tensor.empty() : tensor<5xf32>
      %s0 = linalg.fill ins(%z : f32) outs(%e : tensor<5xf32>) -> tensor<5xf32>
      %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<5xf32>) -> tensor<5xf32>
      %0:2 = """ + generic(
        ["(r, j) -> (r, j)", "(r, j) -> (j)", "(r, j) -> (j)"], "rp", "%a : tensor<6x5xf32>",
        "%s0, %m0 : tensor<5xf32>, tensor<5xf32>", """
      ^bb0(%x: f32, %s: f32, %m: f32):
        %r = arith.addf %x, %s : f32
        %q = arith.maximumf %m, %x : f32
        linalg.yield %r, %q : f32, f32""", "tensor<5xf32>, tensor<5xf32>") + """
      return %0#0, %0#1 : tensor<5xf32>, tensor<5xf32>
    }"""
    a = f32(6, 5)
    total, top = run(src, "f", a)  # type: ignore[misc]
    check(total, a.sum(axis=0))
    check(top, a.max(axis=0))


def test_reduction_results_with_different_output_maps(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<3x4x5xf32>) -> (tensor<3x5xf32>, tensor<5x3xf32>) {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<3x5xf32>
      %e2 = tensor.empty() : tensor<5x3xf32>
      %acc = linalg.fill ins(%z : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
      %acc2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
      %0:2 = """ + generic(
        ["(i, r, j) -> (i, r, j)", "(i, r, j) -> (i, j)", "(i, r, j) -> (j, i)"], "prp",
        "%a : tensor<3x4x5xf32>", "%acc, %acc2 : tensor<3x5xf32>, tensor<5x3xf32>", """
      ^bb0(%x: f32, %s: f32, %t: f32):
        %r = arith.addf %s, %x : f32
        %m = arith.mulf %x, %x : f32
        %q = arith.addf %m, %t : f32
        linalg.yield %r, %q : f32, f32""", "tensor<3x5xf32>, tensor<5x3xf32>") + """
      return %0#0, %0#1 : tensor<3x5xf32>, tensor<5x3xf32>
    }"""
    a = f32(3, 4, 5)
    total, squares = run(src, "f", a)  # type: ignore[misc]
    check(total, a.sum(axis=1))
    check(squares, (a * a).sum(axis=1).T)


def test_index_weighted_row_sums(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<4x6xf32>) -> tensor<4xf32> {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4xf32>
      %acc = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      %0 = """ + generic(
        ["(i, r) -> (i, r)", "(i, r) -> (i)"], "pr", "%a : tensor<4x6xf32>",
        "%acc : tensor<4xf32>", """
      ^bb0(%x: f32, %s: f32):
        %k = linalg.index 1 : index
        %ki = arith.index_cast %k : index to i32
        %kf = arith.sitofp %ki : i32 to f32
        %m = arith.mulf %x, %kf : f32
        %r = arith.addf %m, %s : f32
        linalg.yield %r : f32""", "tensor<4xf32>") + """
      return %0 : tensor<4xf32>
    }"""
    a = f32(4, 6)
    check(run(src, "f", a), (a * np.arange(6, dtype=np.float32)).sum(axis=1))


def test_index_of_a_transposed_parallel_output(run: Runner) -> None:
    src = """
    func.func @f() -> tensor<5x3xi32> {
      %e = tensor.empty() : tensor<5x3xi32>
      %0 = """ + generic(
        ["(i, j) -> (j, i)"], "pp", "", "%e : tensor<5x3xi32>", """
      ^bb0(%s: i32):
        %i = linalg.index 0 : index
        %j = linalg.index 1 : index
        %c10 = arith.constant 10 : index
        %t = arith.muli %i, %c10 : index
        %k = arith.addi %t, %j : index
        %r = arith.index_cast %k : index to i32
        linalg.yield %r : i32""", "tensor<5x3xi32>").replace("ins() ", "") + """
      return %0 : tensor<5x3xi32>
    }"""
    expected = (np.arange(3)[:, None] * 10 + np.arange(5)[None, :]).T.astype(np.int32)
    check(run(src, "f"), expected)


def test_argmax_reduction_with_compare_and_select(run: Runner) -> None:
    """Not a plain combine of the accumulator: the reference target runs it step by step."""
    src = """
    func.func @f(%a: tensor<4x7xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
      %ninf = arith.constant 0xFF800000 : f32
      %z = arith.constant 0 : i32
      %e = tensor.empty() : tensor<4xf32>
      %ei = tensor.empty() : tensor<4xi32>
      %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      %i0 = linalg.fill ins(%z : i32) outs(%ei : tensor<4xi32>) -> tensor<4xi32>
      %0:2 = """ + generic(
        ["(i, r) -> (i, r)", "(i, r) -> (i)", "(i, r) -> (i)"], "pr", "%a : tensor<4x7xf32>",
        "%m0, %i0 : tensor<4xf32>, tensor<4xi32>", """
      ^bb0(%x: f32, %m: f32, %k: i32):
        %j = linalg.index 1 : index
        %ji = arith.index_cast %j : index to i32
        %c = arith.cmpf ogt, %x, %m : f32
        %nm = arith.select %c, %x, %m : f32
        %nk = arith.select %c, %ji, %k : i32
        linalg.yield %nm, %nk : f32, i32""", "tensor<4xf32>, tensor<4xi32>") + """
      return %0#0, %0#1 : tensor<4xf32>, tensor<4xi32>
    }"""
    a = f32(4, 7)
    top, where = run(src, "f", a)  # type: ignore[misc]
    check(top, a.max(axis=1))
    check(where, a.argmax(axis=1).astype(np.int32))


def test_recurrence_over_a_reduction_loop(run: Runner) -> None:
    """acc * 0.5 + x, in loop order: exponential smoothing along each row."""
    src = """
    func.func @f(%a: tensor<3x6xf32>, %o: tensor<3xf32>) -> tensor<3xf32> {
      %0 = """ + generic(
        ["(i, r) -> (i, r)", "(i, r) -> (i)"], "pr", "%a : tensor<3x6xf32>", "%o : tensor<3xf32>", """
      ^bb0(%x: f32, %s: f32):
        %h = arith.constant 0.5 : f32
        %m = arith.mulf %s, %h : f32
        %r = arith.addf %m, %x : f32
        linalg.yield %r : f32""", "tensor<3xf32>") + """
      return %0 : tensor<3xf32>
    }"""
    a, o = f32(3, 6), f32(3)
    expected = o.copy()
    for k in range(6):
        expected = expected * np.float32(0.5) + a[:, k]
    check(run(src, "f", a, o), expected)


def test_select_and_sign_extension_in_a_body_with_a_captured_constant(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<8xi8>, %b: tensor<8xf32>) -> tensor<8xi32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<8xi32>
      %0 = """ + generic(
        ["(i) -> (i)", "(i) -> (i)", "(i) -> (i)"], "p", "%a, %b : tensor<8xi8>, tensor<8xf32>",
        "%e : tensor<8xi32>", """
      ^bb0(%x: i8, %y: f32, %s: i32):
        %w = arith.extsi %x : i8 to i32
        %c = arith.cmpf ogt, %y, %zero : f32
        %n = arith.subi %s, %w : i32
        %r = arith.select %c, %w, %n : i32
        linalg.yield %r : i32""", "tensor<8xi32>") + """
      return %0 : tensor<8xi32>
    }"""
    a = RNG.integers(-100, 100, 8).astype(np.int8)
    b = f32(8)
    check(run(src, "f", a, b), np.where(b > 0, a.astype(np.int32), -a.astype(np.int32)))


def test_three_inputs_permuted_loops_f64(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<2x3x4xf64>, %b: tensor<4x2xf64>, %c: tensor<3xf64>) -> tensor<4x2x3xf64> {
      %e = tensor.empty() : tensor<4x2x3xf64>
      %0 = """ + generic(
        ["(i, j, k) -> (i, j, k)", "(i, j, k) -> (k, i)", "(i, j, k) -> (j)",
         "(i, j, k) -> (k, i, j)"], "ppp",
        "%a, %b, %c : tensor<2x3x4xf64>, tensor<4x2xf64>, tensor<3xf64>", "%e : tensor<4x2x3xf64>", """
      ^bb0(%x: f64, %y: f64, %w: f64, %s: f64):
        %m = arith.mulf %x, %y : f64
        %r = arith.addf %m, %w : f64
        linalg.yield %r : f64""", "tensor<4x2x3xf64>") + """
      return %0 : tensor<4x2x3xf64>
    }"""
    a, b, c = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4, 2)), RNG.standard_normal(3)
    check(run(src, "f", a, b, c), np.einsum("ijk,ki->kij", a, b) + c[None, None, :])


def test_column_sums_of_a_dynamic_matrix_read_transposed(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<?x?xf32>) -> tensor<?xf32> {
      %z = arith.constant 0.0 : f32
      %c1 = arith.constant 1 : index
      %d = tensor.dim %a, %c1 : tensor<?x?xf32>
      %e = tensor.empty(%d) : tensor<?xf32>
      %acc = linalg.fill ins(%z : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
      %0 = """ + generic(
        ["(j, r) -> (r, j)", "(j, r) -> (j)"], "pr", "%a : tensor<?x?xf32>", "%acc : tensor<?xf32>", """
      ^bb0(%x: f32, %s: f32):
        %r = arith.addf %s, %x : f32
        linalg.yield %r : f32""", "tensor<?xf32>") + """
      return %0 : tensor<?xf32>
    }"""
    for shape in ((5, 3), (1, 9)):
        a = f32(*shape)
        check(run(src, "f", a), a.sum(axis=0))


def test_reduction_of_a_matmul_result(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<4x5xf32>, %b: tensor<5x6xf32>) -> tensor<4xf32> {
      %z = arith.constant 0.0 : f32
      %ninf = arith.constant 0xFF800000 : f32
      %e = tensor.empty() : tensor<4x6xf32>
      %acc = linalg.fill ins(%z : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
      %m = linalg.matmul ins(%a, %b : tensor<4x5xf32>, tensor<5x6xf32>) outs(%acc : tensor<4x6xf32>) -> tensor<4x6xf32>
      %e2 = tensor.empty() : tensor<4xf32>
      %acc2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
      %0 = """ + generic(
        ["(i, r) -> (i, r)", "(i, r) -> (i)"], "pr", "%m : tensor<4x6xf32>", "%acc2 : tensor<4xf32>", """
      ^bb0(%x: f32, %s: f32):
        %r = arith.maximumf %s, %x : f32
        linalg.yield %r : f32""", "tensor<4xf32>") + """
      return %0 : tensor<4xf32>
    }"""
    a, b = f32(4, 5), f32(5, 6)
    check(run(src, "f", a, b), (a @ b).max(axis=1), 1e-4)


@pytest.mark.parametrize("ty, dtype, rtol", [("f16", np.float16, 1e-2), ("i16", np.int16, 0)])
def test_elementwise_then_reduction_in_narrow_types(run: Runner, ty: str, dtype: type,
                                                    rtol: float) -> None:
    """A parallel generic producing two results, one of which a reduction consumes."""
    mul, add = ("arith.mulf", "arith.addf") if ty == "f16" else ("arith.muli", "arith.addi")
    zero = "0.0" if ty == "f16" else "0"
    src = f"""
    func.func @f(%a: tensor<4x8x{ty}>, %b: tensor<8x{ty}>) -> (tensor<4x8x{ty}>, tensor<4x{ty}>) {{
      %z = arith.constant {zero} : {ty}
      %e = tensor.empty() : tensor<4x8x{ty}>
      %0:2 = """ + generic(
        ["(i, j) -> (i, j)", "(i, j) -> (j)", "(i, j) -> (i, j)", "(i, j) -> (i, j)"], "pp",
        f"%a, %b : tensor<4x8x{ty}>, tensor<8x{ty}>", f"%e, %e : tensor<4x8x{ty}>, tensor<4x8x{ty}>", f"""
      ^bb0(%x: {ty}, %y: {ty}, %s: {ty}, %t: {ty}):
        %p = {mul} %x, %y : {ty}
        %q = {add} %x, %y : {ty}
        linalg.yield %p, %q : {ty}, {ty}""", f"tensor<4x8x{ty}>, tensor<4x8x{ty}>") + f"""
      %e2 = tensor.empty() : tensor<4x{ty}>
      %acc = linalg.fill ins(%z : {ty}) outs(%e2 : tensor<4x{ty}>) -> tensor<4x{ty}>
      %1 = """ + generic(
        ["(i, r) -> (i, r)", "(i, r) -> (i)"], "pr", f"%0#1 : tensor<4x8x{ty}>",
        f"%acc : tensor<4x{ty}>", f"""
      ^bb0(%x: {ty}, %s: {ty}):
        %r = {add} %s, %x : {ty}
        linalg.yield %r : {ty}""", f"tensor<4x{ty}>") + f"""
      return %0#0, %1 : tensor<4x8x{ty}>, tensor<4x{ty}>
    }}"""
    if ty == "f16":
        a, b = f32(4, 8).astype(dtype), f32(8).astype(dtype)
    else:
        a = RNG.integers(-50, 50, (4, 8)).astype(dtype)
        b = RNG.integers(-50, 50, 8).astype(dtype)
    product, total = run(src, "f", a, b)  # type: ignore[misc]
    check(product, (a * b).astype(dtype), rtol)
    sums = (a.astype(np.float32) + b).astype(dtype) if ty == "f16" else (a + b).astype(dtype)
    expected = sums.astype(np.float32).sum(axis=1) if ty == "f16" else sums.sum(axis=1)
    check(total, np.asarray(expected).astype(dtype), rtol)


def test_diagonal_input_and_its_trace(run: Runner) -> None:
    """An input map naming one loop twice reads the diagonal."""
    src = """
    func.func @f(%a: tensor<5x5xf32>) -> (tensor<5xf32>, tensor<f32>) {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<5xf32>
      %d = """ + generic(
        ["(i) -> (i, i)", "(i) -> (i)"], "p", "%a : tensor<5x5xf32>", "%e : tensor<5xf32>", """
      ^bb0(%x: f32, %s: f32):
        linalg.yield %x : f32""", "tensor<5xf32>") + """
      %e0 = tensor.empty() : tensor<f32>
      %acc = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
      %t = """ + generic(
        ["(i) -> (i, i)", "(i) -> ()"], "r", "%a : tensor<5x5xf32>", "%acc : tensor<f32>", """
      ^bb0(%x: f32, %s: f32):
        %r = arith.addf %x, %s : f32
        linalg.yield %r : f32""", "tensor<f32>") + """
      return %d, %t : tensor<5xf32>, tensor<f32>
    }"""
    a = f32(5, 5)
    diagonal, trace = run(src, "f", a)  # type: ignore[misc]
    check(diagonal, np.diagonal(a).copy())
    check(trace, np.asarray(np.trace(a), np.float32))


UNSUPPORTED = {
    "parallel loop missing from the output": (
        ["(i, j) -> (i, j)", "(i, j) -> (i)"], "pp", "is not indexed by parallel loop\\(s\\) \\[1\\]"),
    "output indexed by a reduction loop": (
        ["(i, j) -> (i, j)", "(i, j) -> (i, j)"], "pr", "is indexed by reduction loop\\(s\\) \\[1\\]"),
    "output written along a diagonal": (
        ["(i, j) -> (i, j)", "(i, j) -> (i, i)"], "pp", "uses a loop dimension twice"),
}


@pytest.mark.parametrize("target", ["reference", "llvm-cpu"])
@pytest.mark.parametrize("case", sorted(UNSUPPORTED))
def test_unsupported_output_maps_are_located_compile_errors(target: str, case: str) -> None:
    maps, iterators, message = UNSUPPORTED[case]
    out = "tensor<3xf32>" if maps[1].endswith("(i)") else "tensor<3x3xf32>"
    src = f"""func.func @f(%a: tensor<3x3xf32>, %o: {out}) -> {out} {{
  %0 = """ + generic(maps, iterators, "%a : tensor<3x3xf32>", f"%o : {out}", """
      ^bb0(%x: f32, %s: f32):
        linalg.yield %x : f32""", out) + f"""
  return %0 : {out}
}}"""
    options = weir.CompilerOptions(target_backends=(target,))
    with pytest.raises(CompileError, match=f"g.mlir:2:3: error: {target} target: output #0 of "
                                           f"linalg.generic {message}, which is not supported"):
        weir.compile_string(src, "g.mlir", options)


def test_a_body_that_ignores_its_input_counts_elements(run: Runner) -> None:
    """The input only sets the iteration space; the module verifier must accept such a body."""
    src = """
    func.func @f(%a: tensor<8x4xf32>) -> tensor<4xf32> {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4xf32>
      %acc = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      %0 = """ + generic(
        ["(r, j) -> (r, j)", "(r, j) -> (j)"], "rp", "%a : tensor<8x4xf32>",
        "%acc : tensor<4xf32>", """
      ^bb0(%x: f32, %s: f32):
        %one = arith.constant 1.0 : f32
        %r = arith.addf %s, %one : f32
        linalg.yield %r : f32""", "tensor<4xf32>") + """
      return %0 : tensor<4xf32>
    }"""
    check(run(src, "f", f32(8, 4)), np.full(4, 8.0, np.float32))

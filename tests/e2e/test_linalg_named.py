"""Named linalg ops other than conv/pooling, compiled and run on every host target (the `run`
fixture), against numpy: batch_matmul, the transposed matmuls, matmul with indexing_maps,
matvec, vecmat, dot, copy, map (long and short form), softmax and the elementwise named ops.
Floats to 1e-5 relative (f16/exp-heavy programs looser, stated per test), integers exactly."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(31)
DTYPES = {"f32": "float32", "f64": "float64", "i32": "int32", "i8": "int8", "f16": "float16"}


def tensor(shape: tuple[int, ...], ty: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{ty}>" if shape else f"tensor<{ty}>"


def random(shape: tuple[int, ...], ty: str) -> np.ndarray:
    if ty.startswith("f"):
        return RNG.standard_normal(shape).astype(DTYPES[ty])
    return RNG.integers(-20, 20, shape).astype(DTYPES[ty])


def check(got: object, expected: np.ndarray, rtol: float = 1e-5) -> None:
    got = np.asarray(got)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, got.dtype)
    if expected.dtype.kind in "iu":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def contraction(op: str, a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...],
                in_ty: str, out_ty: str, maps: str = "") -> str:
    """@f(%a, %b, %init) -> `op` of a and b accumulated into init."""
    return f"""
    func.func @f(%a: {tensor(a, in_ty)}, %b: {tensor(b, in_ty)}, %init: {tensor(out, out_ty)}) -> {tensor(out, out_ty)} {{
      %0 = linalg.{op} {maps}ins(%a, %b : {tensor(a, in_ty)}, {tensor(b, in_ty)}) outs(%init : {tensor(out, out_ty)}) -> {tensor(out, out_ty)}
      return %0 : {tensor(out, out_ty)}
    }}"""


def run_contraction(run: Runner, src: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...],
                    out_shape: tuple[int, ...], in_ty: str, out_ty: str,
                    reference: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
    a, b, init = random(a_shape, in_ty), random(b_shape, in_ty), random(out_shape, out_ty)
    wide = init.dtype
    expected = (init + reference(a.astype(wide), b.astype(wide))).astype(wide)
    check(run(src, "f", a, b, init), expected, 1e-4)


@pytest.mark.parametrize("in_ty, out_ty", [("f32", "f32"), ("i8", "i32"), ("f64", "f64")])
def test_batch_matmul(run: Runner, in_ty: str, out_ty: str) -> None:
    src = contraction("batch_matmul", (3, 4, 5), (3, 5, 6), (3, 4, 6), in_ty, out_ty)
    run_contraction(run, src, (3, 4, 5), (3, 5, 6), (3, 4, 6), in_ty, out_ty, np.matmul)


def test_batch_matmul_stays_on_the_matmul_kernel() -> None:
    src = contraction("batch_matmul", (2, 4, 5), (2, 5, 6), (2, 4, 6), "f32", "f32")
    flow = weir.compile_to_phase(src, "bmm.mlir", weir.CompilerOptions(), "flow")
    assert "linalg.batch_matmul" in flow and "linalg.generic" not in flow


@pytest.mark.parametrize("op, a, b, out, reference", [
    ("matmul_transpose_a", (5, 4), (5, 6), (4, 6), lambda a, b: a.T @ b),
    ("matmul_transpose_b", (4, 5), (6, 5), (4, 6), lambda a, b: a @ b.T),
    ("batch_matmul_transpose_a", (2, 5, 4), (2, 5, 3), (2, 4, 3),
     lambda a, b: np.swapaxes(a, 1, 2) @ b),
    ("batch_matmul_transpose_b", (2, 4, 5), (2, 3, 5), (2, 4, 3),
     lambda a, b: a @ np.swapaxes(b, 1, 2)),
])
@pytest.mark.parametrize("ty", ["f32", "i32"])
def test_transposed_matmuls(run: Runner, op: str, a: tuple[int, ...], b: tuple[int, ...],
                            out: tuple[int, ...], reference: Callable[..., np.ndarray],
                            ty: str) -> None:
    src = contraction(op, a, b, out, ty, ty)
    run_contraction(run, src, a, b, out, ty, ty, reference)


def test_transposed_matmul_becomes_transpose_and_matmul_in_one_dispatch() -> None:
    src = contraction("matmul_transpose_b", (4, 5), (6, 5), (4, 6), "f32", "f32")
    flow = weir.compile_to_phase(src, "mtb.mlir", weir.CompilerOptions(), "flow")
    assert flow.count('"flow.dispatch"(') == 1
    assert "linalg.transpose" in flow and "linalg.matmul ins" in flow


MAPS = "affine_map<(d0, d1, d2) -> ({})>"


@pytest.mark.parametrize("lhs, rhs, out, a, b, o, reference", [
    ("d2, d0", "d2, d1", "d0, d1", (5, 4), (5, 6), (4, 6), lambda a, b: a.T @ b),
    ("d0, d2", "d1, d2", "d0, d1", (4, 5), (6, 5), (4, 6), lambda a, b: a @ b.T),
    ("d2, d0", "d1, d2", "d0, d1", (5, 4), (6, 5), (4, 6), lambda a, b: a.T @ b.T),
    # Not a transpose: the result is written transposed, or an operand is broadcast.
    ("d0, d2", "d2, d1", "d1, d0", (4, 5), (5, 6), (6, 4), lambda a, b: (a @ b).T),
    ("d2", "d2, d1", "d0, d1", (5,), (5, 6), (3, 6),
     lambda a, b: np.broadcast_to(a @ b, (3, 6))),
], ids=["transpose-a", "transpose-b", "transpose-both", "transposed-result", "broadcast-lhs"])
def test_matmul_with_indexing_maps(run: Runner, lhs: str, rhs: str, out: str,
                                   a: tuple[int, ...], b: tuple[int, ...], o: tuple[int, ...],
                                   reference: Callable[..., np.ndarray]) -> None:
    maps = f"indexing_maps = [{MAPS.format(lhs)}, {MAPS.format(rhs)}, {MAPS.format(out)}] "
    src = contraction("matmul", a, b, o, "f32", "f32", maps)
    run_contraction(run, src, a, b, o, "f32", "f32", reference)


@pytest.mark.parametrize("ty", ["f32", "i32"])
def test_matvec(run: Runner, ty: str) -> None:
    src = contraction("matvec", (7, 9), (9,), (7,), ty, ty)
    run_contraction(run, src, (7, 9), (9,), (7,), ty, ty, lambda a, b: a @ b)


@pytest.mark.parametrize("ty", ["f32", "i32"])
def test_vecmat(run: Runner, ty: str) -> None:
    src = contraction("vecmat", (9,), (9, 7), (7,), ty, ty)
    run_contraction(run, src, (9,), (9, 7), (7,), ty, ty, lambda a, b: a @ b)


@pytest.mark.parametrize("in_ty, out_ty", [("f32", "f32"), ("i8", "i32")])
def test_dot(run: Runner, in_ty: str, out_ty: str) -> None:
    src = contraction("dot", (33,), (33,), (), in_ty, out_ty)
    run_contraction(run, src, (33,), (33,), (), in_ty, out_ty, lambda a, b: np.asarray(a @ b))


def test_matvec_with_dynamic_sizes(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<?x?xf32>, %x: tensor<?xf32>) -> tensor<?xf32> {
      %zero = arith.constant 0.0 : f32
      %c0 = arith.constant 0 : index
      %m = tensor.dim %a, %c0 : tensor<?x?xf32>
      %e = tensor.empty(%m) : tensor<?xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
      %0 = linalg.matvec ins(%a, %x : tensor<?x?xf32>, tensor<?xf32>) outs(%acc : tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }"""
    for m, k in ((3, 5), (8, 1)):
        a, x = random((m, k), "f32"), random((k,), "f32")
        check(run(src, "f", a, x), a @ x)


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
          "min": np.minimum}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("ty", ["f32", "i32"])
def test_elementwise_binary_named_ops(run: Runner, op: str, ty: str) -> None:
    t = tensor((3, 5), ty)
    src = f"""
    func.func @f(%a: {t}, %b: {t}) -> {t} {{
      %e = tensor.empty() : {t}
      %0 = linalg.{op} ins(%a, %b : {t}, {t}) outs(%e : {t}) -> {t}
      return %0 : {t}
    }}"""
    a, b = random((3, 5), ty), random((3, 5), ty)
    check(run(src, "f", a, b), BINARY[op](a, b).astype(a.dtype))


@pytest.mark.parametrize("op, reference", [("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt)])
def test_elementwise_unary_named_ops(run: Runner, op: str, reference: Callable[..., np.ndarray]) -> None:
    t = tensor((4, 6), "f32")
    src = f"""
    func.func @f(%a: {t}) -> {t} {{
      %e = tensor.empty() : {t}
      %0 = linalg.{op} ins(%a : {t}) outs(%e : {t}) -> {t}
      return %0 : {t}
    }}"""
    a = RNG.uniform(0.1, 3.0, (4, 6)).astype(np.float32)
    check(run(src, "f", a), reference(a))


def test_select_and_chain_fuse_into_one_dispatch(run: Runner) -> None:
    src = """
    func.func @f(%c: tensor<8xi1>, %a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
      %e = tensor.empty() : tensor<8xf32>
      %s = linalg.select ins(%c, %a, %b : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
      %m = linalg.mul ins(%s, %a : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
      %x = linalg.exp ins(%m : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
      return %x : tensor<8xf32>
    }"""
    flow = weir.compile_to_phase(src, "sel.mlir", weir.CompilerOptions(), "flow")
    assert flow.count('"flow.dispatch"(') == 1
    c = RNG.integers(0, 2, 8).astype(bool)
    a, b = random((8,), "f32"), random((8,), "f32")
    check(run(src, "f", c, a, b), np.exp(np.where(c, a, b) * a))


@pytest.mark.parametrize("ty", ["f32", "i8"])
def test_copy(run: Runner, ty: str) -> None:
    t = tensor((2, 3, 4), ty)
    src = f"""
    func.func @f(%a: {t}) -> {t} {{
      %e = tensor.empty() : {t}
      %0 = linalg.copy ins(%a : {t}) outs(%e : {t}) -> {t}
      return %0 : {t}
    }}"""
    a = random((2, 3, 4), ty)
    check(run(src, "f", a), a)


def test_copy_converts_to_the_output_element_type(run: Runner) -> None:
    """f32 to f16, rounded like numpy (f16 compared to 1e-3)."""
    src = """
    func.func @f(%a: tensor<6xf32>) -> tensor<6xf16> {
      %e = tensor.empty() : tensor<6xf16>
      %0 = linalg.copy ins(%a : tensor<6xf32>) outs(%e : tensor<6xf16>) -> tensor<6xf16>
      return %0 : tensor<6xf16>
    }"""
    a = random((6,), "f32")
    check(run(src, "f", a), a.astype(np.float16), 1e-3)


def test_map_long_form_with_three_inputs(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<4x5xf32>, %b: tensor<4x5xf32>, %c: tensor<4x5xi32>) -> tensor<4x5xf32> {
      %e = tensor.empty() : tensor<4x5xf32>
      %0 = linalg.map ins(%a, %b, %c : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xi32>) outs(%e : tensor<4x5xf32>)
        (%x: f32, %y: f32, %k: i32) {
          %kf = arith.sitofp %k : i32 to f32
          %m = arith.mulf %x, %y : f32
          %r = arith.addf %m, %kf : f32
          linalg.yield %r : f32
        }
      return %0 : tensor<4x5xf32>
    }"""
    a, b, c = random((4, 5), "f32"), random((4, 5), "f32"), random((4, 5), "i32")
    check(run(src, "f", a, b, c), a * b + c.astype(np.float32))


@pytest.mark.parametrize("op, reference", [
    ("arith.addf", lambda a, b: a + b), ("arith.maximumf", np.maximum),
])
def test_map_short_form(run: Runner, op: str, reference: Callable[..., np.ndarray]) -> None:
    src = f"""
    func.func @f(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {{
      %e = tensor.empty() : tensor<16xf32>
      %0 = linalg.map {{ {op} }} ins(%a, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>)
      return %0 : tensor<16xf32>
    }}"""
    a, b = random((16,), "f32"), random((16,), "f32")
    check(run(src, "f", a, b), reference(a, b))


@pytest.mark.parametrize("op, ty, reference", [
    ("arith.addf", "f32", lambda x, init: init + x.sum(axis=0)),
    ("arith.maxsi", "i32", lambda x, init: np.maximum(init, x.max(axis=0))),
])
def test_reduce_short_form(run: Runner, op: str, ty: str,
                           reference: Callable[..., np.ndarray]) -> None:
    src = f"""
    func.func @f(%a: tensor<5x6x{ty}>, %init: tensor<6x{ty}>) -> tensor<6x{ty}> {{
      %0 = linalg.reduce {{ {op} }} ins(%a : tensor<5x6x{ty}>) outs(%init : tensor<6x{ty}>) dimensions = [0]
      return %0 : tensor<6x{ty}>
    }}"""
    a, init = random((5, 6), ty), random((6,), ty)
    check(run(src, "f", a, init), reference(a, init).astype(a.dtype))


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("shape, dim", [((4, 10), 1), ((4, 10), 0), ((2, 3, 7), 1),
                                        ((2, 3, 7), 2)])
def test_softmax(run: Runner, shape: tuple[int, ...], dim: int) -> None:
    t = tensor(shape, "f32")
    src = f"""
    func.func @f(%a: {t}) -> {t} {{
      %e = tensor.empty() : {t}
      %0 = linalg.softmax dimension({dim}) ins(%a : {t}) outs(%e : {t}) -> {t}
      return %0 : {t}
    }}"""
    a = (RNG.standard_normal(shape) * 4).astype(np.float32)
    check(run(src, "f", a), softmax(a, dim), 1e-5)


def test_softmax_of_large_values_does_not_overflow(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<3x5xf32>) -> tensor<3x5xf32> {
      %e = tensor.empty() : tensor<3x5xf32>
      %0 = linalg.softmax dimension(1) ins(%a : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
      return %0 : tensor<3x5xf32>
    }"""
    a = (RNG.standard_normal((3, 5)) * 100 + 500).astype(np.float32)
    got = np.asarray(run(src, "f", a))
    assert np.all(np.isfinite(got))
    check(got, softmax(a, 1), 1e-5)


def test_fill_transpose_broadcast_reduce_chain(run: Runner) -> None:
    """Every structured op xDSL has, feeding each other: fill, transpose, broadcast, reduce."""
    src = """
    func.func @f(%a: tensor<3x4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
      %zero = arith.constant 0.0 : f32
      %t0 = tensor.empty() : tensor<4x3xf32>
      %t = linalg.transpose ins(%a : tensor<3x4xf32>) outs(%t0 : tensor<4x3xf32>) permutation = [1, 0]
      %b0 = tensor.empty() : tensor<4x3xf32>
      %b = linalg.broadcast ins(%v : tensor<4xf32>) outs(%b0 : tensor<4x3xf32>) dimensions = [1]
      %s = arith.mulf %t, %b : tensor<4x3xf32>
      %r0 = tensor.empty() : tensor<4xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
      %r = linalg.reduce ins(%s : tensor<4x3xf32>) outs(%acc : tensor<4xf32>) dimensions = [1]
        (%x: f32, %y: f32) {
          %z = arith.addf %x, %y : f32
          linalg.yield %z : f32
        }
      return %r : tensor<4xf32>
    }"""
    a, v = random((3, 4), "f32"), random((4,), "f32")
    check(run(src, "f", a, v), (a.T * v[:, None]).sum(axis=1))

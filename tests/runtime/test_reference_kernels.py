"""Reference kernels against numpy: each op kind, broadcasting maps, reductions, integer
semantics and dynamic shapes."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_runner import run_kernel

from weir.errors import RuntimeFault
from weir.format.kernel_description import (
    Broadcast,
    Empty,
    Fill,
    Generic,
    Load,
    Matmul,
    PushDim,
    Reduce,
    Result,
    ScalarOp,
    Store,
    Transpose,
)

rng = np.random.default_rng(0)


def test_elementwise_with_broadcast_maps() -> None:
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)  # broadcast along rows
    c = rng.standard_normal((1, 3)).astype(np.float32)  # [0, i] via a -1 map entry, transposed
    ops = [
        Load(0, "f32", (3, 4)), Load(1, "f32", (4,)), Load(2, "f32", (1, 3)), Empty("f32", (3, 4)),
        Generic((0, 1, 2), (3,), ((0, 1), (1,), (-1, 0), (0, 1)), ("parallel", "parallel"),
                (ScalarOp("mulf", (0, 1), "f32"), ScalarOp("addf", (4, 2), "f32"),
                 ScalarOp("exp", (5,), "f32")), (6,)),
        Store(4, 3),
    ]
    (out,) = run_kernel(ops, [a, b, c], [((3, 4), "float32")])
    np.testing.assert_allclose(out, np.exp(a * b + c.reshape(3, 1)), rtol=1e-6)


def test_row_sum_reduction_generic() -> None:
    a = rng.standard_normal((5, 7)).astype(np.float32)
    ops = [
        Load(0, "f32", (5, 7)), Empty("f32", (5,)), Fill(1, 0.0),
        Generic((0,), (2,), ((0, 1), (0,)), ("parallel", "reduction"),
                (ScalarOp("addf", (0, 1), "f32"),), (2,)),
        Store(3, 1),
    ]
    (out,) = run_kernel(ops, [a], [((5,), "float32")])
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-5)


def test_reduction_of_a_computed_value_with_the_acc_first() -> None:
    a = rng.standard_normal((4, 6)).astype(np.float32)
    # out[j] = max(out[j], a[i, j] * 2) over i: reduction over the *first* loop, combine(acc, x)
    ops = [
        Load(0, "f32", (4, 6)), Empty("f32", (6,)), Fill(1, float("-inf")),
        Generic((0,), (2,), ((1, 0), (0,)), ("parallel", "reduction"),
                (ScalarOp("constant", (), "f32", 2.0), ScalarOp("mulf", (0, 2), "f32"),
                 ScalarOp("maximumf", (1, 3), "f32")), (4,)),
        Store(3, 1),
    ]
    (out,) = run_kernel(ops, [a], [((6,), "float32")])
    np.testing.assert_allclose(out, (a * 2).max(axis=0))


def test_non_combiner_reduction_body_runs_step_by_step() -> None:
    # out[i] = (out[i] - a[i, j]) * 0.5 over j, in order: not a combine, so sequential.
    a = rng.standard_normal((4, 6)).astype(np.float32)
    ops = [
        Load(0, "f32", (4, 6)), Empty("f32", (4,)), Fill(1, 1.0),
        Generic((0,), (2,), ((0, 1), (0,)), ("parallel", "reduction"),
                (ScalarOp("subf", (1, 0), "f32"), ScalarOp("constant", (), "f32", 0.5),
                 ScalarOp("mulf", (2, 3), "f32")), (4,)),
        Store(3, 1),
    ]
    expected = np.ones(4, np.float32)
    for j in range(6):
        expected = (expected - a[:, j]) * np.float32(0.5)
    (out,) = run_kernel(ops, [a], [((4,), "float32")])
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_matmul_accumulates_into_init() -> None:
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((5, 2)).astype(np.float32)
    ops = [Load(0, "f32", (3, 5)), Load(1, "f32", (5, 2)), Empty("f32", (3, 2)), Fill(2, 1.0),
           Matmul(0, 1, 3), Store(4, 2)]
    (out,) = run_kernel(ops, [a, b], [((3, 2), "float32")])
    np.testing.assert_allclose(out, a @ b + 1.0, rtol=1e-5)


def test_bf16_matmul_rounds_to_bf16_after_each_step() -> None:
    """As linalg.matmul's body says (mulf/addf in the result's type) and IREE computes: each
    product is formed in f32 and each partial sum rounded to bf16, k in order."""
    import ml_dtypes
    a = rng.standard_normal((4, 64)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 3)).astype(ml_dtypes.bfloat16)
    ops = [Load(0, "bf16", (4, 64)), Load(1, "bf16", (64, 3)), Empty("bf16", (4, 3)),
           Matmul(0, 1, 2), Store(3, 2)]
    (out,) = run_kernel(ops, [a, b], [((4, 3), ml_dtypes.bfloat16)])
    total = np.zeros((4, 3), np.float32)
    for k in range(64):
        step = a[:, k:k + 1].astype(np.float32) * b[k:k + 1, :].astype(np.float32)
        total = (total + step).astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(out, total.astype(ml_dtypes.bfloat16))


def test_transpose_and_broadcast() -> None:
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    v = rng.standard_normal(3).astype(np.float32)
    ops = [Load(0, "f32", (2, 3, 4)), Empty("f32", (4, 2, 3)), Transpose(0, 1, (2, 0, 1)),
           Store(2, 2),
           Load(1, "f32", (3,)), Empty("f32", (2, 3, 5)), Broadcast(3, 4, (0, 2)), Store(5, 3)]
    t, bc = run_kernel(ops, [a, v], [((4, 2, 3), "float32"), ((2, 3, 5), "float32")])
    np.testing.assert_array_equal(t, a.transpose(2, 0, 1))
    np.testing.assert_array_equal(bc, np.broadcast_to(v[None, :, None], (2, 3, 5)))


def test_reduce_max_and_multi_result() -> None:
    a = rng.standard_normal((3, 8)).astype(np.float32)
    ops = [Load(0, "f32", (3, 8)), Empty("f32", (3,)), Fill(1, float("-inf")),
           Reduce((0,), (2,), (1,), (ScalarOp("maximumf", (0, 1), "f32"),), (2,)),
           Result(3, 0), Store(4, 1)]
    (out,) = run_kernel(ops, [a], [((3,), "float32")])
    np.testing.assert_array_equal(out, a.max(axis=1))


def test_fill_i32_and_divsi_truncates_toward_zero() -> None:
    a = np.array([7, -7, 7, -7, -2147483648], np.int32)
    b = np.array([2, 2, -2, -2, -1], np.int32)
    ops = [Load(0, "i32", (5,)), Load(1, "i32", (5,)), Empty("i32", (5,)),
           Generic((0, 1), (2,), ((0,), (0,), (0,)), ("parallel",),
                   (ScalarOp("divsi", (0, 1), "i32"),), (3,)),
           Store(3, 2),
           Generic((0, 1), (2,), ((0,), (0,), (0,)), ("parallel",),
                   (ScalarOp("remsi", (0, 1), "i32"),), (3,)),
           Store(4, 3),
           Empty("i32", (2,)), Fill(5, -5), Store(6, 4)]
    q, r, f = run_kernel(ops, [a, b], [((5,), "int32"), ((5,), "int32"), ((2,), "int32")])
    assert q.tolist() == [3, -3, -3, 3, -2147483648]  # INT_MIN / -1 wraps
    assert r.tolist() == [1, -1, 1, -1, 0]
    assert f.tolist() == [-5, -5]


def test_integer_wraparound_and_unsigned_views() -> None:
    a = np.array([2147483647, -1], np.int32)
    ops = [Load(0, "i32", (2,)), Empty("i32", (2,)),
           Generic((0,), (1,), ((0,), (0,)), ("parallel",),
                   (ScalarOp("constant", (), "i32", 1), ScalarOp("addi", (0, 2), "i32")), (3,)),
           Store(2, 1),
           Empty("i1", (2,)),
           Generic((0,), (3,), ((0,), (0,)), ("parallel",),
                   (ScalarOp("constant", (), "i32", 5), ScalarOp("cmpi", (0, 2), "i1", "ugt")), (3,)),
           Store(4, 2)]
    s, c = run_kernel(ops, [a], [((2,), "int32"), ((2,), "bool")])
    assert s.tolist() == [-2147483648, 0]
    assert c.tolist() == [True, True]  # 0x7fffffff > 5 and 0xffffffff > 5 unsigned


def test_dynamic_shape_from_push_constant_and_index_op() -> None:
    n = 6
    a = rng.standard_normal(n).astype(np.float32)
    ops = [Load(0, "f32", (PushDim(0),)), Empty("f32", (PushDim(0),)),
           Generic((0,), (1,), ((0,), (0,)), ("parallel",),
                   (ScalarOp("index", (), "index", 0), ScalarOp("sitofp", (2,), "f32", "f32"),
                    ScalarOp("addf", (0, 3), "f32")), (4,)),
           Store(2, 1)]
    (out,) = run_kernel(ops, [a], [((n,), "float32")], constants=(n,))
    np.testing.assert_allclose(out, a + np.arange(n, dtype=np.float32))


def test_erf_and_cmpf_select() -> None:
    x = np.linspace(-4, 4, 33).astype(np.float32)
    ops = [Load(0, "f32", (33,)), Empty("f32", (33,)),
           Generic((0,), (1,), ((0,), (0,)), ("parallel",),
                   (ScalarOp("erf", (0,), "f32"), ScalarOp("constant", (), "f32", 0.0),
                    ScalarOp("cmpf", (0, 3), "i1", "olt"), ScalarOp("negf", (2,), "f32"),
                    ScalarOp("select", (4, 5, 2), "f32")), (6,)),
           Store(2, 1)]
    (out,) = run_kernel(ops, [x], [((33,), "float32")])
    import math
    expected = np.array([abs(math.erf(float(v))) for v in x], np.float32)
    np.testing.assert_allclose(out, expected, atol=1e-7)


def test_out_of_range_load_is_a_runtime_fault() -> None:
    ops = [Load(0, "f32", (PushDim(0),)), Store(0, 1)]
    with pytest.raises(RuntimeFault, match="outside the buffer"):
        run_kernel(ops, [np.zeros(4, np.float32)], [((4,), "float32")], constants=(8,))

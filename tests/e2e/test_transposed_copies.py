"""Transposes that move the innermost dimension, run as their own dispatch (an NHWC result
handed back as NCHW, a matrix transposed): llvm-cpu copies them in 8 x 8 register blocks
between the source's contiguous dimension and the result's (elementwise.py), on every host
target against numpy: sizes that are whole blocks and sizes with edges on both sides, 2-D,
3-D and 4-D permutations, a source that is a slice, and f64 (the element loop). The blocks
themselves: tests/compiler/llvm_cpu/test_transpose_codegen.py."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(17)


def _type(shape: tuple[int, ...], dtype: str = "f32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"


def program(shape: tuple[int, ...], permutation: tuple[int, ...], dtype: str = "f32") -> str:
    out = tuple(shape[p] for p in permutation)
    return f"""
    func.func @f(%x: {_type(shape, dtype)}) -> {_type(out, dtype)} {{
      %e = tensor.empty() : {_type(out, dtype)}
      %t = linalg.transpose ins(%x : {_type(shape, dtype)}) outs(%e : {_type(out, dtype)}) permutation = {list(permutation)}
      return %t : {_type(out, dtype)}
    }}"""


CASES = [((1, 111, 111, 64), (0, 3, 1, 2)), ((2, 9, 13, 20), (0, 3, 1, 2)),
         ((64, 48), (1, 0)), ((67, 45), (1, 0)), ((5, 16, 24), (0, 2, 1)),
         ((1, 16, 10, 12), (0, 2, 3, 1))]
IDS = ["nhwc-to-nchw", "edges-two-images", "matrix", "matrix-edges", "batched", "nchw-to-nhwc"]


@pytest.mark.parametrize("shape, permutation", CASES, ids=IDS)
def test_transpose(run: Runner, shape: tuple[int, ...], permutation: tuple[int, ...]) -> None:
    x = RNG.standard_normal(shape).astype(np.float32)
    got = np.asarray(run(program(shape, permutation), "f", x))
    np.testing.assert_array_equal(got, x.transpose(permutation))


def test_transpose_of_a_slice(run: Runner) -> None:
    source = """
    func.func @f(%x: tensor<20x40xf32>) -> tensor<30x16xf32> {
      %s = tensor.extract_slice %x[2, 5] [16, 30] [1, 1] : tensor<20x40xf32> to tensor<16x30xf32>
      %e = tensor.empty() : tensor<30x16xf32>
      %t = linalg.transpose ins(%s : tensor<16x30xf32>) outs(%e : tensor<30x16xf32>) permutation = [1, 0]
      return %t : tensor<30x16xf32>
    }"""
    x = RNG.standard_normal((20, 40)).astype(np.float32)
    got = np.asarray(run(source, "f", x))
    np.testing.assert_array_equal(got, x[2:18, 5:35].T)


def test_f64_transpose(run: Runner) -> None:
    x = RNG.standard_normal((12, 20))
    got = np.asarray(run(program((12, 20), (1, 0), "f64"), "f", x))
    np.testing.assert_array_equal(got, x.T)


"""The llvm-cpu code of data movement stays small enough for LLVM to compile quickly: a chain of
static inserts (an LSTM's stacked hidden states) is copies, not one block of thousands of
unrolled stores; a convolution's filter packing and NCHW input rows are loops, not unrolled
bodies vectorised around (hundreds of loads in one block, whose dependence checks cost LLVM
seconds). The code still computes the right values."""

from __future__ import annotations

import ctypes
import re

import numpy as np
from lowered import lowered_entry

from weir.compiler.targets.llvm_cpu.target import Jit

RNG = np.random.default_rng(11)
ENTRY = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                         ctypes.c_int64, ctypes.c_void_p)


def _jit(src: str) -> Jit:
    """The program's one dispatch as a native entry `weir_entry` (NCHW convolutions kept
    NCHW: the code under test is the direct kernel's for the exporters' layouts)."""
    lowered = lowered_entry(src, disabled=frozenset({"convert-conv-to-channels-last"}))
    return Jit(lowered.module, lowered.cpu)


def _run(jit: Jit, arrays: list[np.ndarray]) -> None:
    """The entry over all its workgroups (the range is clipped to the entry's extent)."""
    entry = ENTRY(jit.address("weir_entry"))
    pointers = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
    record = (ctypes.c_int64 * 4)()
    assert entry(pointers, None, 0, 1 << 20, record) == 0


def _largest_block(code: str, prefix: str = "") -> int:
    """The most loads and stores in one basic block of optimised LLVM IR whose label starts
    with `prefix` (LLVM names the loops it vectorises `vector.body`)."""
    most = count = 0
    counting = False
    for line in code.splitlines():
        label = re.match(r"^([\w.\"-]+):", line)
        if label or line.startswith("define"):
            count = 0
            counting = bool(label) and label.group(1).startswith(prefix)
        elif counting and re.search(r"= load |^\s*store ", line):
            count += 1
            most = max(most, count)
    return most


def test_a_chain_of_static_inserts_is_copies() -> None:
    rows = 16
    args = ", ".join(f"%a{i}: tensor<1x8x256xf32>" for i in range(rows))
    lines = ["%s = tensor.empty() : tensor<16x8x256xf32>"]
    for i in range(rows):
        lines.append(f"%s{i} = tensor.insert_slice %a{i} into %s{i - 1 if i else ''}"
                     f"[{i}, 0, 0] [1, 8, 256] [1, 1, 1] : tensor<1x8x256xf32> into "
                     f"tensor<16x8x256xf32>")
    src = (f"func.func @f({args}) -> tensor<16x8x256xf32> {{\n  " + "\n  ".join(lines) +
           f"\n  return %s{rows - 1} : tensor<16x8x256xf32>\n}}")
    jit = _jit(src)
    # Unrolled whole, the 16 copies of 2,048 floats were one block of 3,841 vector stores.
    assert _largest_block(jit.optimized_ir) < 300
    parts = [RNG.standard_normal((1, 8, 256)).astype(np.float32) for _ in range(rows)]
    out = np.zeros((16, 8, 256), np.float32)
    _run(jit, parts + [out])
    np.testing.assert_array_equal(out, np.concatenate(parts))


def _conv(xs: tuple[int, int, int, int], ws: tuple[int, int, int, int]) -> None:
    """An NCHW x FCHW convolution (the exporters' layouts, taken by the direct kernel): no
    loop LLVM vectorises has a huge body, and the result is numpy's."""
    n, c, h, w = xs
    f, _, kh, kw = ws
    os = (n, f, h - kh + 1, w - kw + 1)
    t = {name: f"tensor<{'x'.join(map(str, s))}xf32>" for name, s in
         (("x", xs), ("w", ws), ("o", os))}
    src = f"""
    func.func @f(%x: {t['x']}, %w: {t['w']}) -> {t['o']} {{
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : {t['o']}
      %init = linalg.fill ins(%zero : f32) outs(%e : {t['o']}) -> {t['o']}
      %0 = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}} ins(%x, %w : {t['x']}, {t['w']}) outs(%init : {t['o']}) -> {t['o']}
      return %0 : {t['o']}
    }}"""
    jit = _jit(src)
    assert _largest_block(jit.optimized_ir, "vector.body") < 100
    x = RNG.standard_normal(xs).astype(np.float32)
    wt = RNG.standard_normal(ws).astype(np.float32)
    out = np.full(os, np.nan, np.float32)
    _run(jit, [x, wt, out])
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (kh, kw),
                                                       axis=(2, 3))
    expected = np.einsum("nchwij,fcij->nfhw", windows, wt.astype(np.float64))
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-4)


def test_a_7x7_filter_is_packed_by_loops() -> None:
    # Packing unrolled over the 49 taps and vectorised over F: 392 loads and 49 stores a block.
    _conv((1, 3, 16, 16), (16, 3, 7, 7))


def test_nchw_input_rows_are_copied_by_loops() -> None:
    # Rows of 58 unrolled and vectorised over 64 channels: 464 loads and 58 stores a block.
    _conv((1, 64, 12, 58), (16, 64, 3, 3))

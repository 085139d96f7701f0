"""Long and deep programs compile and run: exported models are thousands of ops long, so no step
of the compiler may recurse once per op (a fused chain of elementwise ops is one kernel whose
per-element expression is as long as the chain; a chain of helper calls is as deep as it is
long), and nesting hundreds of regions deep must work. Sizes are past where recursion used to
fail (Python stops at 1,000 frames) and small enough for the normal test run; compile time
itself is measured by benchmarks/compile_time.py, never asserted here."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import weir.api as weir
from weir.errors import CompileError

T = "tensor<16xf32>"
A = np.linspace(-1.0, 1.0, 16, dtype=np.float32)
B = np.linspace(0.3, 0.5, 16, dtype=np.float32)
NUMPY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "maximumf": np.maximum,
    "minimumf": np.minimum}


def elementwise_program(n: int, step: Callable[[int], tuple[str, str, str]]) -> tuple[str, np.ndarray]:
    """`n` ops `%i = arith.NAME X, Y` (step(i) gives NAME, X, Y), and numpy's result."""
    values = {"%a": A, "%b": B}
    lines = [f"func.func @main(%a: {T}, %b: {T}) -> {T} {{"]
    for i in range(n):
        name, x, y = step(i)
        lines.append(f"  %{i} = arith.{name} {x}, {y} : {T}")
        values[f"%{i}"] = NUMPY[name](values[x], values[y]).astype(np.float32)
    lines += [f"  return %{n - 1} : {T}", "}"]
    return "\n".join(lines), values[f"%{n - 1}"]


def chain(n: int) -> tuple[str, np.ndarray]:
    """Each op uses the one before: x -> max((x + a) * b - a, b), repeated."""
    steps = (("addf", "%a"), ("mulf", "%b"), ("subf", "%a"), ("maximumf", "%b"))
    return elementwise_program(n, lambda i: (steps[i % 4][0], f"%{i - 1}" if i else "%a",
                                             steps[i % 4][1]))


def graph(n: int) -> tuple[str, np.ndarray]:
    """Each op also uses a value up to 97 ops back (fan-out and fan-in); values stay in [-1, 1]."""
    def far(i: int) -> str:
        return f"%{i - 2 - (i * 7919) % min(i - 1, 97)}" if i >= 2 else "%b"

    def step(i: int) -> tuple[str, str, str]:
        prev = f"%{i - 1}" if i else "%a"
        return (("addf", prev, far(i)), ("mulf", prev, "%b"), ("minimumf", prev, far(i)),
                ("maximumf", prev, "%a"))[i % 4]
    return elementwise_program(n, step)


def run(source: str, target: str, function: str, *args: object) -> object:
    module = weir.compile_string(source, "long.mlir", weir.CompilerOptions(target_backends=(target,)))
    with weir.load([module], device="local-task") as context:
        return context.lookup_function(function)(*args)


@pytest.mark.parametrize("program", [chain, graph])
def test_two_thousand_elementwise_ops_fuse_into_one_kernel_on_llvm_cpu(
        program: Callable[[int], tuple[str, np.ndarray]]) -> None:
    source, expected = program(2000)
    flow = weir.compile_to_phase(source, "long.mlir", weir.CompilerOptions(), "flow")
    assert flow.count('"flow.dispatch"(') == 1
    np.testing.assert_allclose(run(source, "llvm-cpu", "main", A, B), expected,
                               rtol=1e-5, atol=1e-6)


def test_separate_dispatches_one_after_another() -> None:
    """Matmuls and adds alternating: each add is the epilogue of the matmul before it, so every
    matmul is a dispatch of its own with its add: 150 in a row."""
    rng = np.random.default_rng(3)
    m = "tensor<4x4xf32>"
    x, a = rng.uniform(-1, 1, (2, 4, 4)).astype(np.float32)
    w = (rng.uniform(-1, 1, (4, 4)) / 8).astype(np.float32)
    lines = [f"func.func @main(%x: {m}, %w: {m}, %a: {m}) -> {m} {{",
             f"  %zero = arith.constant dense<0.0> : {m}"]
    prev, expected = "%x", x
    for i in range(300):
        if i % 2 == 0:
            lines.append(f"  %{i} = linalg.matmul ins({prev}, %w : {m}, {m}) outs(%zero : {m}) -> {m}")
            expected = expected @ w
        else:
            lines.append(f"  %{i} = arith.addf {prev}, %a : {m}")
            expected = expected + a
        prev = f"%{i}"
    source = "\n".join(lines + [f"  return {prev} : {m}", "}"])
    flow = weir.compile_to_phase(source, "long.mlir", weir.CompilerOptions(), "flow")
    assert flow.count('"flow.dispatch"(') == 150
    np.testing.assert_allclose(run(source, "reference", "main", x, w, a), expected, rtol=1e-5,
                               atol=1e-6)


def test_a_chain_of_a_thousand_helper_calls_is_inlined() -> None:
    """@h0 calls @h1 ... calls @h999, each adding x: the call graph is as deep as it is long."""
    n = 1000
    lines = [f"func.func @main(%x: {T}) -> {T} {{",
             f"  %0 = func.call @h0(%x) : ({T}) -> {T}", f"  return %0 : {T}", "}"]
    for i in range(n):
        lines.append(f"func.func private @h{i}(%x: {T}) -> {T} {{")
        if i + 1 < n:
            lines += [f"  %0 = func.call @h{i + 1}(%x) : ({T}) -> {T}",
                      f"  %1 = arith.addf %0, %x : {T}", f"  return %1 : {T}"]
        else:
            lines.append(f"  return %x : {T}")
        lines.append("}")
    expected = A
    for _ in range(n - 1):
        expected = expected + A  # in f32, in the program's order
    np.testing.assert_array_equal(run("\n".join(lines), "reference", "main", A), expected)


def nested_ifs(depth: int) -> str:
    """`depth` scf.if nested in each other; the innermost doubles x, every else yields x."""
    lines = [f"func.func @main(%c: i1, %x: {T}) -> {T} {{"]
    for k in range(depth):
        lines.append(f"%r{k} = scf.if %c -> ({T}) {{")
    lines += [f"%y = arith.addf %x, %x : {T}", f"scf.yield %y : {T}"]
    for k in reversed(range(depth)):
        lines += ["} else {", f"scf.yield %x : {T}", "}"]
        if k:
            lines.append(f"scf.yield %r{k} : {T}")
    return "\n".join(lines + [f"return %r0 : {T}", "}"])


def test_three_hundred_nested_ifs_compile_and_run() -> None:
    source = nested_ifs(300)
    module = weir.compile_string(source, "deep.mlir")
    with weir.load([module], device="local-sync") as context:
        main = context.lookup_function("main")
        np.testing.assert_array_equal(main(np.bool_(True), A), A + A)
        np.testing.assert_array_equal(main(np.bool_(False), A), A)


def test_regions_nested_past_the_limit_are_a_located_error() -> None:
    """2,000 levels of regions are accepted (the function body is one of them); the next one is
    refused where it opens, before the stack could overflow."""
    with pytest.raises(CompileError) as raised:
        weir.compile_string(nested_ifs(2000), "deep.mlir")
    # Line 2001 opens the 2,001st region: its `{` ends the line.
    message = str(raised.value)
    assert message.startswith("deep.mlir:2001:")
    assert "input is nested too deeply: regions nest more than 2000 levels here" in message

"""Per-invocation overhead of calling a compiled function through the Python API: `tiny`
(x + 1 on 4 floats) and the simple_mul sample, on both targets and both local drivers. The native
kernels take about a microsecond, so on llvm-cpu the figures are mostly what the API, the VM, the
HAL and the executable loader add around them; on reference, its numpy interpretation adds more.

    .venv/bin/python benchmarks/call_overhead.py [--calls N] [--rounds R]

Prints, per configuration, the lowest of several rounds' median call times (after a warm-up),
which resists the noise of a shared machine better than a mean.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import weir.api as weir

TINY = """func.func @tiny(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  %0 = arith.addf %a, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
SIMPLE_MUL = Path(__file__).resolve().parents[1] / "samples" / "simple_mul" / "simple_mul.mlir"
X = np.array([1, 2, 3, 4], np.float32)
Y = np.array([10, 20, 30, 40], np.float32)
# name -> (source, function, arguments, expected result)
WORKLOADS: dict[str, tuple[str, str, tuple[np.ndarray, ...], np.ndarray]] = {
    "tiny": (TINY, "tiny", (X,), X + 1),
    "simple_mul": (SIMPLE_MUL.read_text(), "simple_mul", (X, Y), X * Y),
}


def call_us(call: Callable[[], Any], calls: int, rounds: int) -> float:
    """The lowest of `rounds` medians of `calls` timed calls each: other processes on a shared
    machine only ever add time, so the quietest round is the closest to the real cost."""
    for _ in range(max(calls // 10, 50)):
        call()
    medians = []
    for _ in range(rounds):
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            call()
            times.append(time.perf_counter() - started)
        medians.append(float(np.median(times)))
    return min(medians) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="timed calls per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print("| workload | target | driver | µs per call |\n|---|---|---|---|")
    for name, (source, function, inputs, expected) in WORKLOADS.items():
        for target in ("reference", "llvm-cpu"):
            program = weir.compile_string(source, f"{name}.mlir",
                                          weir.CompilerOptions(target_backends=(target,)))
            for driver in ("local-sync", "local-task"):
                fn = weir.load([program], device=driver).lookup_function(function)
                np.testing.assert_array_equal(fn(*inputs), expected)
                per_call = call_us(lambda: fn(*inputs), args.calls, args.rounds)  # noqa: B023
                print(f"| {name} | {target} | {driver} | {per_call:.1f} |")


if __name__ == "__main__":
    main()

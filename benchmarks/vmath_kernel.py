"""Single-thread throughput of the llvm-cpu target's inline math functions on f32: a loop of
`emit_math` over N elements, compiled for this CPU at O3 (so vectorised), against numpy's own
ufunc on the same array. With exp at a few ms for 16M elements the loop is close to memory
bound, where a loop calling `expf` would be several times slower.

    .venv/bin/python benchmarks/vmath_kernel.py [--n 16777216] [--repeat 10]
        [exp log ...]

On AVX-512 machines the loops use 512-bit vectors (CpuTarget.target_machine turns off LLVM's
256-bit preference).
"""

from __future__ import annotations

import argparse
import ctypes
import math
import time
from collections.abc import Callable

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
from weir.compiler.targets.llvm_cpu.target import Jit
from weir.compiler.targets.llvm_cpu.vmath import emit_math

ARITY = {"pow": 2, "atan2": 2}
NUMPY: dict[str, Callable[..., np.ndarray]] = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "atan": np.arctan, "atan2": np.arctan2, "pow": np.power, "sqrt": np.sqrt,
    "erf": np.frompyfunc(math.erf, 1, 1),
}
# Inputs in each function's ordinary range.
RANGES = {"log": (1e-3, 1e3), "log2": (1e-3, 1e3), "log10": (1e-3, 1e3), "log1p": (-0.5, 1e3),
          "sqrt": (0.0, 1e3), "pow": (0.1, 10.0)}


def compile_loops(names: list[str]) -> llvm.ExecutionEngine:
    cpu = resolve_cpu("host")
    module = ir.Module("vmath_bench")
    module.triple = cpu.triple
    f32, i64 = ir.FloatType(), ir.IntType(64)
    for name in names:
        n_in = ARITY.get(name, 1)
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(),
                                                 [f32.as_pointer()] * (n_in + 1) + [i64]), name)
        for arg in fn.args[:-1]:
            arg.add_attribute("noalias")
        entry, body, done = (fn.append_basic_block(n) for n in ("entry", "body", "done"))
        b = ir.IRBuilder(entry)
        b.cbranch(b.icmp_signed(">", fn.args[-1], ir.Constant(i64, 0)), body, done)
        b.position_at_end(body)
        index = b.phi(i64)
        index.add_incoming(ir.Constant(i64, 0), entry)
        operands = [b.load(b.gep(fn.args[k], [index])) for k in range(n_in)]
        b.store(emit_math(b, name, operands, cpu.native_ldexp),
                b.gep(fn.args[n_in], [index]))
        following = b.add(index, ir.Constant(i64, 1))
        index.add_incoming(following, body)
        b.cbranch(b.icmp_signed("<", following, fn.args[-1]), body, done)
        b.position_at_end(done)
        b.ret_void()
    return Jit(module, cpu).engine


def best_ms(run: Callable[[], object], repeat: int) -> float:
    run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16 * 1024 * 1024)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("names", nargs="*", default=["exp", "log", "tanh", "sin", "erf", "pow"])
    args = parser.parse_args()
    engine = compile_loops(args.names)
    rng = np.random.default_rng(0)
    print(f"{args.n} f32 elements, one thread\n"
          "| function | weir ms | weir ns/element | weir GB/s | numpy ms |\n|---|---|---|---|---|")
    for name in args.names:
        lo, hi = RANGES.get(name, (-10.0, 10.0))
        operands = [rng.uniform(lo, hi, args.n).astype(np.float32)
                    for _ in range(ARITY.get(name, 1))]
        out = np.empty_like(operands[0])
        proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (len(operands) + 1), ctypes.c_int64)
        fn = proto(engine.get_function_address(name))
        pointers = [x.ctypes.data for x in operands] + [out.ctypes.data]
        ours = best_ms(lambda: fn(*pointers, args.n), args.repeat)
        # erf has no numpy ufunc: time math.erf on a slice and scale, for the order of magnitude
        if name == "erf":
            theirs = best_ms(lambda: NUMPY[name](operands[0][:args.n // 64]), 1) * 64
        else:
            theirs = best_ms(lambda: NUMPY[name](*operands, out=out), args.repeat)
        traffic = (len(operands) + 1) * 4 * args.n / (ours * 1e-3) / 1e9
        print(f"| {name} | {ours:.3f} | {ours * 1e6 / args.n:.2f} | {traffic:.1f} | {theirs:.3f} |")


if __name__ == "__main__":
    main()

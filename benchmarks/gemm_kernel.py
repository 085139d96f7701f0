"""GFLOP/s of the llvm-cpu GEMM microkernel (f32) against numpy's BLAS, both on one thread, and
as a fraction of this core's peak, measured here with a JIT-compiled loop of independent vector
FMAs (so the fraction does not depend on the clock the core happens to run at).

    .venv/bin/python benchmarks/gemm_kernel.py [--shapes 1024x1024x1024,64x1024x10] [--trials N]

Shapes are MxKxN. Each figure is the best of N timed trials (a trial repeats a call for at
least 20 ms of the thread's CPU time), which resists the noise of a shared machine better than
a mean.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads its BLAS

import argparse  # noqa: E402
import ctypes  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import llvmlite.binding as llvm  # noqa: E402
import llvmlite.ir as ir  # noqa: E402
import numpy as np  # noqa: E402

from weir.compiler.targets.llvm_cpu.gemm import get_gemm  # noqa: E402
from weir.compiler.targets.llvm_cpu.machine import CpuTarget, resolve_cpu  # noqa: E402
from weir.compiler.targets.llvm_cpu.target import Jit  # noqa: E402

SHAPES = "512x512x512,1024x1024x1024,64x784x1024,64x1024x1024,64x1024x10"
FMA_CHAINS = 24  # more than FMA latency x FMA ports on any x86 core
_GEMM = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                         ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                         ctypes.c_int64)


def jit(cpu: CpuTarget, module: ir.Module) -> llvm.ExecutionEngine:
    return Jit(module, cpu).engine


def fma_loop(cpu: CpuTarget) -> ir.Module:
    """`void fma_peak(i64 rounds, float* out)`: each round one FMA on each of FMA_CHAINS
    accumulators, in the widest vectors the CPU has."""
    lanes = cpu.vector_bits // 32
    vector = ir.VectorType(ir.FloatType(), lanes)
    i64 = ir.IntType(64)
    module = ir.Module("fma_peak")
    module.triple = cpu.triple
    fma = ir.Function(module, ir.FunctionType(vector, [vector] * 3), f"llvm.fma.v{lanes}f32")
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i64, ir.FloatType().as_pointer()]),
                     "fma_peak")
    rounds, out = fn.args
    entry, loop, done = (fn.append_basic_block(name) for name in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(i64)
    chains = [b.phi(vector) for _ in range(FMA_CHAINS)]
    half = ir.Constant(vector, [0.5] * lanes)
    updated = [b.call(fma, [chain, half, half]) for chain in chains]
    for k, (chain, value) in enumerate(zip(chains, updated)):
        chain.add_incoming(ir.Constant(vector, [float(k)] * lanes), entry)
        chain.add_incoming(value, loop)
    i.add_incoming(ir.Constant(i64, 0), entry)
    i_next = b.add(i, ir.Constant(i64, 1))
    i.add_incoming(i_next, loop)
    b.cbranch(b.icmp_signed("<", i_next, rounds), loop, done)
    b.position_at_end(done)
    total = updated[0]
    for value in updated[1:]:
        total = b.fadd(total, value)
    b.store(total, b.bitcast(out, vector.as_pointer()), align=4)
    b.ret_void()
    return module


def best_seconds(call: Callable[[], None], trials: int) -> float:
    """The best per-call time over `trials` trials of at least 20 ms each, in CPU time of this
    thread (everything timed runs on it): time spent descheduled by other work on a shared
    machine is not counted."""
    call()
    started = time.thread_time()
    call()
    repeats = max(1, int(0.02 / max(time.thread_time() - started, 1e-9)))
    best = float("inf")
    for _ in range(trials):
        started = time.thread_time()
        for _ in range(repeats):
            call()
        best = min(best, (time.thread_time() - started) / repeats)
    return best


def peak_flops(cpu: CpuTarget, trials: int) -> float:
    engine = jit(cpu, fma_loop(cpu))
    run = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(
        engine.get_function_address("fma_peak"))
    sink = np.zeros(cpu.vector_bits // 32, np.float32)
    rounds = 200_000
    seconds = best_seconds(lambda: run(rounds, sink.ctypes.data), trials)
    return rounds * FMA_CHAINS * (cpu.vector_bits // 32) * 2 / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=SHAPES)
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    cpu = resolve_cpu("host")
    module = ir.Module("gemm")
    module.triple = cpu.triple
    kernel = get_gemm(module, cpu, "f32", "f32", "f32")
    kernel.linkage = "external"
    engine = jit(cpu, module)
    gemm = _GEMM(engine.get_function_address(kernel.name))
    peak = peak_flops(cpu, args.trials)
    rows = []
    rng = np.random.default_rng(0)
    for shape in args.shapes.split(","):
        m, k, n = (int(extent) for extent in shape.split("x"))
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        c = np.zeros((m, n), np.float32)
        pointers = (a.ctypes.data, b.ctypes.data, c.ctypes.data)
        gemm(m, n, k, pointers[0], k, pointers[1], n, pointers[2], n)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4 * k)
        flops = 2.0 * m * n * k
        ours = flops / best_seconds(
            lambda: gemm(m, n, k, pointers[0], k, pointers[1], n, pointers[2], n),  # noqa: B023
            args.trials)
        theirs = flops / best_seconds(lambda: np.matmul(a, b, out=c), args.trials)  # noqa: B023
        rows.append((shape, ours, theirs))
    # Measured before and after: the best of both is the figure least disturbed by others.
    peak = max(peak, peak_flops(cpu, args.trials))
    print(f"CPU {cpu.cpu}, {cpu.vector_bits}-bit vectors; one core's peak: "
          f"{peak / 1e9:.1f} GFLOP/s f32\n")
    print("| M x K x N | weir GFLOP/s | of peak | numpy GFLOP/s | of peak |\n|---|---|---|---|---|")
    for shape, ours, theirs in rows:
        print(f"| {shape} | {ours / 1e9:.1f} | {ours / peak:.0%} | {theirs / 1e9:.1f} | "
              f"{theirs / peak:.0%} |")


if __name__ == "__main__":
    main()

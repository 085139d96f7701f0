"""What this machine can do at best, measured here rather than taken from a data sheet, so each
workload's time can be set against the time the hardware needs: memory bandwidth for streaming
workloads, peak f32 FLOP/s for contractions.

Both are small loops written in LLVM IR, compiled for the host CPU with llvmlite (weir's own
code generator) and called through ctypes from one thread per core: ctypes releases the GIL
for the call, so the cores run the native loops in parallel. Each figure is the best of a few
trials.

- Bandwidth: a STREAM triad `a[i] = b[i] + s * c[i]` over arrays far larger than the last-level
  cache, counted as STREAM counts it (three arrays moved per pass; the extra read a store may
  cause is not counted), which is how the workloads' bytes are counted too.
- FLOP/s: twelve independent chains of vector fused multiply-adds, enough to hide the FMA
  latency on every CPU we know of, each FMA counting two FLOPs per lane.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm
import numpy as np

from weir.compiler.targets.llvm_cpu.machine import resolve_cpu

# 128 MiB per array, 384 MiB per triad: far beyond any last-level cache of today.
TRIAD_ELEMENTS = 32 * 1024 * 1024
FMA_CHAINS = 12
_ALIGNMENT = 64
_TRIALS = 10


@dataclass(frozen=True)
class Limits:
    """The measured limits, and what they were measured with."""

    bandwidth: float  # bytes per second, all cores
    peak_flops: float  # f32 FLOP per second, all cores
    threads: int
    cpu: str

    def streaming_seconds(self, nbytes: float) -> float:
        return nbytes / self.bandwidth

    def compute_seconds(self, flops: float) -> float:
        return flops / self.peak_flops


def _vector(lanes: int, value: str) -> str:
    return "<" + ", ".join([f"float {value}"] * lanes) + ">"


def _triad_ir(lanes: int) -> str:
    """`a[i] = b[i] + s * c[i]` for `n` elements, `n` a multiple of `lanes`."""
    vec = f"<{lanes} x float>"
    return f"""
declare {vec} @llvm.fma.v{lanes}f32({vec}, {vec}, {vec})
define void @triad(ptr noalias %a, ptr noalias %b, ptr noalias %c, i64 %n, float %s) {{
entry:
  %s0 = insertelement {vec} poison, float %s, i64 0
  %sv = shufflevector {vec} %s0, {vec} poison, <{lanes} x i32> zeroinitializer
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  %pc = getelementptr inbounds float, ptr %c, i64 %i
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %vb = load {vec}, ptr %pb, align {_ALIGNMENT}
  %vc = load {vec}, ptr %pc, align {_ALIGNMENT}
  %va = call {vec} @llvm.fma.v{lanes}f32({vec} %vc, {vec} %sv, {vec} %vb)
  store {vec} %va, ptr %pa, align {_ALIGNMENT}
  %next = add i64 %i, {lanes}
  %done = icmp uge i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}
"""


def _fma_ir(lanes: int, chains: int) -> str:
    """`iters` rounds of one FMA on each of `chains` independent accumulators; their sum is
    stored to `out` so the work has a visible result."""
    vec = f"<{lanes} x float>"
    half, one = _vector(lanes, "5.000000e-01"), _vector(lanes, "1.000000e+00")
    phis = "\n".join(f"  %acc{k} = phi {vec} [{one}, %entry], [%fma{k}, %loop]"
                     for k in range(chains))
    fmas = "\n".join(f"  %fma{k} = call {vec} @llvm.fma.v{lanes}f32({vec} %acc{k}, {vec} {half}, "
                     f"{vec} {half})" for k in range(chains))
    sums = [f"  %sum1 = fadd {vec} %fma0, %fma1"]
    sums += [f"  %sum{k} = fadd {vec} %sum{k - 1}, %fma{k}" for k in range(2, chains)]
    return f"""
declare {vec} @llvm.fma.v{lanes}f32({vec}, {vec}, {vec})
define void @fma_peak(i64 %iters, ptr %out) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
{phis}
{fmas}
  %next = add i64 %i, 1
  %done = icmp uge i64 %next, %iters
  br i1 %done, label %exit, label %loop
exit:
{chr(10).join(sums)}
  store {vec} %sum{chains - 1}, ptr %out, align 4
  ret void
}}
"""


class _Jit:
    """Host code compiled once and kept loaded for as long as its functions are used."""

    def __init__(self, ir: str) -> None:
        machine = resolve_cpu("host").target_machine()
        module = llvm.parse_assembly(ir)
        module.triple = machine.triple
        module.data_layout = str(machine.target_data)
        module.verify()
        self._engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
        self._engine.add_object_file(llvm.ObjectFileRef.from_data(machine.emit_object(module)))
        self._engine.finalize_object()

    def function(self, name: str, signature: type) -> Callable[..., None]:
        return signature(self._engine.get_function_address(name))  # type: ignore[no-any-return]


def _in_parallel(calls: Sequence[Callable[[], None]]) -> float:
    """Runs each call on its own thread, all released at once; the wall time until all end."""
    start = threading.Barrier(len(calls) + 1)

    def worker(call: Callable[[], None]) -> None:
        start.wait()
        call()

    threads = [threading.Thread(target=worker, args=(c,)) for c in calls]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - began


def _aligned(count: int, fill: float) -> np.ndarray:
    """`count` floats starting on a cache line, written once so no page is first touched while
    being timed."""
    raw = np.full(count + _ALIGNMENT // 4, fill, dtype=np.float32)
    offset = (-raw.ctypes.data % _ALIGNMENT) // 4
    return raw[offset:offset + count]


def measure_bandwidth(threads: int, lanes: int, elements: int = TRIAD_ELEMENTS) -> float:
    """Bytes per second of the triad over all `threads`, best of a few trials."""
    jit = _Jit(_triad_ir(lanes))
    triad = jit.function("triad", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p,
                                                   ctypes.c_void_p, ctypes.c_int64,
                                                   ctypes.c_float))
    a, b, c = (_aligned(elements, v) for v in (0.0, 1.0, 2.0))
    # Each thread streams its own cache-line-aligned slice, a multiple of the vector length.
    share = elements // threads // (_ALIGNMENT // 4) * (_ALIGNMENT // 4)
    calls = [(lambda k=k: triad(a[k * share:].ctypes.data, b[k * share:].ctypes.data,
                                c[k * share:].ctypes.data, share, 3.0)) for k in range(threads)]
    best = min(_in_parallel(calls) for _ in range(_TRIALS))
    return 3 * 4 * share * threads / best


def measure_peak_flops(threads: int, lanes: int, seconds: float = 0.2) -> float:
    """f32 FLOP/s of independent FMA chains on all `threads`, best of a few trials."""
    jit = _Jit(_fma_ir(lanes, FMA_CHAINS))
    fma = jit.function("fma_peak", ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p))
    sink = np.zeros(lanes, np.float32)
    flops_per_round = FMA_CHAINS * lanes * 2
    # Size the loop from a short single-thread run so a trial lasts about `seconds`.
    probe = 1_000_000
    began = time.perf_counter()
    fma(probe, sink.ctypes.data)
    rounds = max(int(probe * seconds / (time.perf_counter() - began)), probe)
    calls = [lambda: fma(rounds, sink.ctypes.data) for _ in range(threads)]
    best = min(_in_parallel(calls) for _ in range(_TRIALS))
    return flops_per_round * rounds * threads / best


def measure_limits() -> Limits:
    """Both limits on every core this process may run on, in the host CPU's widest vectors."""
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
    cpu = resolve_cpu("host")
    lanes = cpu.vector_bits // 32
    return Limits(bandwidth=measure_bandwidth(threads, lanes),
                  peak_flops=measure_peak_flops(threads, lanes), threads=threads, cpu=cpu.cpu)

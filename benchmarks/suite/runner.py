"""Runs every selected workload on every peer and collects one result row each. Nothing here
stops the suite: a program that does not compile, a tool that fails, a wrong result each become
that row's note, and the suite goes on to the next workload."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.suite import peers, torch_peer
from benchmarks.suite.limits import Limits
from benchmarks.suite.peers import Outcome, Timing
from benchmarks.suite.workloads import Bound, Workload

Log = Callable[[str], None]


@dataclass(frozen=True)
class SuiteOptions:
    workloads: tuple[str, ...] | None
    timing: Timing
    target: str
    iree_venv: Path | None
    out: Path
    torch_compile: bool = True  # inductor compiles each workload once: seconds to a minute


@dataclass(frozen=True)
class WorkloadResult:
    """One row of the report; times are seconds per invocation (medians)."""

    name: str
    bound: Bound
    weir: Outcome
    numpy: Outcome
    iree: Outcome | None  # None: no IREE environment was given
    eager: Outcome
    inductor: Outcome | None  # None: not asked for (--no-torch-compile)
    weir_compile: Outcome
    iree_compile: Outcome | None
    limit_s: float | None  # the time the machine's limits allow; None for pure overhead
    mismatch: str | None = None

    def _ratio(self, other: Outcome | None) -> float | None:
        if other is None or other.seconds is None or self.weir.seconds is None:
            return None
        return other.seconds / self.weir.seconds

    @property
    def speedup_vs_iree(self) -> float | None:
        """IREE's time over weir's: above 1, weir is faster."""
        return self._ratio(self.iree)

    @property
    def speedup_vs_numpy(self) -> float | None:
        return self._ratio(self.numpy)

    @property
    def best_peer(self) -> tuple[str, float] | None:
        """The fastest of the others (IREE, numpy, torch eager, inductor) and its time."""
        timed = [(name, o.seconds) for name, o in (("IREE", self.iree), ("numpy", self.numpy),
                                                   ("eager", self.eager),
                                                   ("inductor", self.inductor))
                 if o is not None and o.seconds is not None]
        return min(timed, key=lambda t: t[1]) if timed else None

    @property
    def speedup_vs_best(self) -> float | None:
        """The best peer's time over weir's: at least 1 meets the suite's goal."""
        best = self.best_peer
        return None if best is None else self._ratio(Outcome(seconds=best[1]))

    @property
    def fraction_of_limit(self) -> float | None:
        """The limit's time over weir's: 1 would be the hardware's best."""
        if self.limit_s is None or self.weir.seconds is None:
            return None
        return self.limit_s / self.weir.seconds


def limit_seconds(workload: Workload, limits: Limits) -> float | None:
    if workload.bound is Bound.MEMORY:
        return limits.streaming_seconds(workload.bytes_moved)
    if workload.bound is Bound.COMPUTE:
        return limits.compute_seconds(workload.flops)
    return None


def _weir(workload: Workload, options: SuiteOptions, inputs: Sequence[Path],
          expected: np.ndarray, work: Path) -> tuple[Outcome, Outcome, str | None]:
    """weir's compile time, its time per invocation, and how its result differs from numpy's."""
    module = work / f"{workload.name}.wvm"
    compiled = peers.compile_weir(workload.program, options.target, module)
    if compiled.error is not None:
        return compiled, Outcome(error=compiled.error), None
    output = work / f"{workload.name}_weir_out.npy"
    ran = peers.run_weir_once(module, workload.name, inputs, output)
    if ran.error is not None:
        return compiled, ran, None
    wrong = peers.mismatch(np.load(output), expected)
    output.unlink()
    if workload.bound is Bound.OVERHEAD:
        timed = peers.python_call(Path(sys.executable), "weir", workload.program, workload.name,
                                  inputs, options.timing, target=options.target)
    else:
        timed = peers.benchmark_weir(module, workload.name, inputs, options.timing)
    return compiled, timed, wrong


def _iree(workload: Workload, venv: Path, timing: Timing, inputs: Sequence[Path],
          work: Path) -> tuple[Outcome, Outcome]:
    module = work / f"{workload.name}.vmfb"
    compiled = peers.compile_iree(venv, workload.program, module)
    if compiled.error is not None:
        return compiled, Outcome(error=compiled.error)
    if workload.bound is Bound.OVERHEAD:
        return compiled, peers.python_call(venv / "bin" / "python", "iree", module,
                                           workload.name, inputs, timing)
    return compiled, peers.benchmark_iree(venv, module, workload.name, inputs, timing)


def run_workload(workload: Workload, options: SuiteOptions, limits: Limits) -> WorkloadResult:
    """Both tools read the same random inputs from `.npy` files; they are removed afterwards
    (the largest are 64 MiB each)."""
    work = options.out / "work"
    work.mkdir(parents=True, exist_ok=True)
    arrays = workload.make_inputs()
    inputs = [work / f"{workload.name}_in{i}.npy" for i in range(len(arrays))]
    for path, array in zip(inputs, arrays, strict=True):
        np.save(path, array)
    try:
        expected = workload.numpy(*arrays)
        weir_compile, weir, wrong = _weir(workload, options, inputs, expected, work)
        iree_compile, iree = (None, None) if options.iree_venv is None else \
            _iree(workload, options.iree_venv, options.timing, inputs, work)
        numpy = peers.benchmark_in_process(workload.numpy, arrays, options.timing)
        eager = torch_peer.benchmark_torch(workload.name, arrays, expected, options.timing,
                                           compiled=False)
        inductor = torch_peer.benchmark_torch(workload.name, arrays, expected, options.timing,
                                              compiled=True) if options.torch_compile else None
    finally:
        for path in inputs:
            path.unlink(missing_ok=True)
    return WorkloadResult(workload.name, workload.bound, weir, numpy, iree, eager, inductor,
                          weir_compile, iree_compile, limit_seconds(workload, limits), wrong)


def run_suite(workloads: Sequence[Workload], options: SuiteOptions, limits: Limits,
              log: Log) -> list[WorkloadResult]:
    results = []
    for index, workload in enumerate(workloads, 1):
        log(f"[{index}/{len(workloads)}] {workload.name}")
        results.append(run_workload(workload, options, limits))
    return results

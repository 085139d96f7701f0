"""How Google Benchmark (and so IREE's iree-benchmark-module) decides how long to time something,
so weir's numbers are measured the way IREE's are and the two can be compared.

One repetition runs the function for a number of iterations and reports the time per iteration.
With a minimum time (`--benchmark_min_time=0.5s`), the first repetition starts at one iteration
and grows the count until one run lasts at least that long; later repetitions reuse the count it
settled on, so every repetition measures the same amount of work. With `Nx` the count is fixed.
Wall time is what the report leads with (IREE registers its benchmarks with real time); the
process CPU time, summed over all threads, is reported beside it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from weir.errors import UsageError

DEFAULT_MIN_TIME = "0.5s"
# Google Benchmark's cap on iterations: past it a benchmark is reported however short it ran.
MAX_ITERATIONS = 1_000_000_000
# Each growth step aims this much past the minimum time, so the next run is very likely long
# enough and the count is not grown in many small steps.
_OVERSHOOT = 1.4
# A run shorter than this fraction of the minimum time is too noisy to extrapolate from: the
# count grows tenfold instead.
_SIGNIFICANT_FRACTION = 0.1

_SECONDS = re.compile(r"(?P<value>[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)s?")
_ITERATIONS = re.compile(r"(?P<count>[0-9]+)x")


@dataclass(frozen=True)
class MinTime:
    """`--benchmark_min_time`: run at least `seconds`, or exactly `iterations` times."""

    seconds: float | None = None
    iterations: int | None = None


def parse_min_time(text: str) -> MinTime:
    """`0.5s` or `0.5` (seconds), or `10x` (an iteration count), as Google Benchmark reads them."""
    spec = text.strip()
    counted = _ITERATIONS.fullmatch(spec)
    if counted:
        iterations = int(counted["count"])
        if iterations < 1:
            raise UsageError(f"--benchmark_min_time={text}: the iteration count must be at least 1")
        return MinTime(iterations=min(iterations, MAX_ITERATIONS))
    timed = _SECONDS.fullmatch(spec)
    if timed is None:
        raise UsageError(f"--benchmark_min_time={text}: expected seconds (0.5s or 0.5) or an "
                         f"iteration count (10x)")
    return MinTime(seconds=float(timed["value"]))


@dataclass(frozen=True)
class Measurement:
    """One repetition: `iterations` calls that took `real_seconds` of wall time and
    `cpu_seconds` of process CPU time in all."""

    iterations: int
    real_seconds: float
    cpu_seconds: float

    @property
    def real_per_iteration(self) -> float:
        return self.real_seconds / self.iterations

    @property
    def cpu_per_iteration(self) -> float:
        return self.cpu_seconds / self.iterations


def time_iterations(invoke: Callable[[], object], iterations: int) -> Measurement:
    """Calls `invoke` `iterations` times back to back; `invoke` must return only once its work
    is complete (an asynchronous function waits on its signal fence inside it)."""
    cpu_start = time.process_time()
    real_start = time.perf_counter()
    for _ in range(iterations):
        invoke()
    real = time.perf_counter() - real_start
    return Measurement(iterations, real, time.process_time() - cpu_start)


def next_iteration_count(last: Measurement, min_seconds: float) -> int:
    """The count to try after a run that was too short: enough to pass `min_seconds` with
    some margin if the last run was long enough to extrapolate from, else ten times more."""
    if last.real_seconds / min_seconds > _SIGNIFICANT_FRACTION:
        multiplier = min_seconds * _OVERSHOOT / max(last.real_seconds, 1e-9)
    else:
        multiplier = 10.0
    grown = round(max(multiplier * last.iterations, last.iterations + 1.0))
    return min(grown, MAX_ITERATIONS)


def _first_repetition(invoke: Callable[[], object], min_seconds: float) -> Measurement:
    iterations = 1
    while True:
        measured = time_iterations(invoke, iterations)
        if measured.real_seconds >= min_seconds or iterations >= MAX_ITERATIONS:
            return measured
        iterations = next_iteration_count(measured, min_seconds)


def measure(invoke: Callable[[], object], min_time: MinTime, repetitions: int) -> list[Measurement]:
    """`repetitions` measurements of `invoke`; the first fixes the iteration count of the rest."""
    if repetitions < 1:
        raise UsageError(f"--benchmark_repetitions must be at least 1, got {repetitions}")
    if min_time.iterations is not None:
        first = time_iterations(invoke, min_time.iterations)
    else:
        first = _first_repetition(invoke, min_time.seconds or 0.0)
    return [first] + [time_iterations(invoke, first.iterations) for _ in range(repetitions - 1)]

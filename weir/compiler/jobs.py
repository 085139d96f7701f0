"""Compilation work that may run in other processes: each job is a picklable (function,
arguments) pair whose function lives in a module light enough for a worker to import (no xDSL,
no passes). Results come back in the jobs' order, so the output does not depend on how many
processes ran them or which finished first."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from weir.errors import CompileError

Job = tuple[Callable[..., bytes], tuple[Any, ...]]

# Fewer jobs than this run in this process: starting workers (a fork server, then an import
# of llvmlite in each) costs more than a few small executables take to compile.
PARALLEL_FROM = 4


def available_cpus() -> int:
    return len(os.sched_getaffinity(0))


def run_jobs(jobs: list[Job], workers: int, filename: str, preload: tuple[str, ...] = ()) -> \
        list[bytes]:
    """Each job's result, in order: here when `workers` is 1 or there are few jobs, otherwise
    in up to `workers` processes (0: one per available CPU), forked from a fork server that
    has imported the modules in `preload`. A worker that dies or cannot start is one clear
    error naming `filename`."""
    workers = workers or available_cpus()
    if workers <= 1 or len(jobs) < PARALLEL_FROM:
        return [function(*args) for function, args in jobs]
    # A fork server rather than fork: the compiling process may have threads (a runtime in the
    # same process), which fork would copy in whatever state their locks are.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    try:
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=context) as pool:
            return list(pool.map(_run, jobs))
    except (BrokenProcessPool, OSError) as e:
        # A worker killed (out of memory), or workers that could not be started (the fork
        # server's socket, process limits): the system's doing, not the program's.
        raise CompileError(f"a worker process compiling executables stopped ({e}); "
                           "--weir-hal-executable-jobs=1 compiles them in this process",
                           filename) from None


def _run(job: Job) -> bytes:
    function, args = job
    return function(*args)

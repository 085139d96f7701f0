"""The memory-growth test's worker process: a fresh interpreter that loads one module file on
local-task, calls one function `warmup` times, then up to `first` and `second` invocations in
all, and reports its resident memory (and the runtime's live counts) at each point as one JSON
line. A process of its own, so nothing the test session did before (other tests' modules,
caches, garbage) moves the figures.

    python memory_growth_worker.py MODULE.wvm FUNCTION OWN_FENCES WARMUP FIRST SECOND"""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load_programs import call, expected, inputs  # noqa: E402

from weir.runtime.api import Context, Instance, load_module_file, runtime_statistics  # noqa: E402

_PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_bytes() -> int:
    """Resident set size now (/proc/self/statm, second field, in pages): unlike the peak that
    `resource.getrusage` reports, it also goes down when memory is given back."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE


def point(ctx: Context, invocations: int) -> dict[str, Any]:
    gc.collect()
    return {"invocations": invocations, "rss": resident_bytes(),
            "device": {k: v for k, v in ctx.devices[0].statistics.snapshot().items()
                       if k in ("queue_pending", "buffers_alive", "buffer_bytes_alive",
                                "pooled_bytes", "threads_alive")},
            "runtime": dict(runtime_statistics())}


def main(argv: list[str]) -> None:
    path, function, own_fences, *counts = argv
    warmup, first, second = map(int, counts)
    instance = Instance()
    ctx = Context(instance, devices=[instance.create_device("local-task")],
                  modules=[load_module_file(path)], owns_devices=True)
    fn = ctx.lookup_function(function)
    points = []
    done = 0
    for target in (warmup, first, second):
        while done < target:
            args = inputs(function, done)
            result = call(fn, args, own_fences == "1")
            if not np.array_equal(result, expected(function, args)):
                raise SystemExit(f"{function}: wrong result at invocation {done}")
            done += 1
        if target != warmup:
            points.append(point(ctx, done))
    stats = ctx.devices[0].statistics
    ctx.close()
    del ctx, fn
    gc.collect()
    closed = {"threads": stats.threads.alive, "runtime": dict(runtime_statistics())}
    print(json.dumps({"points": points, "closed": closed}))


if __name__ == "__main__":
    main(sys.argv[1:])

"""Times one call of a function through a runtime's Python API, numpy in and numpy out, on the
local-sync device: what a Python program pays per call. Also says what the call costs in memory:
the bytes the runtime's allocator hands out per call (after a warm-up call) and the most it held
at once, where the runtime keeps such statistics, and the peak RSS of this process, which ran
nothing else.

Run as its own process by the interpreter of the runtime's virtual environment, from the
repository root (`python -m benchmarks.suite.python_call --runtime=iree ...`), so IREE is
imported only by IREE's interpreter. Both runtimes are timed by weir's Google Benchmark loop
(weir/tools/io/benchmark_timing.py: plain Python, importable from either environment), so the
two measurements differ only in the runtime. Prints `{"median_s": ..., "seconds": [...],
"memory": {"bytes_per_call": ..., "peak_bytes": ..., "peak_rss_bytes": ...}}` (None where not
known).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from weir.tools.io.benchmark_timing import measure, parse_min_time

DEVICE = "local-sync"


@dataclass
class Loaded:
    """A runtime's function ready to call, and its allocator's running counts: `allocations()`
    gives (bytes allocated so far, most bytes live at once) or None where the runtime keeps no
    such statistics; `stop_metering()` ends any counting that would slow the timed calls."""

    call: Callable[..., Any]
    allocations: Callable[[], tuple[int, int] | None] = lambda: None
    stop_metering: Callable[[], None] = lambda: None


def weir_call(source: Path, target: str, function: str, device: str = DEVICE) -> Loaded:
    """weir's API end to end: compile the MLIR (a `.wvm` is loaded as compiled), load it, look
    the function up. Allocations are metered from before the load (benchmarks/suite/
    weir_meter.py: the device's counter keeps no totals of its own)."""
    import weir.api as weir
    from benchmarks.suite.weir_meter import AllocationMeter, metering

    if source.suffix == ".wvm":
        module = source.read_bytes()
    else:
        options = weir.CompilerOptions(target_backends=(target,))
        module = weir.compile_string(source.read_text(), source.name, options)
    meter = AllocationMeter()
    metered = ExitStack()
    metered.enter_context(metering(meter))
    context = weir.load([module], device=device)
    counter = context.devices[0].statistics.buffers

    def allocations() -> tuple[int, int]:
        counts = meter.of(counter)
        return counts.allocated_bytes, counts.peak_bytes
    return Loaded(context.lookup_function(function), allocations, metered.close)


def iree_call(module: Path, function: str, device: str = DEVICE) -> Loaded:
    """IREE's API: load the compiled module; results are copied back to numpy as weir's are.
    Its allocator's statistics sum the host and device heaps (a CPU device may use either)."""
    import iree.runtime as iree  # type: ignore[import-not-found]

    config = iree.Config(device)
    context = iree.SystemContext(config=config)
    context.add_vm_module(iree.VmModule.mmap(config.vm_instance, str(module)))
    call = context.modules.module[function]
    allocator = config.device.allocator

    def to_host(*args: Any) -> Any:
        results = call(*args)  # one device array, or a tuple of them for several results
        if isinstance(results, tuple | list):
            return tuple(r.to_host() for r in results)
        return results.to_host()

    def allocations() -> tuple[int, int]:
        stats = allocator.statistics
        return (stats["host_bytes_allocated"] + stats["device_bytes_allocated"],
                stats["host_bytes_peak"] + stats["device_bytes_peak"])
    return Loaded(to_host, allocations)


def onnxruntime_call(model: Path, threads: int) -> Loaded:
    """onnxruntime's CPU provider on an ONNX file, `threads` intra-op threads, operators run in
    order; inputs are fed to the graph's inputs in order. Its arena keeps no statistics that
    its Python API reads, so only the process's peak RSS says what it used."""
    import onnxruntime as ort  # type: ignore[import-not-found]

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return Loaded(lambda *args: session.run(None, dict(zip(names, args, strict=True))))


def torch_call(program: Path) -> Loaded:
    """torch eager on a program saved by `torch.export.save`: its module run op by op, under
    no_grad, numpy in and out. RSS alone says what it used (its caching allocator is not read)."""
    import torch

    module = torch.export.load(str(program)).module()

    def call(*args: Any) -> Any:
        with torch.no_grad():
            results = module(*(torch.from_numpy(a) for a in args))
        return [r.numpy() for r in torch.utils._pytree.tree_leaves(results)]
    return Loaded(call)


def _load(args: argparse.Namespace) -> Loaded:
    if args.runtime == "weir":
        return weir_call(args.module, args.target, args.function, args.device)
    if args.runtime == "iree":
        return iree_call(args.module, args.function, args.device)
    if args.runtime == "torch":
        return torch_call(args.module)
    return onnxruntime_call(args.module, args.threads)


def peak_rss_bytes() -> int:
    """This process's peak RSS since it started its program. Linux keeps `ru_maxrss` across
    exec, so a child of a large parent reports at least the parent's RSS at the fork; the
    high-water mark of the process's own memory map (VmHWM) starts afresh at exec."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # in kB
    except OSError:
        pass  # no /proc: getrusage below, which may include the parent's share
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", choices=("weir", "iree", "onnxruntime", "torch"),
                        required=True)
    parser.add_argument("--module", type=Path, required=True,
                        help="MLIR source or .wvm for weir, .vmfb for IREE, .onnx for "
                             "onnxruntime, a torch.export .pt2 for torch (eager)")
    parser.add_argument("--function", default="main",
                        help="ignored by onnxruntime and torch")
    parser.add_argument("--target", default="llvm-cpu", help="weir's target backend")
    parser.add_argument("--device", default=DEVICE, help="local-sync or local-task")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime's intra-op threads")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--min-time", default="0.3s")
    parser.add_argument("inputs", nargs="*", type=Path, help=".npy files, one per argument")
    args = parser.parse_args(argv)
    try:
        arrays = [np.load(p) for p in args.inputs]
        loaded = _load(args)
        loaded.call(*arrays)  # warm-up: what one call allocates is measured after it
        before = loaded.allocations()
        loaded.call(*arrays)
        after = loaded.allocations()
        loaded.stop_metering()
        measured = measure(lambda: loaded.call(*arrays), parse_min_time(args.min_time),
                           args.repetitions)
        final = loaded.allocations()  # IREE's peak over the timed calls too
    except Exception as error:  # noqa: BLE001 - the suite reads one line, whatever failed
        print(f"python_call: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    seconds = [m.real_per_iteration for m in measured]
    memory: dict[str, int | None] = {
        "bytes_per_call": None if before is None or after is None else after[0] - before[0],
        # The most live at once over the process: the load's constants and every call's buffers.
        "peak_bytes": None if final is None else final[1],
        "peak_rss_bytes": peak_rss_bytes()}
    json.dump({"median_s": float(np.median(seconds)), "seconds": seconds, "memory": memory},
              sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())

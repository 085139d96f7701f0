"""Times one call of a function through a runtime's Python API, numpy in and numpy out, on the
local-sync device: what a Python program pays per call.

Run as its own process by the interpreter of the runtime's virtual environment, from the
repository root (`python -m benchmarks.suite.python_call --runtime=iree ...`), so IREE is
imported only by IREE's interpreter. Both runtimes are timed by weir's Google Benchmark loop
(weir/tools/io/benchmark_timing.py: plain Python, importable from either environment), so the
two measurements differ only in the runtime. Prints `{"median_s": ..., "seconds": [...]}`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from weir.tools.io.benchmark_timing import measure, parse_min_time

DEVICE = "local-sync"


def weir_call(source: Path, target: str, function: str,
              device: str = DEVICE) -> Callable[..., Any]:
    """weir's API end to end: compile the MLIR, load it, look the function up."""
    import weir.api as weir

    options = weir.CompilerOptions(target_backends=(target,))
    module = weir.compile_string(source.read_text(), source.name, options)
    return weir.load([module], device=device).lookup_function(function)  # type: ignore[no-any-return]


def iree_call(module: Path, function: str, device: str = DEVICE) -> Callable[..., Any]:
    """IREE's API: load the compiled module; results are copied back to numpy as weir's are."""
    import iree.runtime as iree  # type: ignore[import-not-found]

    config = iree.Config(device)
    context = iree.SystemContext(config=config)
    context.add_vm_module(iree.VmModule.mmap(config.vm_instance, str(module)))
    call = context.modules.module[function]

    def to_host(*args: Any) -> Any:
        results = call(*args)  # one device array, or a tuple of them for several results
        if isinstance(results, tuple | list):
            return tuple(r.to_host() for r in results)
        return results.to_host()
    return to_host


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", choices=("weir", "iree"), required=True)
    parser.add_argument("--module", type=Path, required=True,
                        help="MLIR source for weir (its API compiles it), .vmfb for IREE")
    parser.add_argument("--function", required=True)
    parser.add_argument("--target", default="llvm-cpu", help="weir's target backend")
    parser.add_argument("--device", default=DEVICE, help="local-sync or local-task")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--min-time", default="0.3s")
    parser.add_argument("inputs", nargs="*", type=Path, help=".npy files, one per argument")
    args = parser.parse_args(argv)
    try:
        arrays = [np.load(p) for p in args.inputs]
        call = weir_call(args.module, args.target, args.function, args.device) \
            if args.runtime == "weir" else iree_call(args.module, args.function, args.device)
        measured = measure(lambda: call(*arrays), parse_min_time(args.min_time), args.repetitions)
    except Exception as error:  # noqa: BLE001 - the suite reads one line, whatever failed
        print(f"python_call: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    seconds = [m.real_per_iteration for m in measured]
    json.dump({"median_s": float(np.median(seconds)), "seconds": seconds}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())

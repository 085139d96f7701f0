"""Host cost per dispatch: one function of N small dependent dispatches (a chain of 4x4 matmuls,
each its own dispatch), N = 1 ... 1024, called through each runtime's Python API with numpy in
and numpy out. The kernels take well under a microsecond, so the slope of time against N is
what the runtime adds per dispatch, and the intercept what it adds per call.

    .venv/bin/python -m benchmarks.dispatch_overhead [--iree-venv .venv-iree] [--max 1024]

weir is timed on local-sync and local-task (llvm-cpu); IREE 3.13, when its virtual
environment is given (`make iree-venv`), on the same devices and the same MLIR. Each point is
the median of Google Benchmark-style repetitions (benchmarks/suite/python_call.py, one process
per point); the slope is a least-squares fit over all N. Prints a markdown table and writes
benchmarks/results/dispatch_overhead.json."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.suite import peers

RESULTS = Path(__file__).resolve().parent / "results"
DEVICES = ("local-sync", "local-task")


def chain_program(n: int) -> str:
    """`n` dependent 4x4 matmuls: none fuses with the next, so each is one dispatch."""
    lines = ["func.func @chain(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {",
             "  %z = arith.constant 0.0 : f32",
             "  %e = tensor.empty() : tensor<4x4xf32>",
             "  %acc = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>"]
    previous = "%x"
    for i in range(n):
        lines.append(f"  %m{i} = linalg.matmul ins({previous}, %w : tensor<4x4xf32>, "
                     "tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>")
        previous = f"%m{i}"
    lines += [f"  return {previous} : tensor<4x4xf32>", "}"]
    return "\n".join(lines) + "\n"


def fit(points: dict[int, float]) -> tuple[float, float]:
    """Least-squares (slope, intercept) of seconds against N."""
    ns = np.array(sorted(points), dtype=np.float64)
    ts = np.array([points[int(n)] for n in ns])
    slope, intercept = np.polyfit(ns, ts, 1)
    return float(slope), float(intercept)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iree-venv", type=Path, help="IREE's virtual environment")
    parser.add_argument("--max", type=int, default=1024, help="the largest N")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--min-time", default="0.2s")
    args = parser.parse_args()
    sizes = [n for n in (1, 4, 16, 64, 256, 1024) if n <= args.max]
    timing = peers.Timing(args.repetitions, args.min_time)
    series: dict[str, dict[int, float]] = {}
    errors: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rng = np.random.default_rng(0)
        inputs = []
        for name in ("x", "w"):
            path = work / f"{name}.npy"
            np.save(path, (rng.standard_normal((4, 4)) / 4).astype(np.float32))
            inputs.append(path)
        for n in sizes:
            source = work / f"chain_{n}.mlir"
            source.write_text(chain_program(n))
            runs = [(f"weir {d}", Path(sys.executable), "weir", source, d) for d in DEVICES]
            if args.iree_venv is not None:
                vmfb = work / f"chain_{n}.vmfb"
                compiled = peers.compile_iree(args.iree_venv, source, vmfb)
                for d in DEVICES:
                    if compiled.error is not None:
                        errors[f"IREE {d}"] = compiled.error
                    else:
                        runs.append((f"IREE {d}", args.iree_venv / "bin" / "python", "iree",
                                     vmfb, d))
            for label, python, runtime, module, device in runs:
                outcome = peers.python_call(python, runtime, module, "chain", inputs, timing,
                                            target="llvm-cpu", device=device)
                if outcome.seconds is None:
                    errors[label] = outcome.error or "failed"
                else:
                    series.setdefault(label, {})[n] = outcome.seconds
                print(f"{label:16s} N={n:5d}: {outcome.seconds or float('nan'):.6f} s",
                      file=sys.stderr)
    print("| runtime | " + " | ".join(f"N={n} (µs)" for n in sizes)
          + " | µs per dispatch (slope) | µs per call (intercept) |")
    print("|---|" + "---|" * (len(sizes) + 2))
    report: dict[str, object] = {"sizes": sizes, "series": {}, "errors": errors}
    for label, points in series.items():
        slope, intercept = fit(points) if len(points) > 1 else (float("nan"), float("nan"))
        cells = " | ".join(f"{points[n] * 1e6:.1f}" if n in points else "-" for n in sizes)
        print(f"| {label} | {cells} | {slope * 1e6:.2f} | {intercept * 1e6:.1f} |")
        report["series"][label] = {"seconds": points, "slope_s": slope,  # type: ignore[index]
                                   "intercept_s": intercept}
    for label, error in errors.items():
        print(f"| {label} | {error} |")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dispatch_overhead.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

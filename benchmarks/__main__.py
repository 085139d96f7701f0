"""`python -m benchmarks` (`make bench`): weir against numpy, torch eager and torch.compile
(inductor), and against IREE when an IREE virtual environment is given, on the workloads in benchmarks/programs/, with the machine's own
memory-bandwidth and FLOP/s limits; prints a markdown table and writes results.md and
results.json under --out.

    .venv/bin/python -m benchmarks --iree-venv .venv-iree --workloads tiny,matmul_512
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.suite import report
from benchmarks.suite.limits import measure_limits
from benchmarks.suite.peers import Timing, iree_version
from benchmarks.suite.runner import SuiteOptions, run_suite
from benchmarks.suite.workloads import BY_NAME, select
from weir.errors import UsageError
from weir.tools.cli import run_tool
from weir.tools.io.benchmark_timing import parse_min_time
from weir.tools.io.machine_context import machine_context

TOOL = "benchmarks"
DEFAULT_OUT = Path(__file__).resolve().parent / "results"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", help=f"comma-separated subset of: {', '.join(BY_NAME)}")
    parser.add_argument("--repetitions", type=int, default=3,
                        help="repetitions per measurement; the median is reported (default 3)")
    parser.add_argument("--min-time", default="0.3s",
                        help="each repetition's least duration (0.3s) or iteration count (10x)")
    parser.add_argument("--iree-venv", type=Path,
                        help="a virtual environment with iree-base-compiler and "
                             "iree-base-runtime (make iree-venv creates .venv-iree)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where results.md and results.json go (default benchmarks/results)")
    parser.add_argument("--target", default="llvm-cpu",
                        help="weir's target backend (default llvm-cpu; reference also works)")
    parser.add_argument("--torch-compile", action=argparse.BooleanOptionalAction, default=True,
                        help="time torch.compile (inductor) too; it compiles each workload "
                             "once, seconds to a minute (default on)")
    return parser


def options_from_args(args: argparse.Namespace) -> SuiteOptions:
    """Checks everything that can be checked before an hour of measuring."""
    if args.repetitions < 1:
        raise UsageError(f"--repetitions must be at least 1, got {args.repetitions}")
    parse_min_time(args.min_time)
    venv = args.iree_venv
    if venv is not None and not (venv / "bin" / "iree-benchmark-module").exists():
        raise UsageError(f"--iree-venv {venv}: no bin/iree-benchmark-module there (make "
                         f"iree-venv creates one at .venv-iree)")
    names = tuple(n.strip() for n in args.workloads.split(",") if n.strip()) \
        if args.workloads else None
    try:
        select(names)
    except ValueError as error:
        raise UsageError(f"--workloads: {error}") from None
    return SuiteOptions(names, Timing(args.repetitions, args.min_time), args.target,
                        venv.resolve() if venv else None, args.out, args.torch_compile)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(options: SuiteOptions) -> int:
    _log("measuring this machine's memory bandwidth and peak FLOP/s ...")
    limits = measure_limits()
    version = iree_version(options.iree_venv) if options.iree_venv else None
    rows = run_suite(select(options.workloads), options, limits, _log)
    table = report.markdown(rows, options, limits, version)
    document = report.to_json(rows, options, limits, version,
                              machine_context("python -m benchmarks"))
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "results.md").write_text(table)
    (options.out / "results.json").write_text(json.dumps(document, indent=2) + "\n")
    sys.stdout.write(table)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return run_tool(TOOL, lambda: run(options_from_args(args)))


if __name__ == "__main__":
    sys.exit(main())

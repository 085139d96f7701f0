"""`python -m conformance` (`make conformance`): IREE's end-to-end check programs
(../shared/iree-e2e) compiled by weir-compile and run by weir-check-module, every file on
llvm-cpu/local-task and vmvx/local-sync, with the flags IREE's BUILD files give where weir takes
them. Prints per folder and target `N passed, M failed` and each failure with its reason; writes
results.md and results.json under --out.

    .venv/bin/python -m conformance --folders linalg,tensor_ops --targets llvm-cpu

The exit code is 0 whatever the table says (it is informational), unless --require-list names a
file that failed: that is a regression.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from conformance import report
from conformance.execute import Limits, Result, default_jobs, run_all
from conformance.must_pass import (
    DEFAULT_LIST,
    DEFAULT_SUITE,
    Entry,
    ListError,
    check_required,
    read_list,
    write_list,
)
from conformance.plan import TARGET_BY_NAME, TARGETS, plan
from weir.errors import UsageError
from weir.tools.cli import run_tool

TOOL = "conformance"
DEFAULT_OUT = Path(__file__).resolve().parent / "results"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m conformance",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, default=DEFAULT_SUITE,
                        help=f"the e2e suite folder (default {DEFAULT_SUITE})")
    parser.add_argument("--folders", help="comma-separated folders of the suite to run, e.g. "
                                          "linalg,regression/stablehlo (default: all)")
    parser.add_argument("--targets", default=",".join(TARGET_BY_NAME),
                        help=f"comma-separated targets (default {','.join(TARGET_BY_NAME)})")
    parser.add_argument("--jobs", type=int, default=default_jobs(),
                        help="files compiled and run at once (default: the cores)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds each compile and each run may take (default 300)")
    parser.add_argument("--memory-limit-gib", type=float, default=8.0,
                        help="address space of each compile and run, GiB; 0: none (default 8)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where results.md and results.json go (default conformance/results)")
    parser.add_argument("--markdown", action="store_true",
                        help="print the summary table in markdown (the README's table)")
    parser.add_argument("--require-list", type=Path, nargs="?", const=DEFAULT_LIST,
                        help="fail (exit 1) if a file of this list fails (default list: "
                             "conformance/passing.txt)")
    parser.add_argument("--add-passing", type=Path, nargs="?", const=DEFAULT_LIST,
                        help="add every file that passed to this list (never removes one)")
    return parser


def _names(value: str | None, known: Sequence[str], flag: str) -> tuple[str, ...] | None:
    """A comma-separated flag value, each name one of `known` (None: the flag was not given)."""
    if value is None:
        return None
    names = tuple(n.strip().strip("/") for n in value.split(",") if n.strip())
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise UsageError(f"{flag}: unknown {', '.join(unknown) or '(empty)'}; known: "
                         f"{', '.join(known)}")
    return names


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(args: argparse.Namespace, command: str) -> int:
    """Checks every flag and list first, then runs, reports, and judges the must-pass list."""
    suite: Path = args.suite.resolve()
    if not suite.is_dir():
        raise UsageError(f"the suite folder {suite} does not exist (--suite)")
    folders_known = sorted({p.parent.relative_to(suite).as_posix()
                            for p in suite.rglob("*.mlir")})
    folders = _names(args.folders, folders_known, "--folders")
    targets = tuple(TARGET_BY_NAME[n] for n in _names(args.targets, list(TARGET_BY_NAME),
                                                      "--targets") or ())
    if args.jobs < 1 or args.timeout <= 0 or args.memory_limit_gib < 0:
        raise UsageError("--jobs and --timeout must be positive, --memory-limit-gib not negative")
    required = _read(args.require_list, "--require-list") if args.require_list else None
    listed = _read(args.add_passing, "--add-passing") \
        if args.add_passing and args.add_passing.exists() else []
    jobs = plan(suite, tuple(t for t in TARGETS if t in targets), folders)
    limits = Limits(args.timeout, int(args.memory_limit_gib * (1 << 30)))
    done = 0

    def progress(result: Result) -> None:
        nonlocal done
        done += 1
        _log(f"[{done}/{len(jobs)}] {result.outcome.status:13} {result.job.target.label:19} "
             f"{result.job.name} ({result.seconds:.1f} s)")

    with tempfile.TemporaryDirectory(prefix="weir-conformance-") as work:
        results = run_all(jobs, limits, Path(work), args.jobs, progress)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.md").write_text(report.markdown_report(results, command))
    (args.out / "results.json").write_text(
        json.dumps(report.to_json(results, command), indent=2) + "\n")
    if args.markdown:
        sys.stdout.write(report.markdown_table(results))
    else:
        sys.stdout.write(report.text_report(results))
        sys.stdout.write("\nmost common failure reasons (runs, files):\n")
        sys.stdout.write("".join(f"  {runs:4} {files:4}  {reason}\n"
                                 for reason, runs, files in report.top_reasons(results)))
    _log(f"report: {args.out / 'results.md'}")
    if args.add_passing is not None:
        new = [(r.job.name, r.job.target.backend) for r in results if r.outcome.passed]
        write_list(args.add_passing, listed + new)
        _log(f"{args.add_passing}: {len(set(listed + new)) - len(set(listed))} entries added")
    if required is None:
        return 0
    return check_required(results, required, suite, folders, {t.backend for t in targets}, _log)


def _read(path: Path, flag: str) -> list[Entry]:
    """A list read before the run, so that a bad line is reported before minutes of work."""
    try:
        return read_list(path)
    except (ListError, OSError) as error:
        raise UsageError(f"{flag}: {error}") from None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser().parse_args(argv)
    return run_tool(TOOL, lambda: run(args, "python -m conformance " + shlex.join(argv)))


if __name__ == "__main__":
    sys.exit(main())

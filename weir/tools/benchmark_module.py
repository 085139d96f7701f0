"""`weir-benchmark-module`: times a function of a compiled module the way IREE's
iree-benchmark-module does, with the same module, device and input flags as weir-run-module and
Google Benchmark's flags and reports:

    weir-benchmark-module --module=prog.wvm --function=f --input=4xf32=1,2,3,4 --device=local-task
    --------------------------------------------------------------------------------------
    Benchmark                            Time             CPU   Iterations UserCounters...
    --------------------------------------------------------------------------------------
    BM_f/process_time/real_time      0.020 ms        0.023 ms         1155 items_per_second=48.9414k/s

Inputs are parsed and copied into device buffers once; each timed invocation then runs the
function on them and returns only when its results are ready (an async-external function is
given fences and its signal fence is waited on), so the time is what a caller waits for.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from weir.errors import InputError, UsageError
from weir.tools.cli import run_tool
from weir.tools.io.benchmark_report import (
    DEFAULT_TIME_UNIT,
    TIME_UNITS,
    Row,
    console_header,
    console_row,
    console_table,
    family_rows,
    json_document,
    name_width,
)
from weir.tools.io.benchmark_timing import DEFAULT_MIN_TIME, MinTime, measure, parse_min_time
from weir.tools.io.flags import Flag, FlagParser, ParsedFlags
from weir.tools.io.machine_context import console_context, machine_context
from weir.tools.io.npy import host_order
from weir.tools.io.parse_input import parse_inputs
from weir.tools.io.values import ParsedInput, resolve_argument
from weir.tools.io.session import (
    DEFAULT_DEVICE,
    module_specs,
    open_context,
    parse_command_line,
    runtime_api,
)
from weir.tools.run_module import Target, find_function
from weir.tools.run_module import PARSER as RUN_MODULE_PARSER

TOOL = "weir-benchmark-module"
FORMATS = ("console", "json")

# The flags that say what to run are weir-run-module's own, so both tools read them alike.
_RUN_FLAGS = {flag.name: flag for flag in RUN_MODULE_PARSER.flags}

PARSER = FlagParser(TOOL, "--module=FILE [--function=NAME] [--input=VALUE ...] [flags]", [
    _RUN_FLAGS["device"],
    _RUN_FLAGS["module"],
    Flag("function", "string", "The function of the last module to benchmark; omitted, every "
         "exported function that takes no arguments is benchmarked.", metavar="NAME"),
    _RUN_FLAGS["input"],
    Flag("benchmark_repetitions", "int", "Times to repeat the measurement; more than one adds "
         "mean, median, stddev and cv rows.", default=1, metavar="N"),
    Flag("benchmark_min_time", "string", "How long each repetition runs at least (0.5s, 0.5), "
         "or an exact iteration count (10x).", default=DEFAULT_MIN_TIME, metavar="TIME"),
    Flag("benchmark_format", "string", "What to print: console or json.", default="console",
         metavar="FORMAT"),
    Flag("benchmark_out", "string", "Also write the report to FILE.", metavar="FILE"),
    Flag("benchmark_out_format", "string", "The format of --benchmark_out: json or console.",
         default="json", metavar="FORMAT"),
    Flag("benchmark_time_unit", "string", "The unit of reported times: ns, us, ms or s.",
         default=DEFAULT_TIME_UNIT, metavar="UNIT"),
], description="Benchmarks functions of a compiled weir module, as IREE's "
               "iree-benchmark-module does.")


@dataclass(frozen=True)
class BenchmarkRequest:
    """Everything the flags asked for, checked before any module is loaded."""

    devices: tuple[str, ...]
    modules: tuple[str, ...]
    function: str | None
    inputs: tuple[ParsedInput, ...]
    min_time: MinTime
    repetitions: int
    format: str
    out: Path | None
    out_format: str
    time_unit: str


def _choice(flags: ParsedFlags, flag: str, choices: Sequence[str]) -> str:
    value = flags.string(flag) or ""
    if value not in choices:
        raise UsageError(f"--{flag}: '{value}' is not one of {', '.join(choices)}")
    return value


def request_from_flags(flags: ParsedFlags) -> BenchmarkRequest:
    modules = module_specs(flags)
    function = flags.string("function")
    inputs = tuple(parse_inputs(flags.strings("input"), flag="--input"))
    if function is None and inputs:
        raise UsageError("--input needs --function: without it every function that takes no "
                         "arguments is benchmarked")
    repetitions = flags.integer("benchmark_repetitions")
    if repetitions < 1:
        raise UsageError(f"--benchmark_repetitions must be at least 1, got {repetitions}")
    out = flags.string("benchmark_out")
    return BenchmarkRequest(
        devices=tuple(flags.strings("device")) or (DEFAULT_DEVICE,),
        modules=modules,
        function=function,
        inputs=inputs,
        min_time=parse_min_time(flags.string("benchmark_min_time") or DEFAULT_MIN_TIME),
        repetitions=repetitions,
        format=_choice(flags, "benchmark_format", FORMATS),
        out=Path(out) if out else None,
        out_format=_choice(flags, "benchmark_out_format", FORMATS),
        time_unit=_choice(flags, "benchmark_time_unit", tuple(TIME_UNITS)),
    )


@dataclass(frozen=True)
class Benchmark:
    """One function, ready to time: `invoke` runs it once on the prepared inputs."""

    run_name: str
    invoke: Callable[[], object]


def _argument_views(api: ModuleType, context: Any, target: Target,
                    inputs: Sequence[ParsedInput]) -> list[object]:
    """The inputs as the VM takes them, made once: tensors become device buffer views."""
    function = target.function
    user_args = function.signature.args[:function.num_user_args]
    if len(inputs) != len(user_args):
        raise InputError(f"function '{target.name}' takes {len(user_args)} argument(s), got "
                         f"{len(inputs)} --input value(s)")
    allocator = context.devices[0].allocator
    values = [resolve_argument(value, user_args[i], index=i) for i, value in enumerate(inputs)]
    return [api.BufferView.from_numpy(host_order(v), allocator) if isinstance(v, np.ndarray)
            else v for v in values]


def _benchmark(api: ModuleType, context: Any, target: Target,
               inputs: Sequence[ParsedInput]) -> Benchmark:
    views = _argument_views(api, context, target, inputs)
    # IREE's name: the time is wall time ("real_time"), reported beside process CPU time.
    return Benchmark(f"BM_{target.name}/process_time/real_time",
                     functools.partial(target.function.invoke_views, views))


def prepare(request: BenchmarkRequest, api: ModuleType) -> list[Benchmark]:
    """Loads the modules and readies the benchmarks: `--function`, or else every export of the
    last module that takes no arguments (what IREE's tool benchmarks without inputs)."""
    context, modules = open_context(api, request.devices, request.modules)
    if request.function is not None:
        target = find_function(context, modules, request.function)
        return [_benchmark(api, context, target, request.inputs)]
    module = modules[-1]
    targets = [Target(name, context.lookup(f"{module.name}.{name}")) for name in module.exports]
    runnable = [t for t in targets if t.function.num_user_args == 0]
    if not runnable:
        needing = ", ".join(f"{t.name} ({t.function.num_user_args})" for t in targets)
        raise UsageError(f"--function is required: every function of module '{module.name}' "
                         f"takes arguments ({needing or 'it exports none'})")
    return [_benchmark(api, context, t, ()) for t in runnable]


def run(request: BenchmarkRequest, api: ModuleType | None = None) -> int:
    """Prepares, times and reports every benchmark; returns the exit code."""
    benchmarks = prepare(request, api if api is not None else runtime_api())
    context = machine_context(sys.argv[0])
    console = request.format == "console"
    width = name_width([b.run_name for b in benchmarks], request.repetitions)
    rows: list[Row] = []
    for index, benchmark in enumerate(benchmarks):
        measured = measure(benchmark.invoke, request.min_time, request.repetitions)
        family = family_rows(benchmark.run_name, index, measured)
        if console and not rows:
            # Only once something ran, so a bad input is reported alone, on one line.
            sys.stderr.write(console_context(context))
            sys.stdout.write(console_header(width))
        rows.extend(family)
        if console:
            sys.stdout.write("".join(console_row(r, width, request.time_unit) for r in family))
            sys.stdout.flush()
    if not console:
        sys.stdout.write(json_document(context, rows, request.time_unit))
    if request.out is not None:
        report = json_document(context, rows, request.time_unit) \
            if request.out_format == "json" else console_table(rows, request.time_unit)
        request.out.write_text(report)
    return 0


def _body(argv: Sequence[str], api: ModuleType | None) -> int:
    flags = parse_command_line(PARSER, argv)
    if flags is None:
        return 0
    return run(request_from_flags(flags), api)


def main(argv: Sequence[str] | None = None, api: ModuleType | None = None) -> int:
    """Console entry point (`weir-benchmark-module`); returns the exit code. `api` replaces
    `weir.runtime.api` (tests)."""
    return run_tool(TOOL, lambda: _body(sys.argv[1:] if argv is None else argv, api))


if __name__ == "__main__":
    sys.exit(main())

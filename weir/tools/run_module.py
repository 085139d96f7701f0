"""`weir-run-module`: loads module files into a context, calls one function with inputs given on
the command line and prints, saves or checks its results, with IREE's flags and output:

    weir-run-module --module=a.wvm --function=run --input=4xf32=1,2,3,4
    EXEC @run
    result[0]: hal.buffer_view
    4xf32=2 4 6 8

Built only on the public runtime API (`weir.runtime.api`), so it is also the reference for how
a host program drives weir.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from weir.errors import LoadError, UsageError
from weir.tools.cli import run_tool
from weir.tools.io.compare import SUCCESS_LINE, Tolerances, compare_results
from weir.tools.io.flags import Flag, FlagParser, ParsedFlags
from weir.tools.io.format_output import DEFAULT_MAX_ELEMENT_COUNT, format_results
from weir.tools.io.outputs import check_output_specs, write_results
from weir.tools.io.parse_input import parse_inputs
from weir.tools.io.values import ParsedInput, resolve_argument
from weir.tools.io.results import expected_values, typed_results
from weir.tools.io.session import (
    DEFAULT_DEVICE,
    module_specs,
    open_context,
    parse_command_line,
    runtime_api,
)

TOOL = "weir-run-module"

DEVICE_FLAG = Flag("device", "string", f"A device to create, bound to the module's devices in "
                   f"order (default: {DEFAULT_DEVICE}).", repeated=True, metavar="NAME")

PARSER = FlagParser(TOOL, "--module=FILE [--function=NAME] [--input=VALUE ...] [flags]", [
    DEVICE_FLAG,
    Flag("module", "string", "A module file to load, in dependency order; '-' reads stdin; "
         "'python:file.py:ClassName' loads a module written in Python.",
         repeated=True, metavar="FILE"),
    Flag("function", "string", "The function of the last module to run; may be omitted when it "
         "exports only one.", metavar="NAME"),
    Flag("input", "string", "An argument: 4xf32=1,2,3,4 / 2x2xi32=[1 2][3 4] / 4096xf32=-2.0 "
         "(splat) / 2x3xf32 (zeros) / f32=2.5 / 5 / @file.npy / +file.npy (next array) / "
         "*file.npy (all remaining) / 4xf32=@file.bin / (null).", repeated=True),
    Flag("output", "string", "Where each result goes: '-' print, '@file.npy' write, "
         "'+file.npy' append, '' drop (one per result).", repeated=True),
    Flag("expected_output", "string", "An expected result in --input syntax, or (ignored); "
         "prints [SUCCESS] or [FAILED] and exits 1 on a mismatch.", repeated=True),
    Flag("expected_f16_threshold", "float", "Largest absolute f16 difference that matches.",
         default=Tolerances.f16),
    Flag("expected_f32_threshold", "float", "Largest absolute f32 difference that matches.",
         default=Tolerances.f32),
    Flag("expected_f64_threshold", "float", "Largest absolute f64 difference that matches.",
         default=Tolerances.f64),
    Flag("output_max_element_count", "int", "Elements of a result to print before eliding the "
         "rest with '...'.", default=DEFAULT_MAX_ELEMENT_COUNT, metavar="N"),
    Flag("print_statistics", "bool", "Print the invocation time, each device's queue and "
         "dispatch counts, how many queue operations executed at once (at most, and which), "
         "and what is still alive (buffers, pooled memory, pending queue "
         "operations, threads, semaphores; per device and for the process) to stderr on exit.",
         default=False),
    Flag("deadline_ms", "int", "Milliseconds the invocation may take; past them every wait "
         "(and host loop) stops with an error. 0: no limit.", default=0, metavar="N"),
], description="Runs a function of a compiled weir module, as IREE's iree-run-module does.",
    # One stray positional is taken so the error can suggest `--module=` for it.
    positionals=(0, 1))


@dataclass(frozen=True)
class RunRequest:
    """Everything the flags asked for, checked before any module is loaded."""

    devices: tuple[str, ...]
    modules: tuple[str, ...]
    function: str | None
    inputs: tuple[ParsedInput, ...]
    outputs: tuple[str, ...]
    expected: tuple[str, ...]
    tolerances: Tolerances
    max_element_count: int
    print_statistics: bool
    deadline_s: float | None = None  # --deadline_ms; None: no limit


def request_from_flags(flags: ParsedFlags) -> RunRequest:
    modules = module_specs(flags)
    outputs = tuple(flags.strings("output"))
    check_output_specs(outputs)
    max_count = flags.integer("output_max_element_count")
    if max_count < 0:
        raise UsageError(f"--output_max_element_count must not be negative, got {max_count}")
    return RunRequest(
        devices=tuple(flags.strings("device")) or (DEFAULT_DEVICE,),
        modules=modules,
        function=flags.string("function"),
        inputs=tuple(parse_inputs(flags.strings("input"), flag="--input")),
        outputs=outputs,
        expected=tuple(flags.strings("expected_output")),
        tolerances=Tolerances(f16=flags.number("expected_f16_threshold"),
                              f32=flags.number("expected_f32_threshold"),
                              f64=flags.number("expected_f64_threshold")),
        max_element_count=max_count,
        print_statistics=flags.boolean("print_statistics"),
        deadline_s=_deadline_s(flags.integer("deadline_ms")),
    )


def _deadline_s(deadline_ms: int) -> float | None:
    if deadline_ms < 0:
        raise UsageError(f"--deadline_ms must not be negative, got {deadline_ms}")
    return deadline_ms / 1000.0 if deadline_ms else None


def run(request: RunRequest, api: ModuleType | None = None) -> int:
    """Loads, invokes and reports; returns the exit code (1 when an expected output differs).
    `api` is `weir.runtime.api` unless a test stands in for it."""
    api = api if api is not None else runtime_api()
    context, modules = open_context(api, request.devices, request.modules)
    target = find_function(context, modules, request.function)
    signature = target.function.signature
    user_args = getattr(target.function, "argument_types",
                        signature.args[:target.function.num_user_args])
    result_types = getattr(target.function, "result_types", signature.results)
    arguments = [
        resolve_argument(value, user_args[i] if i < len(user_args) else None, index=i)
        for i, value in enumerate(request.inputs)
    ]
    sys.stdout.write(f"EXEC @{target.name}\n")
    sys.stdout.flush()
    started = time.perf_counter()
    # A coarse-fences function gets a reached wait fence and a fresh signal fence from
    # `Function`, which waits on the signal fence before results are read, as IREE's tool does.
    raw_results = target.function(*arguments) if request.deadline_s is None else \
        target.function(*arguments, timeout=request.deadline_s)
    elapsed = time.perf_counter() - started
    results = typed_results(_as_list(raw_results, len(signature.results)), result_types)
    exit_code = _report(request, results, result_types)
    if request.print_statistics:
        sys.stderr.write(f"[statistics] invocation: {elapsed * 1e3:.3f} ms\n")
        sys.stderr.write(device_statistics(context.devices, _device_names(modules)))
        sys.stderr.write(live_statistics(context.devices, api.runtime_statistics()))
    return exit_code


def _device_names(modules: Sequence[Any]) -> list[str]:
    """The names the last compiled module gives its devices (`device_a`, ...), if any."""
    for module in reversed(modules):
        image = getattr(module, "image", None)
        if image is not None:
            return [d.name for d in image.devices]
    return []


def device_statistics(devices: Sequence[Any], names: Sequence[str]) -> str:
    """One line per device: where each queue operation and dispatch ran."""
    lines = []
    for i, device in enumerate(devices):
        stats = device.statistics.snapshot()
        label = f"device[{i}]" + (f" @{names[i]}" if i < len(names) else "")
        queue = " ".join(f"{kind}={n}" for kind, n in stats["queue_submitted"].items())
        dispatches = " ".join(f"{name}={n}" for name, n in
                              sorted(stats["dispatches_by_entry_point"].items())) or "none"
        lines.append(f"[statistics] {label} {device.driver_name}: queue {queue} "
                     f"(completed={stats['queue_completed']} failed={stats['queue_failed']}); "
                     f"dispatches: {dispatches}\n")
        lines.append(in_flight_line(f"device[{i}]", stats))
    return "".join(lines)


def in_flight_line(label: str, stats: Mapping[str, Any]) -> str:
    """How many queue operations are executing now, the most that ever executed at once, and
    which ones those were (when the peak was first reached, in start order)."""
    peak_ops = "; ".join(stats["in_flight_peak_ops"])
    return (f"[statistics] {label} in flight: now={stats['in_flight']} "
            f"peak={stats['in_flight_peak']}" + (f" ({peak_ops})" if peak_ops else "") + "\n")


def live_statistics(devices: Sequence[Any], runtime: Mapping[str, int]) -> str:
    """What is alive once the call returned, by the runtime's own counts: one line per device and
    one for the whole process (`runtime_statistics()`). A leak shows as numbers that grow with
    the work done, rather than staying at what the loaded program keeps."""
    lines = []
    for i, device in enumerate(devices):
        s = device.statistics.snapshot()
        lines.append(f"[statistics] device[{i}] live: buffers={s['buffers_alive']} "
                     f"({s['buffer_bytes_alive']} B) pooled={s['pooled_bytes']} B "
                     f"pending={s['queue_pending']} threads={s['threads_alive']}\n")
    lines.append(f"[statistics] runtime live: devices={runtime['devices_alive']} "
                 f"semaphores={runtime['semaphores_alive']} buffers={runtime['buffers_alive']} "
                 f"({runtime['buffer_bytes_alive']} B) pooled={runtime['pooled_bytes']} B "
                 f"pending={runtime['queue_pending']} threads={runtime['threads_alive']}\n")
    return "".join(lines)


@dataclass(frozen=True)
class Target:
    """The function to run: its name as IREE prints it after `EXEC @`, and the `Function` the
    context resolved (which carries the signature and call model)."""

    name: str
    function: Any


def find_function(context: Any, modules: Sequence[Any], name: str | None) -> Target:
    """`--function=NAME` in the last module (`module.name` reaches any loaded module); omitted,
    the last module's only export, as IREE's tool does."""
    module = modules[-1]
    if name == "":
        raise UsageError("--function needs a function name")
    if name is None:
        if len(module.exports) != 1:
            raise UsageError(f"--function is required: module '{module.name}' exports "
                             f"{len(module.exports)} functions ({', '.join(module.exports)})")
        name = next(iter(module.exports))
    export_name = name
    if "." in name:
        module_name, export_name = name.split(".", 1)
        module = next((m for m in modules if m.name == module_name), None)
        if module is None:
            loaded = ", ".join(m.name for m in modules)
            raise LoadError(f"function '{name}': no module '{module_name}' is loaded "
                            f"(loaded: {loaded})")
    if export_name not in module.exports:
        raise LoadError(f"module '{module.name}' has no function '{export_name}'; it exports: "
                        f"{', '.join(module.exports) or '(nothing)'}")
    return Target(name, context.lookup(f"{module.name}.{export_name}"))


def _as_list(raw: object, result_count: int) -> list[object]:
    """The call's results as a list: a function with one result returns it bare."""
    if result_count == 1:
        return [raw]
    if raw is None:
        return []
    if isinstance(raw, (tuple, list)):
        return list(raw)
    return [raw]


def _report(request: RunRequest, results: list[object], result_letters: Sequence[str]) -> int:
    if not request.expected:
        if request.outputs:
            write_results(results, request.outputs, sys.stdout, request.max_element_count)
        else:
            sys.stdout.write(format_results(results, request.max_element_count))
        return 0
    expected = expected_values(request.expected, result_letters)
    comparison = compare_results(expected, results, request.tolerances)
    sys.stdout.write(comparison.report)
    if comparison.matched:
        sys.stdout.write(SUCCESS_LINE + "\n")
        return 0
    return 1


def _body(argv: Sequence[str], api: ModuleType | None) -> int:
    flags = parse_command_line(PARSER, argv)
    if flags is None:
        return 0
    return run(request_from_flags(flags), api)


def main(argv: Sequence[str] | None = None, api: ModuleType | None = None) -> int:
    """Console entry point (`weir-run-module`); returns the exit code. `api` replaces
    `weir.runtime.api` (tests)."""
    return run_tool(TOOL, lambda: _body(sys.argv[1:] if argv is None else argv, api))


if __name__ == "__main__":
    sys.exit(main())

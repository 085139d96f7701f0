"""`weir-check-module`: runs a test module, as IREE's iree-check-module does. Every exported
function of the last module that takes no arguments and returns nothing is a test; the `check.*`
ops in it call the runtime's `check` module, which records each failure with the values it saw:

    weir-check-module --module=tests.wvm --device=local-task
    [ RUN      ] add_i32
    [       OK ] add_i32
    [ RUN      ] mul_f32
    check.expect_almost_eq failed: 1 of 4 elements differ by more than atol 0.0001 + ...
      first mismatches: [2] lhs=6.5 rhs=6
      ...
    [  FAILED  ] mul_f32
    1 passed, 1 failed

The exit code is 1 when any test failed, when no test was found, or on a bad flag or module
(one line, no traceback). Unlike IREE, whose check imports are optional, a failed check can
never be skipped: the check module is always loaded, and a test that fails to run fails.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TextIO

from weir.errors import LoadError, WeirError
from weir.tools.cli import run_tool
from weir.tools.io.flags import Flag, FlagParser
from weir.tools.io.session import (
    DEFAULT_DEVICE,
    module_specs,
    open_context,
    parse_command_line,
    runtime_api,
)
from weir.tools.run_module import DEVICE_FLAG

TOOL = "weir-check-module"

PARSER = FlagParser(TOOL, "--module=FILE [--module=FILE ...] [--device=NAME ...]", [
    DEVICE_FLAG,
    Flag("module", "string", "A module file to load, in dependency order; the last holds the "
         "tests. '-' reads stdin; 'python:file.py:ClassName' loads a module written in Python.",
         repeated=True, metavar="FILE"),
], description="Runs every test function (no arguments, no results) of a compiled weir module "
               "and reports the checks that failed.", positionals=(0, 1))


@dataclass(frozen=True)
class CheckResult:
    """One test function: its name and what went wrong (empty when it passed)."""

    name: str
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures


def tests_of(module: Any) -> list[str]:
    """The exports of `module` that are tests: no arguments (fences aside) and no results."""
    names = []
    for name, export in module.exports.items():
        args = len(export.signature.args) - (2 if export.model == "coarse-fences" else 0)
        if args == 0 and not export.signature.results:
            names.append(name)
    if not names:
        raise LoadError(f"module '{module.name}' has no test functions (exported functions that "
                        f"take no arguments and return nothing); it exports: "
                        f"{', '.join(module.exports) or '(nothing)'}")
    return names


def run_check_test(context: Any, module: Any, name: str) -> CheckResult:
    """Calls one test with the check module collecting failures; an error while it runs (a
    failed dispatch, a missing device) is a failure too, and the next test still runs."""
    state = context.module_state("check") if _has_module(context, "check") else None
    if not hasattr(state, "take_failures"):  # none loaded, or a custom module of that name
        state = None
    if state is not None:
        state.collect = True
        state.take_failures()
    problems: list[str] = []
    try:
        context.lookup(f"{module.name}.{name}")()
    except WeirError as error:
        problems.append(f"error: {error}")
    if state is not None:
        problems[:0] = [str(f) for f in state.take_failures()]
    return CheckResult(name, tuple(problems))


def _has_module(context: Any, name: str) -> bool:
    return any(m.name == name for m in context.modules)


def run_check_tests(context: Any, module: Any, out: TextIO | None = None) -> list[CheckResult]:
    """Runs every test of `module` in export order, printing gtest-style lines to `out`."""
    results = []
    for name in tests_of(module):
        if out is not None:
            out.write(f"[ RUN      ] {name}\n")
            out.flush()
        result = run_check_test(context, module, name)
        results.append(result)
        if out is not None:
            for problem in result.failures:
                out.write(problem.replace("\n", "\n  ") + "\n")
            out.write(f"[{'       OK ' if result.passed else '  FAILED  '}] {name}\n")
            out.flush()
    if out is not None:
        failed = sum(not r.passed for r in results)
        out.write(f"{len(results) - failed} passed, {failed} failed\n")
    return results


def _body(argv: Sequence[str], api: ModuleType | None) -> int:
    flags = parse_command_line(PARSER, argv)
    if flags is None:
        return 0
    specs = module_specs(flags, example="tests.wvm")
    api = api if api is not None else runtime_api()
    context, modules = open_context(api, flags.strings("device") or [DEFAULT_DEVICE], specs)
    results = run_check_tests(context, modules[-1], sys.stdout)
    return 0 if all(r.passed for r in results) else 1


def main(argv: Sequence[str] | None = None, api: ModuleType | None = None) -> int:
    """Console entry point (`weir-check-module`); returns the exit code."""
    return run_tool(TOOL, lambda: _body(sys.argv[1:] if argv is None else argv, api))


if __name__ == "__main__":
    sys.exit(main())

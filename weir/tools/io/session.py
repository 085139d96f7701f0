"""What the tools that run modules (weir-run-module, weir-benchmark-module, weir-check-module)
share: reading `--module` values, and a context with its devices and modules, so the three agree
on spellings (`-` for stdin, `python:file.py:Class`) and on their errors."""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Sequence

from weir.errors import UsageError
from weir.tools.io.flags import FlagParser, ParsedFlags

DEFAULT_DEVICE = "local-sync"


def parse_command_line(parser: FlagParser, argv: Sequence[str]) -> ParsedFlags | None:
    """The flags, or None once `--help` has been answered. Modules are never positional: a bare
    argument is almost always a forgotten `--module=`, so the error says so."""
    flags = parser.parse(argv)
    if flags.help_requested:
        sys.stdout.write(parser.help_text())
        return None
    if flags.positionals:
        raise UsageError(f"unexpected argument '{flags.positionals[0]}'; give modules as "
                         f"--module={flags.positionals[0]}")
    return flags


def module_specs(flags: ParsedFlags, example: str = "file.wvm") -> tuple[str, ...]:
    modules = tuple(flags.strings("module"))
    if not modules:
        raise UsageError(f"no module given; use --module={example} (or --module=- for stdin)")
    if modules.count("-") > 1:
        raise UsageError("--module=- (stdin) can be given only once")
    return modules


def runtime_api() -> ModuleType:
    """`weir.runtime.api`, imported when a module is run so `--help` and flag errors stay fast."""
    from weir.runtime import api

    return api


def load_module(api: ModuleType, spec: str) -> Any:
    """One `--module` value: a module file, `-` (stdin), or `python:file.py:ClassName`, a
    module written in Python (a `NativeModule` subclass, see docs/custom_modules.md)."""
    if spec == "-":
        return api.load_module_bytes(sys.stdin.buffer.read())
    if spec.startswith("python:"):
        return api.load_python_module(spec)
    return api.load_module_file(spec)


def open_context(api: ModuleType, devices: Sequence[str],
                 specs: Sequence[str]) -> tuple[Any, list[Any]]:
    """A context on new devices (named in order) holding the modules (in dependency order)."""
    instance = api.Instance()
    created = [instance.create_device(name) for name in devices]
    try:
        modules = [load_module(api, spec) for spec in specs]
        api.check_device_count(len(devices), modules)
        return api.Context(instance, devices=created, modules=modules), modules
    except BaseException:
        for device in created:  # their worker threads end here, not at exit
            device.shutdown()
        raise

"""weir in one import: compile MLIR to a module and run it, from Python.

    >>> import numpy as np, weir.api as weir
    >>> data = weir.compile_string(open("simple_mul.mlir").read())           # doctest: +SKIP
    >>> ctx = weir.load([data], device="local-sync")                          # doctest: +SKIP
    >>> ctx.lookup_function("simple_mul")(np.ones(4, np.float32), np.ones(4, np.float32))

The compiler and the runtime stay independent rooms (neither imports the other); this module is
the hallway that joins them for users. The compiler (with xDSL) is imported on first use of a
compiler name, so a program that only loads and runs compiled modules starts in about half the
time and memory.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from weir.errors import DeadlineExceeded, RuntimeFault, UsageError, WaitCycleError, WeirError
from weir.runtime.api import (
    BufferView,
    Context,
    Fence,
    Function,
    Instance,
    NativeModule,
    check_device_count,
    deadline,
    export,
    load_module_bytes,
    load_module_file,
    runtime_statistics,
)
from weir.runtime.vm.module import Module

if TYPE_CHECKING:
    from weir.compiler.api import compile_file, compile_string, compile_to_phase
    from weir.compiler.options import CompilerOptions, TargetDevice

# Compiler names and the module each comes from, imported when first asked for (PEP 562).
_COMPILER_NAMES = {
    "compile_file": "weir.compiler.api", "compile_string": "weir.compiler.api",
    "compile_to_phase": "weir.compiler.api", "CompilerOptions": "weir.compiler.options",
    "TargetDevice": "weir.compiler.options",
}


def __getattr__(name: str) -> Any:
    source = _COMPILER_NAMES.get(name)
    if source is None:
        raise AttributeError(f"module 'weir.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(source), name)
    globals()[name] = value
    return value

__all__ = [
    "BufferView", "CompilerOptions", "Context", "DeadlineExceeded", "Fence", "Function",
    "Instance", "NativeModule", "RuntimeFault", "TargetDevice", "WaitCycleError", "WeirError",
    "compile_file", "compile_string", "compile_to_phase", "deadline", "export", "load",
    "load_module_bytes", "load_module_file", "runtime_statistics",
]


def load(modules: Sequence[bytes | str | Path | NativeModule],
         device: str | Sequence[str] = "local-sync", instance: Instance | None = None) -> Context:
    """A context holding `modules` in load order (dependencies first): module bytes, module file
    paths, or native modules. `device` names one driver, or a list of them: one new device each,
    bound in order to the devices the modules were compiled for. The context owns those
    devices: `close()` it (or use it in a `with` block) to end their threads deterministically."""
    instance = instance or Instance()
    drivers = [device] if isinstance(device, str) else list(device) \
        if isinstance(device, Sequence) else None
    if drivers is None or not all(isinstance(d, str) for d in drivers):
        raise UsageError(f"device: expected a driver name or a list of them, got {device!r}")
    loaded = []
    for i, m in enumerate(modules):
        if isinstance(m, bytes | bytearray | memoryview):
            loaded.append(load_module_bytes(bytes(m)))
        elif isinstance(m, str | Path):
            loaded.append(load_module_file(m))
        elif isinstance(m, Module):
            loaded.append(m)
        else:
            raise UsageError(f"modules[{i}]: expected module bytes, a module file path or a "
                             f"loaded or native module, got {type(m).__name__}")
    check_device_count(len(drivers), loaded)
    return Context(instance, devices=[instance.create_device(d) for d in drivers],
                   modules=loaded, owns_devices=True)

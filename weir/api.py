"""weir in one import: compile MLIR to a module and run it, from Python.

    >>> import numpy as np, weir.api as weir
    >>> data = weir.compile_string(open("simple_mul.mlir").read())           # doctest: +SKIP
    >>> ctx = weir.load([data], device="local-sync")                          # doctest: +SKIP
    >>> ctx.lookup_function("simple_mul")(np.ones(4, np.float32), np.ones(4, np.float32))

The compiler and the runtime stay independent rooms (neither imports the other); this module is
the hallway that joins them for users.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from weir.compiler.api import compile_file, compile_string, compile_to_phase
from weir.compiler.options import CompilerOptions, TargetDevice
from weir.runtime.api import (
    BufferView,
    Context,
    Fence,
    Function,
    Instance,
    NativeModule,
    export,
    load_module_bytes,
    load_module_file,
)

__all__ = [
    "BufferView", "CompilerOptions", "Context", "Fence", "Function", "Instance", "NativeModule",
    "compile_file", "compile_string", "compile_to_phase", "export", "load", "load_module_bytes",
    "load_module_file", "TargetDevice",
]


def load(modules: Sequence[bytes | str | Path | NativeModule],
         device: str | Sequence[str] = "local-sync", instance: Instance | None = None) -> Context:
    """A context holding `modules` in load order (dependencies first): module bytes, module file
    paths, or native modules. `device` names one driver, or a list of them: one new device each,
    bound in order to the devices the modules were compiled for."""
    instance = instance or Instance()
    drivers = [device] if isinstance(device, str) else list(device)
    loaded = []
    for m in modules:
        if isinstance(m, bytes | bytearray | memoryview):
            loaded.append(load_module_bytes(bytes(m)))
        elif isinstance(m, str | Path):
            loaded.append(load_module_file(m))
        else:
            loaded.append(m)
    return Context(instance, devices=[instance.create_device(d) for d in drivers],
                   modules=loaded)

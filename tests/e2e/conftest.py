"""End-to-end programs run on every target that executes on the host: the reference target
(numpy) and llvm-cpu (native code), each on both local drivers, so neither the targets nor the
drivers can drift apart."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir

TARGETS = ("reference", "llvm-cpu")
DRIVERS = ("local-sync", "local-task")
Runner = Callable[..., object]

# One compilation per (source, target): the drivers run the same module file, and compiling
# llvm-cpu code twice would only cost test time.
_compiled: dict[tuple[str, str], bytes] = {}


def compiled(source: str, target: str) -> bytes:
    key = (source, target)
    if key not in _compiled:
        options = weir.CompilerOptions(target_backends=(target,))
        _compiled[key] = weir.compile_string(source, "test.mlir", options)
    return _compiled[key]


@pytest.fixture(params=[(t, d) for t in TARGETS for d in DRIVERS],
                ids=lambda p: f"{p[0]}-{p[1]}")
def run(request: pytest.FixtureRequest) -> Runner:
    """run(source, function, *args): compiles for the target, loads on the driver, calls."""
    target, driver = request.param

    def run_program(source: str, function: str, *args: object) -> object:
        ctx = weir.load([compiled(source, target)], device=driver)
        return ctx.lookup_function(function)(*args)
    return run_program

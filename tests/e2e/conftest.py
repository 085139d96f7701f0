"""End-to-end programs run on every target that executes on the host: the reference target
(numpy) and llvm-cpu (native code), on both local drivers, so the targets cannot drift apart."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir

TARGETS = ("reference", "llvm-cpu")
Runner = Callable[..., object]


@pytest.fixture(params=[("reference", "local-sync"), ("llvm-cpu", "local-sync"),
                        ("llvm-cpu", "local-task")], ids=lambda p: f"{p[0]}-{p[1]}")
def run(request: pytest.FixtureRequest) -> Runner:
    """run(source, function, *args): compiles for the target, loads on the driver, calls."""
    target, driver = request.param

    def run_program(source: str, function: str, *args: np.ndarray) -> object:
        options = weir.CompilerOptions(target_backends=(target,))
        ctx = weir.load([weir.compile_string(source, "test.mlir", options)], device=driver)
        return ctx.lookup_function(function)(*args)
    return run_program

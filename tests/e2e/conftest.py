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

def dense_f32(values: np.ndarray) -> str:
    """`values` as the f32 dense attribute of an `arith.constant`, in hex (exact, and short
    enough to embed weights of a few thousand elements)."""
    return f'dense<"0x{values.astype(np.float32).tobytes().hex().upper()}">'


# One compilation per (source, target): the drivers run the same module file, and compiling
# llvm-cpu code twice would only cost test time.
_compiled: dict[tuple[str, str, frozenset[str]], bytes] = {}


def compiled(source: str, target: str, disabled: frozenset[str] = frozenset()) -> bytes:
    key = (source, target, disabled)
    if key not in _compiled:
        options = weir.CompilerOptions(target_backends=(target,), disabled_passes=disabled)
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


# llvm-cpu runs NCHW convolutions channels-last; with that pass off it runs them as written,
# on the direct kernel's own NCHW paths, which programs reach when the pass is disabled.
AS_WRITTEN = frozenset({"convert-conv-to-channels-last"})


@pytest.fixture(params=[(t, d, False) for t in TARGETS for d in DRIVERS] +
                [("llvm-cpu", d, True) for d in DRIVERS],
                ids=lambda p: f"{p[0]}-{p[1]}" + ("-as-written" if p[2] else ""))
def layout_run(request: pytest.FixtureRequest) -> Runner:
    """`run`, plus llvm-cpu with NCHW convolutions kept in the layout the program states."""
    target, driver, as_written = request.param

    def run_program(source: str, function: str, *args: object) -> object:
        module = compiled(source, target, AS_WRITTEN if as_written else frozenset())
        ctx = weir.load([module], device=driver)
        return ctx.lookup_function(function)(*args)
    return run_program

"""All phases of weir's compiler in order, on one screen. Each phase folder lists its own passes
in its `pipeline.py`; each phase ends with a verifier of its exit contract."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from weir.compiler.abi import pipeline as abi_pipeline
from weir.compiler.flow import pipeline as flow_pipeline
from weir.compiler.global_opt import pipeline as global_opt_pipeline
from weir.compiler.hal import pipeline as hal_pipeline
from weir.compiler.input import pipeline as input_pipeline
from weir.compiler.options import Phase
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.stream import pipeline as stream_pipeline
from weir.compiler.vm import pipeline as vm_pipeline
from weir.ir.upstream import ModuleOp


@dataclass(frozen=True)
class PhaseSpec:
    name: Phase
    passes: tuple[Pass, ...]
    verify: Callable[[ModuleOp, CompilationState], None]


PHASE_PIPELINE: tuple[PhaseSpec, ...] = (
    # The user's program checked against what weir can compile.
    PhaseSpec("input", input_pipeline.PASSES, input_pipeline.VERIFY),
    # The boundary in runtime terms: buffer views, fences, imports.
    PhaseSpec("abi", abi_pipeline.PASSES, abi_pipeline.VERIFY),
    # Work that is the same on every call (constant weights' layouts) done once at compile time.
    PhaseSpec("global-optimization", global_opt_pipeline.PASSES, global_opt_pipeline.VERIFY),
    # Tensor math grouped into dispatches and outlined into executables.
    PhaseSpec("flow", flow_pipeline.PASSES, flow_pipeline.VERIFY),
    # Resources, allocation and asynchronous execution ordered by timepoints.
    PhaseSpec("stream", stream_pipeline.PASSES, stream_pipeline.VERIFY),
    # Executables translated per target; command buffers, fences and queue operations.
    PhaseSpec("hal", hal_pipeline.PASSES, hal_pipeline.VERIFY),
    # The host program as VM functions calling the runtime's hal module.
    PhaseSpec("vm", vm_pipeline.PASSES, vm_pipeline.VERIFY),
)


def run_phases(module: ModuleOp, state: CompilationState,
               after_phase: Callable[[Phase, ModuleOp], None] | None = None) -> None:
    """Runs phases in order up to `state.options.compile_to` (all when None)."""
    for phase in PHASE_PIPELINE:
        for p in phase.passes:
            if p.flag not in state.options.disabled_passes:
                p.run(module, state)
        if state.options.verify_phases:
            phase.verify(module, state)
        if after_phase is not None:
            after_phase(phase.name, module)
        if phase.name == state.options.compile_to:
            return

"""The llvm-cpu target's CPU, for global-optimization passes that store constants in the layout
one of its microkernels reads (the panel width depends on the CPU's vector registers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from weir.compiler.state import CompilationState

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.machine import CpuTarget


def llvm_cpu_target(state: CompilationState) -> CpuTarget | None:
    """The CPU llvm-cpu generates code for; None when llvm-cpu is not one of the targets."""
    options = state.options
    if "llvm-cpu" not in options.target_backends:
        return None
    from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
    return resolve_cpu(options.llvmcpu_target_cpu, options.llvmcpu_target_cpu_features)

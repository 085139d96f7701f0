"""Loaders of executable payloads, one per format. `default_loader_registry()` builds the registry
an `Instance` starts with (a fresh one each time: no process-wide state)."""

from __future__ import annotations

from weir.runtime.executables.llvm_cpu import LLVM_CPU_LOADER
from weir.runtime.executables.reference import REFERENCE_LOADER
from weir.runtime.hal.executable import ExecutableLoaderRegistry


def default_loader_registry() -> ExecutableLoaderRegistry:
    registry = ExecutableLoaderRegistry()
    registry.register(REFERENCE_LOADER)
    registry.register(LLVM_CPU_LOADER)
    return registry

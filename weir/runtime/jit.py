"""Code that weir's runtime generates for itself (the replay executors, the work board of
local-task's helper threads), compiled once per process for this CPU. Never text from a module
file: module payloads are object code that llvm_cpu.py links, and nothing here parses what a
user supplied.

Builds take `LLVM_LOCK`: LLVM's global context is not safe to use from two threads at once, and
the first use of an executor can happen on several device threads together. A function is built
once and kept for the life of the process: a second copy made by a racing thread would be freed
while that thread still calls it."""

from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

import llvmlite.binding as llvm
import llvmlite.ir as ir

# Held by whatever uses LLVM in the runtime (these builds, linking a module's object code).
LLVM_LOCK = threading.Lock()
T = TypeVar("T")


class JitFunction:
    """One generated function and the engine that owns its code (kept as long as the function
    may be called). Build it under LLVM_LOCK (`BuiltOnce` does)."""

    def __init__(self, module: ir.Module, symbol: str) -> None:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_triple(llvm.get_process_triple())
        machine = target.create_target_machine(cpu=llvm.get_host_cpu_name(), opt=2)
        parsed = llvm.parse_assembly(str(module))
        parsed.verify()
        self._engine = llvm.create_mcjit_compiler(parsed, machine)
        self._engine.finalize_object()
        self.address: int = self._engine.get_function_address(symbol)

    def function_address(self, symbol: str) -> int:
        """Another function of the same module."""
        return int(self._engine.get_function_address(symbol))


class BuiltOnce(Generic[T]):
    """`build()`'s result, made by the first thread that asks and kept for the process."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._value: T | None = None

    def get(self) -> T:
        value = self._value
        if value is None:
            with LLVM_LOCK:
                if self._value is None:
                    self._value = self._build()
                value = self._value
        return value

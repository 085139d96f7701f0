"""Code that weir's runtime generates for itself (the replay executors), compiled once per
process for this CPU. Never text from a module file: module payloads are object code that
llvm_cpu.py links, and nothing here parses what a user supplied."""

from __future__ import annotations

import llvmlite.binding as llvm
import llvmlite.ir as ir


class JitFunction:
    """One generated function and the engine that owns its code (kept as long as the function
    may be called)."""

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

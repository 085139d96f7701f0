"""A program's one dispatch as the llvm-cpu target lowers it, for the tests that read the LLVM IR
it generates or run its entry point in-process."""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

import weir.api as weir
from weir.compiler.codegen.translate import EntryTranslator
from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering
from weir.format.native_executable import NativeEntry
from weir.compiler.targets.llvm_cpu.machine import CpuTarget, resolve_cpu
from weir.format import kernel_description as k
from weir.ir import parse_module
from weir.ir.upstream import func


@dataclass(frozen=True)
class Lowered:
    module: ir.Module  # the entry point and its helpers, before optimisation
    cpu: CpuTarget
    entry: NativeEntry


def kernel_description(src: str, disabled: frozenset[str] = frozenset()) -> k.EntryPoint:
    """The kernel description of the one dispatch of `src` (compiled to flow with the passes
    `disabled` off), as llvm-cpu lowers it."""
    options = weir.CompilerOptions(target_backends=("llvm-cpu",), disabled_passes=disabled)
    flow = weir.compile_to_phase(src, "lowered.mlir", options, "flow")
    (fn,) = [op for op in parse_module(flow, "flow.mlir").walk()
             if isinstance(op, func.FuncOp) and "weir.binding_dims" in op.attributes]
    return EntryTranslator(fn, "llvm-cpu").translate()


def lowered_entry(src: str, symbol: str = "weir_entry", cpu_name: str = "host",
                  disabled: frozenset[str] = frozenset()) -> Lowered:
    """The one dispatch of `src` (compiled to flow with the passes `disabled` off) lowered for
    `cpu_name` as entry point `symbol`."""
    cpu = resolve_cpu(cpu_name)
    module = ir.Module(name=symbol)
    module.triple = cpu.triple
    entry = EntryLowering(module, cpu, kernel_description(src, disabled), symbol).lower()
    return Lowered(module, cpu, entry)

"""The `llvm-cpu` target: each dispatch becomes native code for the chosen CPU.

Dispatch functions are first described by the same kernel description the reference target
uses (so both targets accept exactly the same programs), then lowered to LLVM IR, optimised by
LLVM's O3 pipeline (vectoriser included) and emitted as one ELF object per executable."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import llvmlite.ir as ir

from weir.compiler.options import CompilerOptions
from weir.compiler.state import CompilationState
from weir.compiler.targets.interface import Target
from weir.compiler.targets.llvm_cpu.contraction import gemm_object
from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering
from weir.compiler.targets.llvm_cpu.machine import CpuTarget, resolve_cpu
from weir.compiler.codegen.translate import EntryTranslator
from weir.format.native_executable import (
    decode_native_executable,
    encode_native_executable,
    FORMAT,
    NativeExecutable,
)
from weir.format.workgroups import WorkgroupGrid
from weir.ir.upstream import func


def _symbol(name: str) -> str:
    return "weir_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


def optimize(module: ir.Module | str, cpu: CpuTarget) -> llvm.ModuleRef:
    """Parsed, verified and run through LLVM's O3 pipeline for `cpu`."""
    parsed = llvm.parse_assembly(str(module))
    parsed.verify()
    tm = cpu.target_machine()
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    # A short static inner loop (an embedding row of 16) is unrolled whole before the loop
    # vectoriser sees it; the SLP vectoriser (off in llvmlite's defaults) packs the copies.
    tuning.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, tuning)
    pb.getModulePassManager().run(parsed, pb)
    return parsed


def compile_module(module: ir.Module | str, cpu: CpuTarget) -> bytes:
    """LLVM IR -> optimised object code."""
    return cpu.target_machine().emit_object(optimize(module, cpu))  # type: ignore[no-any-return]


class Jit:
    """Generated code loaded into this process, for tests and benchmarks that call it directly
    (modules load their executables through the runtime's loader instead)."""

    def __init__(self, module: ir.Module | str, cpu: CpuTarget) -> None:
        parsed = optimize(module, cpu)
        self.optimized_ir = str(parsed)
        machine = cpu.target_machine()
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(machine.emit_object(parsed)))
        self.engine.finalize_object()

    def address(self, name: str) -> int:
        return self.engine.get_function_address(name)  # type: ignore[no-any-return]


class LLVMCPUTarget(Target):
    name = "llvm-cpu"
    format = FORMAT

    def check_options(self, options: CompilerOptions) -> None:
        resolve_cpu(options.llvmcpu_target_cpu, options.llvmcpu_target_cpu_features)

    def translate(self, entry_points: list[func.FuncOp], state: CompilationState) -> bytes:
        options = state.options
        cpu = resolve_cpu(options.llvmcpu_target_cpu, options.llvmcpu_target_cpu_features)
        module = ir.Module(name="weir_executable")
        module.triple = cpu.triple
        entries = []
        gemms: set[tuple[str, str, str]] = set()
        for fn in entry_points:
            description = EntryTranslator(fn, self.name,
                                          not options.llvmcpu_reassociate_fp_reductions).translate()
            lowering = EntryLowering(module, cpu, description, _symbol(description.name),
                                     options.llvmcpu_reassociate_fp_reductions)
            entries.append(lowering.lower())
            gemms |= lowering.gemms
        objects = [compile_module(module, cpu)] + [gemm_object(cpu, t) for t in sorted(gemms)]
        return encode_native_executable(NativeExecutable(
            cpu.triple, cpu.cpu, cpu.required_features, tuple(entries), tuple(objects)))

    def workgroup_grids(self, payload: bytes) -> tuple[WorkgroupGrid, ...]:
        return tuple(e.grid for e in decode_native_executable(payload).entries)

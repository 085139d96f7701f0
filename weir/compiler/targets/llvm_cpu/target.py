"""The `llvm-cpu` target: each dispatch becomes native code for the chosen CPU.

Dispatch functions are first described by the same kernel description the reference target
uses (so both targets accept exactly the same programs), then lowered to LLVM IR, optimised by
LLVM's O3 pipeline (vectoriser included) and emitted as one ELF object per executable.

Each executable is linked on its own (in its own engine: the runtime's llvm_cpu.py), so an entry
point's symbol only has to be unique within its executable: it is named by its position
(`weir_entry0`, ...), not by its dispatch. Executables whose kernels are the same (ResNet-50: 74
executables, 36 kernels) then lower to the same LLVM IR, which is optimised and emitted once
for all of them (`compile_shared`; the ONNX LSTM, unrolled: 260 executables of 133 kernels,
compiled in 13.4 s where each was emitted under its own names, 15.3)."""

from __future__ import annotations

import llvmlite.binding as llvm
import llvmlite.ir as ir

from weir.compiler.jobs import run_jobs, SharedJob
from weir.compiler.options import CompilerOptions
from weir.compiler.state import CompilationState
from weir.compiler.targets.interface import Target, Translation
from weir.compiler.targets.llvm_cpu.gemm_calls import gemm_epilogue_object, gemm_object
from weir.compiler.targets.llvm_cpu.epilogue_program import EpilogueProgram
from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering
from weir.compiler.targets.llvm_cpu.machine import CpuTarget, resolve_cpu
from weir.compiler.targets.llvm_cpu.object_code import compile_shared, optimize
from weir.compiler.targets.llvm_cpu.scratch import scratch_object, uses_scratch
from weir.compiler.codegen.translate import EntryTranslator
from weir.format.native_executable import (
    decode_native_executable,
    encode_native_executable,
    FORMAT,
    NativeExecutable,
)
from weir.format.workgroups import WorkgroupGrid
from weir.ir.upstream import func


def _symbol(index: int) -> str:
    """The symbol entry point `index` of an executable is emitted under."""
    return f"weir_entry{index}"


class Jit:
    """Generated code loaded into this process, for tests and benchmarks that call it directly
    (modules load their executables through the runtime's loader instead)."""

    def __init__(self, module: ir.Module | str, cpu: CpuTarget) -> None:
        parsed = optimize(module, cpu)
        self.optimized_ir = str(parsed)
        machine = cpu.target_machine()
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(machine.emit_object(parsed)))
        if isinstance(module, ir.Module) and uses_scratch(module):  # a private copy
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(scratch_object(cpu)))
        self.engine.finalize_object()

    def address(self, name: str) -> int:
        return self.engine.get_function_address(name)  # type: ignore[no-any-return]


class LLVMCPUTarget(Target):
    name = "llvm-cpu"
    format = FORMAT

    def check_options(self, options: CompilerOptions) -> None:
        resolve_cpu(options.llvmcpu_target_cpu, options.llvmcpu_target_cpu_features)

    def translate(self, entry_points: list[func.FuncOp], state: CompilationState) -> bytes:
        translation = self.start(entry_points, state)
        return translation.finish(run_jobs(translation.jobs, 1, state.filename))

    def start(self, entry_points: list[func.FuncOp], state: CompilationState) -> Translation:
        """Lowered to LLVM IR here; LLVM's optimisation and code generation of it is the job."""
        options = state.options
        cpu = resolve_cpu(options.llvmcpu_target_cpu, options.llvmcpu_target_cpu_features)
        module = ir.Module(name="weir_executable")
        module.triple = cpu.triple
        entries = []
        gemms: set[tuple[tuple[str, str, str], bool]] = set()
        programs: set[tuple[EpilogueProgram, bool]] = set()
        for index, fn in enumerate(entry_points):
            description = EntryTranslator(fn, self.name,
                                          not options.llvmcpu_reassociate_fp_reductions).translate()
            lowering = EntryLowering(module, cpu, description, _symbol(index),
                                     options.llvmcpu_reassociate_fp_reductions)
            entries.append(lowering.lower())
            gemms |= lowering.gemms
            programs |= lowering.gemm_programs

        scratch = uses_scratch(module)

        def finish(objects: list[bytes]) -> bytes:
            # The GEMM kernels are compiled here, not per job: once per process, and kept on
            # disk between processes (kernel_cache.py).
            objects = objects + [gemm_object(cpu, t, wide, options.kernel_cache_dir)
                                 for t, wide in sorted(gemms)]
            objects += [gemm_epilogue_object(cpu, p, wide, options.kernel_cache_dir)
                        for p, wide in sorted(programs, key=lambda p: (p[0].key, p[1]))]
            if scratch:
                objects.append(scratch_object(cpu, options.kernel_cache_dir))
            return encode_native_executable(NativeExecutable(
                cpu.triple, cpu.cpu, cpu.required_features, tuple(entries), tuple(objects)))
        return Translation([SharedJob(compile_shared, (str(module), cpu), None)], finish)

    def workgroup_grids(self, payload: bytes) -> tuple[WorkgroupGrid, ...]:
        return tuple(e.grid for e in decode_native_executable(payload).entries)

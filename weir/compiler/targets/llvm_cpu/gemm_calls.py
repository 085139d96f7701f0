"""How lowered entries call the GEMM microkernel (gemm.py) and its few-rows kernels (gemv.py),
and the objects that define them. The microkernel's code is not in the entries' module: each
variant a compilation calls is an object of its own, compiled once per process and CPU and kept
on disk between processes (kernel_cache.py), which the executable links when it loads."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable, TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.epilogue_program import EpilogueProgram
from weir.compiler.targets.llvm_cpu.gemm import (
    gemm_epilogue_name,
    gemm_name,
    get_gemm,
    get_gemm_epilogue,
)
from weir.compiler.targets.llvm_cpu.gemv import get_gemv, gemv_name
from weir.compiler.targets.llvm_cpu.kernel_cache import cached_object
from weir.compiler.targets.llvm_cpu.loops import I64
from weir.compiler.targets.llvm_cpu.machine import CpuTarget
from weir.compiler.targets.llvm_cpu.object_code import compile_module, object_key

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

# The types whose weights global-optimization stores prepacked (pack_matmul_weights.py).
PREPACKED_TYPES = ("f32", "f32", "f32")


def declare_gemm(module: ir.Module, types: tuple[str, str, str], from_zero: bool = False,
                 prepacked: bool = False, from_row: bool = False,
                 wide: bool = False) -> ir.Function:
    """The microkernel as an external symbol: its code is a separate object, compiled once per
    compilation (`gemm_object`) and linked in when the executable loads; `from_zero`, its
    variant that overwrites C; `from_row`, the one that starts C's rows from a row it takes as
    one more argument; `prepacked`, the variants that read B's panels in place; `wide`, those
    of wide tiles (over panels of `panel_columns(cpu, "f32", True)`)."""
    name = gemm_name(types, from_zero, prepacked, from_row, wide)
    existing = module.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    lhs, rhs, acc = (s.memory_type(t).as_pointer() for t in types)
    return ir.Function(module, ir.FunctionType(ir.VoidType(), [I64, I64, I64, lhs, I64, rhs, I64,
                                                               acc, I64] +
                                               ([acc] if from_row else [])), name)


def call_gemm(low: EntryLowering, b: ir.IRBuilder, types: tuple[str, str, str],
              args: list[ir.Value], from_zero: bool = False, prepacked: bool = False,
              row: ir.Value | None = None, wide: bool = False) -> None:
    """Calls the microkernel (`args`: M, N, K, A, lda, B, ldb, C, ldc) through the entry point
    for how C starts: from C, from +0 (`from_zero`) or from `row` (`bias_row`: given, it is the
    entry point's last argument); `prepacked`: B's panels read in place; `wide`: in wide tiles,
    over wide panels (f32, prepacked)."""
    low.gemms.add((types, wide))
    b.call(declare_gemm(low.module, types, from_zero, prepacked, row is not None, wide),
           args + ([] if row is None else [row]))


def call_gemm_epilogue(low: EntryLowering, b: ir.IRBuilder, args: list[ir.Value],
                       start: bool, row: ir.Value | None, program: EpilogueProgram,
                       offsets: list[ir.Value], wide: bool = False) -> None:
    """Calls the f32 microkernel over prepacked B that stores `program` of its sums
    (`args`: M, N, K > 0, A, lda, B, ldb, C, ldc): C starts from `row`, or from +0 without
    one, when `start`, else from C; `offsets` place the program's inputs (in bytes from C's
    elements). Its code is an object of its own per program (`gemm_epilogue_object`). `wide`:
    in wide tiles, over wide panels."""
    low.gemm_programs.add((program, wide))
    name = gemm_epilogue_name(program, wide)
    fn = low.module.globals.get(name)
    f32p = ir.FloatType().as_pointer()
    if not isinstance(fn, ir.Function):
        fn = ir.Function(low.module, ir.FunctionType(
            ir.VoidType(), [I64, I64, I64, f32p, I64, f32p, I64, f32p, I64, I64, f32p] +
            [I64] * program.inputs), name)
    b.call(fn, args + [I64(int(start)), ir.Constant(f32p, None) if row is None else row,
                       *offsets])


def declare_gemv(module: ir.Module, types: tuple[str, str, str], transposed: bool) -> ir.Function:
    """The few-rows kernels (gemv.py), defined in the microkernel's object too: B row-major,
    or `transposed` (Bt, n x k), with the GEMM's signature."""
    name = gemv_name(types, transposed)
    existing = module.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    return ir.Function(module, declare_gemm(module, types).function_type, name)


@functools.cache
def gemm_object(cpu: CpuTarget, types: tuple[str, str, str], wide: bool = False,
                cache_dir: Path | None = None) -> bytes:
    """Object code defining `gemm_name(types)`, its from-zero and from-row variants, for f32
    their prepacked variants, and the two few-rows kernels (`gemv_name`); cached because it
    depends on nothing else, and building and optimising it costs more than most dispatches:
    in this process, and in `cache_dir` between processes (kernel_cache.py).
    The variants share their driver and tiles: each costs an entry point of a few calls.
    `wide`: the prepacked f32 variants of wide tiles only (the only ones there are)."""
    starts = ((False, False), (True, False), (False, True))  # C, 0, row

    def define(module: ir.Module) -> list[ir.Function]:
        if wide:
            return [get_gemm(module, cpu, *types, from_zero, True, from_row, True)
                    for from_zero, from_row in starts]
        entries = []
        for from_zero, from_row in starts:
            entries.append(get_gemm(module, cpu, *types, from_zero, from_row=from_row))
            if types == PREPACKED_TYPES:
                entries.append(get_gemm(module, cpu, *types, from_zero, True, from_row))
        return entries + [get_gemv(module, cpu, *types, t) for t in (False, True)]
    return _kernel_object(cpu, gemm_name(types, wide=wide), define, cache_dir)


@functools.cache
def gemm_epilogue_object(cpu: CpuTarget, program: EpilogueProgram, wide: bool = False,
                         cache_dir: Path | None = None) -> bytes:
    """Object code defining `gemm_epilogue_name(program, wide)`: a model has a few epilogues
    (ReLU, ReLU6, a residual add and ReLU), each compiled once, in this process and in
    `cache_dir`, like the microkernel's own object."""
    return _kernel_object(cpu, gemm_epilogue_name(program, wide),
                          lambda module: [get_gemm_epilogue(module, cpu, program, wide)],
                          cache_dir)


def _kernel_object(cpu: CpuTarget, name: str,
                   define: Callable[[ir.Module], list[ir.Function]],
                   cache_dir: Path | None) -> bytes:
    """The object of a module `name` in which `define` writes the microkernel's functions and
    returns those the entry objects call (made external); built once per text and CPU in
    `cache_dir` (kernel_cache.py)."""
    module = ir.Module(name=name)
    module.triple = cpu.triple
    for fn in define(module):
        fn.linkage = ""
    text = str(module)
    return cached_object(cache_dir, object_key(text, cpu), lambda: compile_module(text, cpu))

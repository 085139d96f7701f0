"""An epilogue as a kernel applies it in registers: a few exact f32 ops on the element a kernel is
about to store for the last time, and on the elements of other tensors at the same index (a
residual). Written as a small program of numbered values, free of the entry's description, so
that the shared GEMM microkernel, compiled once per program rather than once per entry
(gemm_calls.py's `gemm_epilogue_object`), applies it as well as the entry's own kernels.

Value 0 is the kernel's element, values 1 .. inputs the other tensors' elements, then one value
per step. The ops are the scalar epilogue's (`scalars.emit_scalar`), emitted on vectors, so a
kernel applying the program gives what the epilogue's pass over memory gives, NaN and signed
zeros included."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.format.kernel_description import Scalar

_F32 = ir.FloatType()

# Ops a program may use (f32 values, i1 comparisons): those of ReLU as exporters write it
# (torch-mlir: select(cmpf ugt x, 0; x, 0); others: maximumf(x, 0)), ReLU6's clamps, a scale or
# shift by constants and a residual add. Each is exact in f32, so vector lanes give what the
# scalar epilogue gives.
VECTOR_OPS = frozenset({"cmpf", "select", "maximumf", "minimumf", "maxnumf", "minnumf",
                        "addf", "subf", "mulf"})


@dataclass(frozen=True)
class Step:
    """One value: an op of VECTOR_OPS on earlier values (`args`, of types `arg_dtypes`), or an
    f32 `constant` (`attr`, no args)."""

    op: str
    dtype: str
    attr: Scalar
    args: tuple[int, ...]
    arg_dtypes: tuple[str, ...]


@dataclass(frozen=True)
class EpilogueProgram:
    inputs: int  # tensors read at the stored element's index: values 1 .. inputs
    steps: tuple[Step, ...]  # value inputs + 1 + i is steps[i]
    result: int  # the value stored

    @property
    def key(self) -> str:
        """A name for the program in symbols: the same program, the same key in every process
        (the GEMM's object of a program is cached on disk by its text)."""
        return hashlib.sha256(repr(self).encode()).hexdigest()[:16]


def at_offset(b: ir.IRBuilder, pointer: ir.Value, offset: ir.Value) -> ir.Value:
    """`pointer` moved by `offset` bytes, as a pointer of its type: an input's element where the
    kernel stores the output's (the offsets are the inputs' bases less the output's)."""
    moved = b.gep(b.bitcast(pointer, ir.IntType(8).as_pointer()), [offset])
    return b.bitcast(moved, pointer.type)


def apply_program(b: ir.IRBuilder, value: ir.Value, program: EpilogueProgram,
                  inputs: Sequence[ir.Value] = ()) -> ir.Value:
    """The program on the f32 lanes of `value` (or on a scalar), `inputs` the other tensors'
    elements at the same index, loaded as `value`'s lanes (one per `program.inputs`)."""
    assert len(inputs) == program.inputs
    lanes = value.type.count if isinstance(value.type, ir.VectorType) else 0
    values: list[ir.Value] = [value, *inputs]
    for step in program.steps:
        if step.op == "constant":
            constant = float(step.attr)  # type: ignore[arg-type]
            values.append(ir.Constant(ir.VectorType(_F32, lanes), [constant] * lanes)
                          if lanes else ir.Constant(_F32, constant))
            continue
        values.append(s.emit_scalar(b, step.op, [values[a] for a in step.args], step.dtype,
                                    step.attr, list(step.arg_dtypes)))
    return values[program.result]

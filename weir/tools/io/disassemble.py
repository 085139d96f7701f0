"""VM instructions as readable one-line text for `weir-dump-module`:

    %r3 = call @hal.fence.create(%r1)
    %r5 = add %r3, %r4
    cond_br %r5, ^bb1(%r2), ^bb2
"""

from __future__ import annotations

from weir.format.image import FunctionDef, ModuleImage
from weir.format.vm_isa import (
    Arith,
    Binary,
    Branch,
    Call,
    CondBranch,
    Const,
    Fail,
    GlobalLoad,
    GlobalStore,
    Instruction,
    Move,
    Operand,
    Return,
    Rodata,
    Select,
    Unary,
)


def register(index: int) -> str:
    return f"%r{index}"


def operand(value: Operand) -> str:
    """A register, or a tuple of registers passed as one argument: `(%r1, %r2)`."""
    if isinstance(value, tuple):
        return "(" + ", ".join(register(r) for r in value) + ")"
    return register(value)


def _registers(values: tuple[int, ...]) -> str:
    return ", ".join(register(r) for r in values)


def _target(block: int, args: tuple[int, ...]) -> str:
    return f"^bb{block}" + (f"({_registers(args)})" if args else "")


def _constant(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
    return repr(value)


def instruction_text(inst: Instruction, image: ModuleImage) -> str:
    """One instruction of a verified `image`; globals and rodata are shown by name (the verifier
    has checked every index)."""
    if isinstance(inst, Const):
        return f"{register(inst.dst)} = const {_constant(inst.value)}"
    if isinstance(inst, Move):
        return f"{register(inst.dst)} = move {register(inst.src)}"
    if isinstance(inst, Call):
        call = f"call @{inst.callee}(" + ", ".join(operand(a) for a in inst.args) + ")"
        return f"{_registers(inst.dsts)} = {call}" if inst.dsts else call
    if isinstance(inst, GlobalLoad):
        return f"{register(inst.dst)} = global.load @{image.globals[inst.global_index].name}"
    if isinstance(inst, GlobalStore):
        return f"global.store {register(inst.src)}, @{image.globals[inst.global_index].name}"
    if isinstance(inst, Rodata):
        return f"{register(inst.dst)} = rodata @{image.rodata[inst.rodata_index].name}"
    if isinstance(inst, Binary):
        return f"{register(inst.dst)} = {inst.op} {register(inst.lhs)}, {register(inst.rhs)}"
    if isinstance(inst, Unary):
        return f"{register(inst.dst)} = {inst.op} {register(inst.src)}"
    if isinstance(inst, Arith):
        predicate = f" {inst.attr}" if inst.attr is not None else ""
        result = f" -> {inst.dtype}" if inst.dtype != inst.arg_dtype else ""
        return (f"{register(inst.dst)} = arith.{inst.op}{predicate} "
                + ", ".join(register(a) for a in inst.args) + f" : {inst.arg_dtype}{result}")
    if isinstance(inst, Select):
        return (f"{register(inst.dst)} = select {register(inst.cond)}, "
                f"{register(inst.true_value)}, {register(inst.false_value)}")
    if isinstance(inst, Branch):
        return f"br {_target(inst.block, inst.args)}"
    if isinstance(inst, CondBranch):
        return (f"cond_br {register(inst.cond)}, {_target(inst.true_block, inst.true_args)}, "
                f"{_target(inst.false_block, inst.false_args)}")
    if isinstance(inst, Return):
        return "return" + (f" {_registers(inst.values)}" if inst.values else "")
    if isinstance(inst, Fail):
        return f"fail {register(inst.message)}" + (f", {_registers(inst.values)}"
                                                   if inst.values else "")
    raise TypeError(f"unknown instruction {type(inst).__name__}")


def function_lines(fn: FunctionDef, image: ModuleImage, indent: str = "    ") -> list[str]:
    """Every block of `fn` (a function of the verified `image`) with its parameters, then its
    instructions one per line."""
    lines: list[str] = []
    for index, block in enumerate(fn.blocks):
        params = f"({_registers(block.params)})" if block.params else ""
        lines.append(f"{indent}^bb{index}{params}:")
        lines.extend(f"{indent}  {instruction_text(i, image)}" for i in block.instructions)
    return lines

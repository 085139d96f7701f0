"""Translates verified VM functions into Python source, compiled once per module.

The generated code is built only from the closed instruction set and verified integers (register,
block, global, rodata and table indices, and int constants after a type check). Every other
constant is read from a table `k<i>`, every import is a closure variable `c<i>` resolved per
context, globals live in a per-context list `G`. So a module file can never inject code, and
executing VM code costs what the equivalent Python costs: no per-instruction dispatch.

Shape of the output:

    def __make(K, C, G, R):
        k0, k1 = K          # constants
        c0, c1 = C          # resolved imports (G: globals, R: rodata; helpers are `H_*` names)
        def f0(r0, r1):     # one per function, entry-block params as arguments
            r2 = c0(r0, (r1, r0))
            return r2
        return (f0,)

A function with branches runs its blocks in a `while True` / `if blk == k:` dispatcher.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType
from typing import Any

from weir.errors import ModuleFormatError
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
from weir.runtime.vm import scalar_helpers
from weir.runtime.vm.scalar_arith import arith_function

_I64 = "-9223372036854775808 <= {0} <= 9223372036854775807"
_ARITH = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}
_WRAPPING = {"add", "sub", "mul"}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_HELPERS = {"div": "H_div", "rem": "H_rem", "shl": "H_shl", "shr": "H_shr"}
# `Arith` ops that plain Python computes exactly for 64-bit integers (loop counters, shape math),
# written inline; every other op calls its numpy function (scalar_arith.py).
_INLINE_I64 = {"addi": "+", "subi": "-", "muli": "*", "andi": "&", "ori": "|", "xori": "^"}
_INLINE_CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}
_INLINE_F64 = {"addf": "+", "subf": "-", "mulf": "*"}

# The names the generated code may use besides its registers, tables and functions.
HELPERS: dict[str, Any] = {
    "H_wrap": scalar_helpers.wrap_i64,
    "H_div": scalar_helpers.div,
    "H_rem": scalar_helpers.rem,
    "H_shl": scalar_helpers.shl,
    "H_shr": scalar_helpers.shr,
    "H_toint": scalar_helpers.to_int,
    "H_fail": scalar_helpers.fail,
}


@dataclass(frozen=True)
class TranslatedModule:
    source: str
    code: CodeType
    constants: tuple[Any, ...]
    imports: tuple[str, ...]  # order of the `C` table


def _r(n: int) -> str:
    return f"r{int(n)}"


class _FunctionWriter:
    def __init__(self, index: int, fn: FunctionDef, callees: dict[str, str],
                 consts: list[Any]) -> None:
        self.index = index
        self.fn = fn
        self.callees = callees
        self.consts = consts
        self.lines: list[str] = []
        self.multi = any(isinstance(i, (Branch, CondBranch)) for b in fn.blocks for i in b.instructions)

    def const(self, value: Any) -> str:
        if type(value) is int:
            return repr(int(value))
        self.consts.append(value)
        return f"k{len(self.consts) - 1}"

    def operand(self, op: Operand) -> str:
        if isinstance(op, tuple):
            return "(" + "".join(_r(x) + ", " for x in op) + ")"
        return _r(op)

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def jump(self, indent: int, block: int, args: tuple[int, ...]) -> None:
        params = self.fn.blocks[block].params
        if params:
            self.emit(indent, ", ".join(_r(p) for p in params) + ", = "
                      + ", ".join(_r(a) for a in args) + ",")
        self.emit(indent, f"blk = {int(block)}")
        self.emit(indent, "continue")

    def instruction(self, indent: int, ins: Instruction) -> None:  # noqa: C901
        e = lambda text: self.emit(indent, text)  # noqa: E731
        if isinstance(ins, Const):
            e(f"{_r(ins.dst)} = {self.const(ins.value)}")
        elif isinstance(ins, Move):
            e(f"{_r(ins.dst)} = {_r(ins.src)}")
        elif isinstance(ins, Call):
            call = f"{self.callees[ins.callee]}({', '.join(self.operand(a) for a in ins.args)})"
            if not ins.dsts:
                e(call)
            elif len(ins.dsts) == 1:
                e(f"{_r(ins.dsts[0])} = {call}")
            else:
                e(", ".join(_r(d) for d in ins.dsts) + f", = {call}")
        elif isinstance(ins, GlobalLoad):
            e(f"{_r(ins.dst)} = G[{int(ins.global_index)}]")
        elif isinstance(ins, GlobalStore):
            e(f"G[{int(ins.global_index)}] = {_r(ins.src)}")
        elif isinstance(ins, Rodata):
            e(f"{_r(ins.dst)} = R[{int(ins.rodata_index)}]")
        elif isinstance(ins, Binary):
            d, a, b = _r(ins.dst), _r(ins.lhs), _r(ins.rhs)
            if ins.op in _ARITH:
                e(f"{d} = {a} {_ARITH[ins.op]} {b}")
                if ins.op in _WRAPPING:
                    e(f"if not {_I64.format(d)}: {d} = H_wrap({d})")
            elif ins.op in _COMPARE:
                e(f"{d} = 1 if {a} {_COMPARE[ins.op]} {b} else 0")
            elif ins.op == "min":
                e(f"{d} = {b} if {b} < {a} else {a}")
            elif ins.op == "max":
                e(f"{d} = {b} if {b} > {a} else {a}")
            else:
                e(f"{d} = {_HELPERS[ins.op]}({a}, {b})")
        elif isinstance(ins, Unary):
            d, a = _r(ins.dst), _r(ins.src)
            if ins.op == "neg":
                e(f"{d} = -{a}")
                e(f"if not {_I64.format(d)}: {d} = H_wrap({d})")
            elif ins.op == "not":
                e(f"{d} = 0 if {a} else 1")
            elif ins.op == "to_int":
                e(f"{d} = H_toint({a})")
            else:
                e(f"{d} = float({a})")
        elif isinstance(ins, Arith):
            self.arith(e, ins)
        elif isinstance(ins, Select):
            e(f"{_r(ins.dst)} = {_r(ins.true_value)} if {_r(ins.cond)} else {_r(ins.false_value)}")
        elif isinstance(ins, Branch):
            self.jump(indent, ins.block, ins.args)
        elif isinstance(ins, CondBranch):
            e(f"if {_r(ins.cond)}:")
            self.jump(indent + 1, ins.true_block, ins.true_args)
            self.jump(indent, ins.false_block, ins.false_args)
        elif isinstance(ins, Return):
            vals = [_r(v) for v in ins.values]
            e("return " + ("None" if not vals else vals[0] if len(vals) == 1
                           else "(" + ", ".join(vals) + ")"))
        elif isinstance(ins, Fail):
            e(f"raise H_fail({_r(ins.message)})")
        else:  # unreachable after verification
            raise AssertionError(f"unknown instruction {ins!r}")

    def arith(self, e: Any, ins: Arith) -> None:
        d, args = _r(ins.dst), [_r(a) for a in ins.args]
        wide_int = ins.arg_dtype in ("i64", "index")
        if ins.op == "select":
            e(f"{d} = {args[1]} if {args[0]} else {args[2]}")
        elif wide_int and ins.dtype == ins.arg_dtype and ins.op in _INLINE_I64:
            e(f"{d} = {args[0]} {_INLINE_I64[ins.op]} {args[1]}")
            if ins.op in ("addi", "subi", "muli"):
                e(f"if not {_I64.format(d)}: {d} = H_wrap({d})")
        elif wide_int and ins.op == "cmpi" and ins.attr in _INLINE_CMPI:
            e(f"{d} = {args[0]} {_INLINE_CMPI[str(ins.attr)]} {args[1]}")
        elif wide_int and ins.op == "index_cast" and ins.dtype in ("i64", "index"):
            e(f"{d} = {args[0]}")
        elif ins.dtype == ins.arg_dtype == "f64" and ins.op in _INLINE_F64:
            e(f"{d} = {args[0]} {_INLINE_F64[ins.op]} {args[1]}")
        else:
            fn = self.const(arith_function(ins.op, ins.dtype, ins.arg_dtype, ins.attr))
            e(f"{d} = {fn}({', '.join(args)})")

    def registers_needing_init(self) -> list[int]:
        """Registers that might be read before written: all of them with branches, those read
        before any write in straight-line code (a malformed program then sees None, not a
        NameError)."""
        params = set(self.fn.blocks[0].params)
        used: set[int] = set()
        written = set(params)
        early: set[int] = set()
        for block in self.fn.blocks:
            for ins in block.instructions:
                reads, writes = _reads_writes(ins)
                for r in reads:
                    used.add(r)
                    if r not in written:
                        early.add(r)
                used.update(writes)
                written.update(writes)
            used.update(block.params)
        return sorted((used - params) if self.multi else early)

    def write(self) -> list[str]:
        fn = self.fn
        self.emit(1, f"def f{self.index}({', '.join(_r(p) for p in fn.blocks[0].params)}):")
        init = self.registers_needing_init()
        if init:
            self.emit(2, " = ".join(_r(r) for r in init) + " = None")
        if not self.multi:
            for ins in fn.blocks[0].instructions:
                self.instruction(2, ins)
            return self.lines
        self.emit(2, "blk = 0")
        self.emit(2, "while True:")
        for b, block in enumerate(fn.blocks):
            self.emit(3, f"if blk == {b}:")
            for ins in block.instructions:
                self.instruction(4, ins)
        return self.lines


def _reads_writes(ins: Instruction) -> tuple[list[int], list[int]]:
    if isinstance(ins, Const):
        return [], [ins.dst]
    if isinstance(ins, Move):
        return [ins.src], [ins.dst]
    if isinstance(ins, Call):
        reads: list[int] = []
        for a in ins.args:
            reads.extend(a if isinstance(a, tuple) else (a,))
        return reads, list(ins.dsts)
    if isinstance(ins, (GlobalLoad, Rodata)):
        return [], [ins.dst]
    if isinstance(ins, GlobalStore):
        return [ins.src], []
    if isinstance(ins, Binary):
        return [ins.lhs, ins.rhs], [ins.dst]
    if isinstance(ins, Unary):
        return [ins.src], [ins.dst]
    if isinstance(ins, Arith):
        return list(ins.args), [ins.dst]
    if isinstance(ins, Select):
        return [ins.cond, ins.true_value, ins.false_value], [ins.dst]
    if isinstance(ins, Branch):
        return list(ins.args), []
    if isinstance(ins, CondBranch):
        return [ins.cond, *ins.true_args, *ins.false_args], []
    if isinstance(ins, Return):
        return list(ins.values), []
    if isinstance(ins, Fail):
        return [ins.message], []
    return [], []


def translate_module(image: ModuleImage) -> TranslatedModule:
    """`image` must have passed `verify_image`."""
    callees: dict[str, str] = {}
    imports = tuple(i.name for i in image.imports)
    for i, name in enumerate(imports):
        callees[name] = f"c{i}"
    for i, fn in enumerate(image.functions):
        callees[fn.name] = f"f{i}"
    consts: list[Any] = []
    body: list[str] = []
    for i, fn in enumerate(image.functions):
        body.extend(_FunctionWriter(i, fn, callees, consts).write())
    head = ["def __make(K, C, G, R):"]
    if consts:
        head.append("    " + "".join(f"k{i}, " for i in range(len(consts))) + "= K")
    if imports:
        head.append("    " + "".join(f"c{i}, " for i in range(len(imports))) + "= C")
    tail = ["    return (" + "".join(f"f{i}, " for i in range(len(image.functions))) + ")"]
    source = "\n".join(head + body + tail) + "\n"
    try:
        code = compile(source, f"<weir module '{image.name}'>", "exec")
    except (SyntaxError, RecursionError, ValueError, MemoryError) as e:
        raise ModuleFormatError(f"module '{image.name}': VM code cannot be translated: {e}") from None
    return TranslatedModule(source, code, tuple(consts), imports)


def instantiate_functions(translated: TranslatedModule, imports: list[Any], globals_: list[Any],
                          rodata: tuple[Any, ...]) -> tuple[Any, ...]:
    """Binds the translated code to one context's imports, globals and rodata."""
    namespace: dict[str, Any] = {"__builtins__": {"float": float}, **HELPERS}
    exec(translated.code, namespace)  # noqa: S102 (generated from verified integers only)
    return namespace["__make"](translated.constants, imports, globals_, rodata)  # type: ignore[no-any-return]

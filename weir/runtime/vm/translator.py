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

A function with branches runs its blocks in a `while True` / `if blk == k:` dispatcher; a jump
to the next block falls through to its test instead of starting over from block 0. Every
branch back to the same or an earlier block (every loop has one) counts down `tick`; every
`TICKS` of them the dispatcher checks the calling thread's deadline (hal/deadline.py), so a host
loop that never ends (a damaged or hostile branch) ends a call that has a deadline with
`DeadlineExceeded` naming the function, for one decrement and one test per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType
from typing import Any, Callable

from weir.errors import ModuleFormatError, RuntimeFault
from weir.format.image import FunctionDef, ModuleImage
from weir.format.module_verify import callee_signatures, ensure_verified
from weir.format.vm_kinds import unproven_results
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
from weir.runtime.hal import deadline
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.buffer_view import BufferView
from weir.runtime.hal.fence import Fence
from weir.runtime.vm import scalar_helpers
from weir.runtime.vm.awaited_executes import AWAITED, NOW, BlockPlan, plan_function, variant_name
from weir.runtime.vm.bare_imports import name_import_fault
from weir.runtime.vm.scalar_arith import arith_function

# Back edges between two deadline checks: a check costs about 0.1 µs, a loop iteration of a
# program at least a few µs, so this is noise; a runaway loop still stops within milliseconds.
TICKS = 4096

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

# What an `r` result may be at run time (value_kinds.VALUE): what a caller can hold.
_VALUE_TYPES: tuple[type, ...] = (BufferView, Buffer, Fence, type(None), int, float, bool)

# The names the generated code may use besides its registers, tables and functions.
HELPERS: dict[str, Any] = {
    "H_wrap": scalar_helpers.wrap_i64,
    "H_div": scalar_helpers.div,
    "H_rem": scalar_helpers.rem,
    "H_shl": scalar_helpers.shl,
    "H_shr": scalar_helpers.shr,
    "H_toint": scalar_helpers.to_int,
    "H_fail": scalar_helpers.fail,
    "H_any": Exception,
    "H_fault": name_import_fault,
}


@dataclass(frozen=True)
class TranslatedModule:
    source: str
    code: CodeType
    constants: tuple[Any, ...]
    imports: tuple[str, ...]  # order of the `C` table: the image's imports, then `variants`
    functions: tuple[str, ...]  # names, for the deadline's message (never in the source)
    module: str
    # (name in the table, import it is a form of, variant): awaited_executes.py
    variants: tuple[tuple[str, str, str], ...] = ()


def _r(n: int) -> str:
    return f"r{int(n)}"


class _FunctionWriter:
    def __init__(self, index: int, fn: FunctionDef, callees: dict[str, str],
                 consts: list[Any], unproven: set[tuple[int, int]],
                 plans: list[BlockPlan]) -> None:
        self.index = index
        self.fn = fn
        self.plans = plans  # per block: its executes awaited at once (awaited_executes.py)
        self.callees = callees
        self.consts = consts
        self.unproven = unproven  # (register, result) pairs whose kind is known only at run time
        self.lines: list[str] = []
        self.multi = any(isinstance(i, (Branch, CondBranch)) for b in fn.blocks for i in b.instructions)
        self.block = 0  # the block being written

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

    def jump(self, indent: int, block: int, args: tuple[int, ...], last: bool = False) -> None:
        """`last`: the block's final statement, where a jump to the next block can fall through
        to its `if blk == ...` test instead of starting the dispatch over from block 0."""
        params = self.fn.blocks[block].params
        if params:
            self.emit(indent, ", ".join(_r(p) for p in params) + ", = "
                      + ", ".join(_r(a) for a in args) + ",")
        if block <= self.block:  # a back edge: every loop takes one per iteration
            self.emit(indent, "tick -= 1")
            self.emit(indent, f"if not tick: tick = H_tick({int(self.index)})")
        self.emit(indent, f"blk = {int(block)}")
        if not (last and block == self.block + 1):
            self.emit(indent, "continue")

    def block_instructions(self, indent: int, instructions: tuple[Instruction, ...],
                           plan: BlockPlan) -> None:
        """The block's instructions, its executes awaited at once called through their
        variants (awaited_executes.py)."""
        for i, ins in enumerate(instructions):
            fused = plan.fused.get(i)
            if fused is not None:
                callee = self.callees[variant_name(fused.execute.callee, NOW)]
                self.emit(indent, f"{callee}({', '.join(self.operand(a) for a in fused.args)})")
            elif i not in plan.dropped:
                self.instruction(indent, ins, i in plan.awaited)

    def instruction(self, indent: int, ins: Instruction,  # noqa: C901
                    awaited: bool = False) -> None:
        """`awaited`: a call of an execute whose signal fence the next call awaits, made
        through the execute's awaited variant."""
        e = lambda text: self.emit(indent, text)  # noqa: E731
        if isinstance(ins, Const):
            e(f"{_r(ins.dst)} = {self.const(ins.value)}")
        elif isinstance(ins, Move):
            e(f"{_r(ins.dst)} = {_r(ins.src)}")
        elif isinstance(ins, Call):
            callee = self.callees[variant_name(ins.callee, AWAITED) if awaited else ins.callee]
            call = f"{callee}({', '.join(self.operand(a) for a in ins.args)})"
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
            self.jump(indent, ins.block, ins.args, last=True)
        elif isinstance(ins, CondBranch):
            # The path to the next block goes last, where it can fall through to it.
            if ins.true_block == self.block + 1:
                e(f"if not {_r(ins.cond)}:")
                self.jump(indent + 1, ins.false_block, ins.false_args)
                self.jump(indent, ins.true_block, ins.true_args, last=True)
            else:
                e(f"if {_r(ins.cond)}:")
                self.jump(indent + 1, ins.true_block, ins.true_args)
                self.jump(indent, ins.false_block, ins.false_args, last=True)
        elif isinstance(ins, Return):
            for n, (reg, t) in enumerate(zip(ins.values, self.fn.signature.results)):
                if (reg, n) in self.unproven:
                    helper = "H_float" if t in "fF" else "H_int" if t in "iI" else "H_value"
                    e(f"{_r(reg)} = {helper}({_r(reg)}, {int(self.index)}, {int(n)})")
            vals = [_r(v) for v in ins.values]
            e("return " + ("None" if not vals else vals[0] if len(vals) == 1
                           else "(" + ", ".join(vals) + ")"))
        elif isinstance(ins, Fail):
            e(f"raise H_fail({', '.join(_r(r) for r in (ins.message, *ins.values))})")
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

    def write(self) -> list[str]:
        """The verifier proved every register written before it is read on every path, so no
        register needs a placeholder value. The body sits in a `try` whose handler names a
        failing bare-linked import (bare_imports.py); it costs nothing until something fails."""
        fn = self.fn
        self.emit(1, f"def f{self.index}({', '.join(_r(p) for p in fn.blocks[0].params)}):")
        self.emit(2, "try:")
        plans = self.plans
        if not self.multi:
            self.block_instructions(3, fn.blocks[0].instructions, plans[0])
        else:
            self.emit(3, "blk = 0")
            self.emit(3, f"tick = {TICKS}")
            self.emit(3, "while True:")
            for b, block in enumerate(fn.blocks):
                self.block = b
                self.emit(4, f"if blk == {b}:")
                self.block_instructions(5, block.instructions, plans[b])
        self.emit(2, "except H_any:")  # Exception: Ctrl-C and exits pass untouched
        self.emit(3, "H_fault()")
        self.emit(3, "raise")
        return self.lines


def translate_module(image: ModuleImage) -> TranslatedModule:
    """Verifies `image` first (unless this very object passed already, as `deserialize`'s
    result has): nothing reaches `compile` that the verifier has not passed, and the generated
    source holds only the closed instruction set's text and verified integers."""
    ensure_verified(image)
    callees: dict[str, str] = {}
    wanted: set[tuple[str, str]] = set()
    plans = [plan_function(fn) for fn in image.functions]
    for fn, fn_plans in zip(image.functions, plans):
        for block, plan in zip(fn.blocks, fn_plans):
            wanted.update((block.instructions[i].callee, AWAITED)  # type: ignore[union-attr]
                          for i in plan.awaited - plan.dropped)
            wanted.update(plan.variants())
    variants = tuple((variant_name(base, variant), base, variant)
                     for base, variant in sorted(wanted))
    imports = tuple(i.name for i in image.imports) + tuple(v[0] for v in variants)
    for i, name in enumerate(imports):
        callees[name] = f"c{i}"
    for i, fn in enumerate(image.functions):
        callees[fn.name] = f"f{i}"
    consts: list[Any] = []
    body: list[str] = []
    signatures = callee_signatures(image)
    for i, fn in enumerate(image.functions):
        unproven = unproven_results(image, fn, signatures)
        body.extend(_FunctionWriter(i, fn, callees, consts, unproven, plans[i]).write())
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
    return TranslatedModule(source, code, tuple(consts), imports,
                            tuple(fn.name for fn in image.functions), image.name, variants)


def _result_checks(translated: TranslatedModule) -> dict[str, Callable[[Any, int, int], Any]]:
    """`H_int` / `H_float` / `H_value(value, function, result)`: a result the verifier could not
    prove to be what its signature promises (it came through an `r` value) is checked on
    return: a number for `i`/`f`, a value a caller can hold for `r` (never a string, a device,
    a command buffer or an executable)."""
    names, module = translated.functions, translated.module

    def check(kind: str, types: tuple[type, ...]) -> Callable[[Any, int, int], Any]:
        def expect(value: Any, function: int, result: int) -> Any:
            if type(value) not in types:
                raise RuntimeFault(f"function '{names[function]}' of module '{module}': result "
                                   f"{result} must be {kind}, got {type(value).__name__}")
            return value
        return expect
    return {"H_int": check("an integer", (int, bool)), "H_float": check("a float", (float,)),
            "H_value": check("a value (a buffer view, a buffer, a fence, a number or "
                             "null)", _VALUE_TYPES)}


def _ticker(translated: TranslatedModule) -> Callable[[int], int]:
    """`H_tick(function)`: checks the deadline (raising `DeadlineExceeded` naming the
    function), then returns the next countdown."""
    names, module = translated.functions, translated.module

    def tick(function: int) -> int:
        deadline.check(f"running function '{names[function]}' of module '{module}'")
        return TICKS
    return tick


def instantiate_functions(translated: TranslatedModule, imports: list[Any], globals_: list[Any],
                          rodata: tuple[Any, ...]) -> tuple[Any, ...]:
    """Binds the translated code to one context's imports, globals and rodata."""
    namespace: dict[str, Any] = {"__builtins__": {"float": float}, **HELPERS,
                                 "H_tick": _ticker(translated), **_result_checks(translated)}
    exec(translated.code, namespace)  # noqa: S102 (generated from verified integers only)
    return namespace["__make"](translated.constants, imports, globals_, rodata)  # type: ignore[no-any-return]

"""The kinds check of one VM function, run by the module verifier after the dataflow checks
(vm_dataflow.py): what every register may hold (value_kinds.py), found by propagating kinds to
a fixpoint, and every use of a register checked against what it needs.

- an integer or float operand (a call's `i`/`f` argument, an `Arith` operand, a condition, a
  global store) receives a register of that kind;
- an operand of a `hal.*` call receives the kind the hal module takes there (hal_abi.py): a
  device, a string constant, a tuple of integers, ...;
- an `r` argument of any other call, and an `r` result, receives a value a caller can hold
  (a buffer view, a buffer, a fence, a number or null), never a string constant, a command
  buffer, an executable, a device or a rodata view.

IREE's VM keeps integer, float and reference registers in separate banks, and types its
references, for the same reason: a module that returns a command buffer where its signature
promises a tensor is refused when it is loaded, not met as a Python object in the caller's
hands. A register whose kind is known only at run time (`ANY`) that a function returns is
checked when it returns (`unproven_results`, the translator's `H_int`/`H_float`/`H_value`)."""

from __future__ import annotations

from weir.errors import ModuleFormatError
from weir.format.element_types import BY_NAME
from weir.format.hal_abi import HalFunction, TupleOf, hal_function
from weir.format.image import FunctionDef, ModuleImage, Signature
from weir.format.value_kinds import (
    ANY,
    FLOAT,
    INT,
    LETTER_KINDS,
    NULL,
    NUMBER,
    RODATA,
    STRING,
    VALUE,
    Kind,
    describe,
    join,
    may_be,
)
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
    Return,
    Rodata,
    Select,
    Unary,
)

_BITWISE = frozenset({"and", "or", "xor", "shl", "shr"})
_COMPARE = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
_CONFLICT: Kind = frozenset({"conflict"})


def _err(where: str, message: str) -> ModuleFormatError:
    return ModuleFormatError(f"{where}: {message}")


def _const_kind(value: object) -> Kind:
    if type(value) in (int, bool):
        return INT
    if type(value) is float:
        return FLOAT
    return NULL if value is None else STRING


def _branch_args(ins: Instruction) -> list[tuple[int, tuple[int, ...]]]:
    if isinstance(ins, Branch):
        return [(ins.block, ins.args)]
    if isinstance(ins, CondBranch):
        return [(ins.true_block, ins.true_args), (ins.false_block, ins.false_args)]
    return []


class _Kinds:
    """The kinds of every register of one function."""

    def __init__(self, image: ModuleImage, fn: FunctionDef, callees: dict[str, Signature],
                 where: str) -> None:
        self.image = image
        self.fn = fn
        self.callees = callees
        self.imports = {i.name for i in image.imports}
        self.where = where
        self.kind: dict[int, Kind] = {}
        self.changed = False

    def hal(self, ins: Call) -> HalFunction | None:
        """The hal module's entry for a call of an import it provides."""
        if ins.callee not in self.imports:
            return None
        return hal_function(ins.callee, len(ins.args), len(ins.dsts))

    def join(self, reg: int, kind: Kind | None, where: str) -> None:
        if kind is None:
            return
        old = self.kind.get(reg)
        new = join(old, kind)
        if new is None:
            assert old is not None
            raise _err(where, f"register {reg} holds {describe(old)} and {describe(kind)}")
        if new != old:
            self.kind[reg] = new
            self.changed = True

    def result(self, ins: Instruction) -> list[tuple[int, Kind | None]]:
        """(register, kind) for what `ins` writes; None while an operand's kind is unknown."""
        k = self.kind.get
        if isinstance(ins, Const):
            return [(ins.dst, _const_kind(ins.value))]
        if isinstance(ins, Move):
            return [(ins.dst, k(ins.src))]
        if isinstance(ins, Call):
            hal = self.hal(ins)
            kinds = hal.results if hal is not None else \
                tuple(LETTER_KINDS[t] for t in self.callees[ins.callee].results)
            return list(zip(ins.dsts, kinds))
        if isinstance(ins, GlobalLoad):
            return [(ins.dst, LETTER_KINDS[self.image.globals[ins.global_index].type])]
        if isinstance(ins, Rodata):
            return [(ins.dst, RODATA)]
        if isinstance(ins, Binary):
            a, b = k(ins.lhs), k(ins.rhs)
            if ins.op in _COMPARE or ins.op in _BITWISE:
                return [(ins.dst, INT)]
            if a is None or b is None:
                return [(ins.dst, None)]
            return [(ins.dst, FLOAT if FLOAT in (a, b) else ANY if ANY in (a, b) else INT)]
        if isinstance(ins, Unary):
            if ins.op in ("not", "to_int"):
                return [(ins.dst, INT)]
            return [(ins.dst, FLOAT if ins.op == "to_float" else k(ins.src))]
        if isinstance(ins, Arith):
            return [(ins.dst, FLOAT if BY_NAME[ins.dtype].is_float else INT)]
        if isinstance(ins, Select):
            a, b = k(ins.true_value), k(ins.false_value)
            if a is None or b is None:
                return [(ins.dst, None)]
            both = join(a, b)
            return [(ins.dst, _CONFLICT if both is None else both)]
        return []

    def solve(self) -> None:
        fn = self.fn
        for p, t in zip(fn.blocks[0].params, fn.signature.args):
            self.join(p, LETTER_KINDS[t], f"{self.where} entry block")
        self.changed = True
        while self.changed:
            self.changed = False
            for b, block in enumerate(fn.blocks):
                for i, ins in enumerate(block.instructions):
                    w = f"{self.where} block {b} instruction {i}"
                    for reg, kind in self.result(ins):
                        if kind == _CONFLICT:
                            raise _err(w, "select of values of two kinds")
                        self.join(reg, kind, w)
                    for target, args in _branch_args(ins):
                        for param, arg in zip(fn.blocks[target].params, args):
                            self.join(param, self.kind.get(arg), w)

    def of(self, reg: int) -> Kind:
        """A register no path writes (in unreachable code) may be anything."""
        return self.kind.get(reg, ANY)

    def expect(self, reg: int, wanted: Kind, what: str, where: str) -> None:
        kind = self.of(reg)
        if not may_be(kind, wanted):
            raise _err(where, f"{what} must be {describe(wanted)}, register {reg} holds "
                              f"{describe(kind)}")

    def expect_value(self, reg: int, what: str, where: str) -> None:
        """An `r` crossing a function boundary: a value the other side can hold. A register of
        kind ANY passes here (a result is checked on return, an argument by its callee)."""
        self.expect(reg, VALUE, what, where)

    def check_uses(self) -> None:
        for b, block in enumerate(self.fn.blocks):
            for i, ins in enumerate(block.instructions):
                self.check(ins, f"{self.where} block {b} instruction {i}")

    def check_call(self, ins: Call, w: str) -> None:
        hal = self.hal(ins)
        letters = self.callees[ins.callee].args
        for n, arg in enumerate(ins.args):
            what = f"argument {n} of '{ins.callee}'"
            wanted = hal.args[n] if hal is not None else LETTER_KINDS[letters[n]]
            if isinstance(wanted, TupleOf):
                if not isinstance(arg, tuple):
                    raise _err(w, f"{what} must be a tuple of {describe(wanted.kind)}, got "
                                  f"register {arg}")
                for reg in arg:
                    self.expect(reg, wanted.kind, f"each element of {what}", w)
            elif isinstance(arg, tuple):
                shown = describe(VALUE if wanted == LETTER_KINDS["r"] else wanted)
                raise _err(w, f"{what} must be {shown}, not a tuple")
            elif hal is None and letters[n] == "r":
                self.expect_value(arg, what, w)
            else:
                self.expect(arg, wanted, what, w)

    def check(self, ins: Instruction, w: str) -> None:  # noqa: C901 (one case per instruction)
        e = self.expect
        if isinstance(ins, Call):
            self.check_call(ins, w)
        elif isinstance(ins, Return):
            for n, (reg, t) in enumerate(zip(ins.values, self.fn.signature.results)):
                if t == "r":
                    self.expect_value(reg, f"result {n}", w)
                else:
                    e(reg, LETTER_KINDS[t], f"result {n}", w)
        elif isinstance(ins, GlobalStore):
            t = self.image.globals[ins.global_index].type
            if t != "r":  # a ref global holds what the program keeps: executables too
                e(ins.src, LETTER_KINDS[t], f"the value stored to global {ins.global_index}", w)
        elif isinstance(ins, Arith):
            kind = FLOAT if BY_NAME[ins.arg_dtype].is_float else INT
            for n, reg in enumerate(ins.args):
                e(reg, INT if ins.op == "select" and n == 0 else kind, f"operand {n}", w)
        elif isinstance(ins, Binary):
            wanted = INT if ins.op in _BITWISE else NUMBER
            e(ins.lhs, wanted, "the left operand", w)
            e(ins.rhs, wanted, "the right operand", w)
        elif isinstance(ins, Unary):
            e(ins.src, NUMBER, "the operand", w)
        elif isinstance(ins, (Select, CondBranch)):
            e(ins.cond, INT, "the condition", w)
        elif isinstance(ins, Fail):
            e(ins.message, STRING, "the message", w)


def check_register_kinds(image: ModuleImage, fn: FunctionDef, callees: dict[str, Signature],
                         where: str) -> None:
    """Raises when a register holds values of two kinds or a use needs another kind."""
    kinds = _Kinds(image, fn, callees, where)
    kinds.solve()
    kinds.check_uses()


def unproven_results(image: ModuleImage, fn: FunctionDef,
                     callees: dict[str, Signature]) -> set[tuple[int, int]]:
    """(register, result position) of every `Return` operand the verifier could not prove to
    be what the signature promises (its kind is known only at run time: it came through an `r`
    value): an integer or float for `i`/`f`, a value a caller can hold for `r`. The
    translator checks those at run time, so a caller never receives a buffer where its
    signature says i64, nor a string where it says a tensor. `fn` must have passed
    `check_register_kinds`."""
    kinds = _Kinds(image, fn, callees, f"function '{fn.name}'")
    kinds.solve()
    return {(reg, n) for block in fn.blocks for ins in block.instructions
            if isinstance(ins, Return)
            for n, reg in enumerate(ins.values) if kinds.of(reg) == ANY}

"""Dataflow checks of one VM function, run by `module_verify` after the index checks:

- every register has one definition (SSA form) and is written before it is read on every
  path (definite assignment), so no instruction reads a register that holds nothing or a value
  another instruction replaced;
- every register holds one kind of value: an integer (`i`, also i1 as bool), a float (`f`), a
  reference (`r`: buffers, fences, strings, tuples, null) or `*`, a value whose kind is known
  only at run time (what an `r` import result such as `hal.buffer.load` may be). An integer
  argument of a call, a return value, an `Arith` operand or a global store must receive an
  integer register, a float one a float register.

IREE's VM keeps integer, float and reference registers in separate banks for the same reason:
a module that passes a float where a byte offset is expected is refused when it is loaded, not
met as a Python TypeError deep inside the HAL."""

from __future__ import annotations

from weir.errors import ModuleFormatError
from weir.format.element_types import BY_NAME
from weir.format.image import FunctionDef, ModuleImage, Signature
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

# Blocks x registers of one function: the definite-assignment sets cost that many bits.
MAX_BLOCK_REGISTERS = 1 << 28

# What a value of each calling-convention letter holds: `r` is any value the VM does not
# compute with itself (a buffer, a fence, but also what `hal.buffer.load` read, or a scalar the
# API passes through an `r` argument), so its kind is known only at run time.
_LETTER_KIND = {"i": "i", "I": "i", "f": "f", "F": "f", "r": "*"}
_BITWISE = frozenset({"and", "or", "xor", "shl", "shr"})
_COMPARE = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
_NUMERIC = frozenset({"i", "f", "*"})
_KIND_NAMES = {"i": "an integer", "f": "a float", "r": "a reference", "*": "a run-time value"}


def _err(where: str, message: str) -> ModuleFormatError:
    return ModuleFormatError(f"{where}: {message}")


def reads_writes(ins: Instruction) -> tuple[list[int], list[int]]:
    """The registers an instruction reads and writes (tuple operands read each element)."""
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
    raise AssertionError(f"unknown instruction {ins!r}")  # the index checks ran first


def _successors(fn: FunctionDef, b: int) -> list[int]:
    last = fn.blocks[b].instructions[-1]
    if isinstance(last, Branch):
        return [last.block]
    if isinstance(last, CondBranch):
        return [last.true_block, last.false_block]
    return []


def check_single_definition(fn: FunctionDef, where: str) -> None:
    """Each register has one definition (a block parameter or one instruction's result): VM code
    is in SSA form, one register per value, so an instruction that writes a register already
    defined elsewhere (a damaged destination) is refused rather than silently replacing a value."""
    defined: dict[int, str] = {}
    for b, block in enumerate(fn.blocks):
        sites = [(p, f"block {b} parameter") for p in block.params]
        for i, ins in enumerate(block.instructions):
            sites.extend((r, f"block {b} instruction {i}") for r in reads_writes(ins)[1])
        for reg, site in sites:
            if reg in defined:
                raise _err(f"{where} {site}", f"writes register {reg}, already written by "
                                              f"{defined[reg]}")
            defined[reg] = site


def check_definite_assignment(fn: FunctionDef, where: str) -> None:
    """Raises when some path reads a register before any instruction or branch wrote it."""
    nblocks = len(fn.blocks)
    if nblocks * max(fn.num_registers, 1) > MAX_BLOCK_REGISTERS:
        raise _err(where, f"{nblocks} blocks x {fn.num_registers} registers is too large to "
                          f"verify (at most {MAX_BLOCK_REGISTERS})")
    everything = (1 << fn.num_registers) - 1
    params = [sum(1 << p for p in set(b.params)) for b in fn.blocks]
    entry: list[int | None] = [None] * nblocks  # registers written on every path into a block
    entry[0] = params[0]
    work = [0]
    queued = {0}
    while work:
        b = work.pop()
        queued.discard(b)
        written = entry[b]
        assert written is not None
        for i, ins in enumerate(fn.blocks[b].instructions):
            reads, writes = reads_writes(ins)
            for r in reads:
                if not written >> r & 1:
                    raise _err(f"{where} block {b} instruction {i}",
                               f"reads register {r} before it is written on some path")
            for r in writes:
                written |= 1 << r
        for s in _successors(fn, b):
            incoming = (written | params[s]) & everything
            old = entry[s]
            new = incoming if old is None else old & incoming
            if new != old:
                entry[s] = new
                if s not in queued:
                    queued.add(s)
                    work.append(s)


class _Kinds:
    """The kind of every register, found by propagating kinds to a fixpoint."""

    def __init__(self, image: ModuleImage, fn: FunctionDef, callees: dict[str, Signature],
                 where: str) -> None:
        self.image = image
        self.fn = fn
        self.callees = callees
        self.where = where
        self.kind: dict[int, str] = {}
        self.changed = False

    def join(self, reg: int, kind: str | None, where: str) -> None:
        if kind is None:
            return
        old = self.kind.get(reg)
        if old == kind or old == "*":
            return
        if old is None or kind == "*":
            self.kind[reg] = kind
            self.changed = True
            return
        raise _err(where, f"register {reg} holds {_KIND_NAMES[old]} and {_KIND_NAMES[kind]}")

    def result(self, ins: Instruction) -> list[tuple[int, str | None]]:
        """(register, kind) for what `ins` writes; None while an operand's kind is unknown."""
        k = self.kind.get
        if isinstance(ins, Const):
            v = ins.value
            return [(ins.dst, "i" if type(v) in (int, bool) else "f" if type(v) is float else "r")]
        if isinstance(ins, Move):
            return [(ins.dst, k(ins.src))]
        if isinstance(ins, Call):
            sig = self.callees[ins.callee]
            return [(d, _LETTER_KIND[t]) for d, t in zip(ins.dsts, sig.results)]
        if isinstance(ins, GlobalLoad):
            return [(ins.dst, _LETTER_KIND[self.image.globals[ins.global_index].type])]
        if isinstance(ins, Rodata):
            return [(ins.dst, "r")]
        if isinstance(ins, Binary):
            a, b = k(ins.lhs), k(ins.rhs)
            if ins.op in _COMPARE or ins.op in _BITWISE:
                return [(ins.dst, "i")]
            if a is None or b is None:
                return [(ins.dst, None)]
            return [(ins.dst, "f" if "f" in (a, b) else "*" if "*" in (a, b) else "i")]
        if isinstance(ins, Unary):
            if ins.op in ("not", "to_int"):
                return [(ins.dst, "i")]
            return [(ins.dst, "f" if ins.op == "to_float" else k(ins.src))]
        if isinstance(ins, Arith):
            return [(ins.dst, "f" if BY_NAME[ins.dtype].is_float else "i")]
        if isinstance(ins, Select):
            a, b = k(ins.true_value), k(ins.false_value)
            if a is None or b is None:
                return [(ins.dst, None)]
            return [(ins.dst, a if a == b else "*" if "*" in (a, b) else "conflict")]
        return []

    def solve(self) -> None:
        fn = self.fn
        for p, t in zip(fn.blocks[0].params, fn.signature.args):
            self.join(p, _LETTER_KIND[t], f"{self.where} entry block")
        self.changed = True
        while self.changed:
            self.changed = False
            for b, block in enumerate(fn.blocks):
                for i, ins in enumerate(block.instructions):
                    w = f"{self.where} block {b} instruction {i}"
                    for reg, kind in self.result(ins):
                        if kind == "conflict":
                            raise _err(w, "select of values of two kinds")
                        self.join(reg, kind, w)
                    for target, args in _branch_args(ins):
                        for param, arg in zip(fn.blocks[target].params, args):
                            self.join(param, self.kind.get(arg), w)

    def expect(self, reg: int, wanted: str, what: str, where: str) -> None:
        """`wanted`: a kind, or "n" for any number."""
        kind = self.kind.get(reg, "*")
        ok = kind == "*" or kind == wanted or (wanted == "n" and kind in _NUMERIC)
        if not ok:
            expected = "a number" if wanted == "n" else _KIND_NAMES[wanted]
            raise _err(where, f"{what} must be {expected}, register {reg} holds "
                              f"{_KIND_NAMES[kind]}")

    def check_uses(self) -> None:
        fn = self.fn
        for b, block in enumerate(fn.blocks):
            for i, ins in enumerate(block.instructions):
                self.check(ins, f"{self.where} block {b} instruction {i}")

    def check(self, ins: Instruction, w: str) -> None:  # noqa: C901 (one case per instruction)
        e = self.expect
        if isinstance(ins, Call):
            sig = self.callees[ins.callee]
            for n, (arg, t) in enumerate(zip(ins.args, sig.args)):
                if t != "r":
                    if isinstance(arg, tuple):
                        raise _err(w, f"argument {n} of '{ins.callee}' must be "
                                      f"{_KIND_NAMES[_LETTER_KIND[t]]}, not a tuple")
                    e(arg, _LETTER_KIND[t], f"argument {n} of '{ins.callee}'", w)
        elif isinstance(ins, Return):
            for n, (reg, t) in enumerate(zip(ins.values, self.fn.signature.results)):
                if t != "r":
                    e(reg, _LETTER_KIND[t], f"result {n}", w)
        elif isinstance(ins, GlobalStore):
            t = self.image.globals[ins.global_index].type
            if t != "r":
                e(ins.src, _LETTER_KIND[t], f"the value stored to global {ins.global_index}", w)
        elif isinstance(ins, Arith):
            kind = "f" if BY_NAME[ins.arg_dtype].is_float else "i"
            for n, reg in enumerate(ins.args):
                e(reg, "i" if ins.op == "select" and n == 0 else kind, f"operand {n}", w)
        elif isinstance(ins, Binary):
            wanted = "i" if ins.op in _BITWISE else "n"
            e(ins.lhs, wanted, "the left operand", w)
            e(ins.rhs, wanted, "the right operand", w)
        elif isinstance(ins, Unary):
            e(ins.src, "n", "the operand", w)
        elif isinstance(ins, Select):
            e(ins.cond, "i", "the condition", w)
        elif isinstance(ins, CondBranch):
            e(ins.cond, "i", "the condition", w)


def _branch_args(ins: Instruction) -> list[tuple[int, tuple[int, ...]]]:
    if isinstance(ins, Branch):
        return [(ins.block, ins.args)]
    if isinstance(ins, CondBranch):
        return [(ins.true_block, ins.true_args), (ins.false_block, ins.false_args)]
    return []


def check_register_kinds(image: ModuleImage, fn: FunctionDef, callees: dict[str, Signature],
                         where: str) -> None:
    """Raises when a register holds values of two kinds or a use needs another kind."""
    kinds = _Kinds(image, fn, callees, where)
    kinds.solve()
    kinds.check_uses()


def unproven_results(image: ModuleImage, fn: FunctionDef,
                     callees: dict[str, Signature]) -> set[tuple[int, int]]:
    """(register, result position) of every `Return` operand the verifier could not prove to
    be the integer or float the signature promises (its kind is `*`: it came through an `r`
    value). The translator checks those at run time, so a caller never receives a buffer
    where its signature says i64. `fn` must have passed `check_register_kinds`."""
    kinds = _Kinds(image, fn, callees, f"function '{fn.name}'")
    kinds.solve()
    return {(reg, n) for block in fn.blocks for ins in block.instructions
            if isinstance(ins, Return)
            for n, (reg, t) in enumerate(zip(ins.values, fn.signature.results))
            if t != "r" and kinds.kind.get(reg, "*") == "*"}

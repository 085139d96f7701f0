"""Dataflow checks of one VM function, run by `module_verify` after the index checks: every
register has one definition (SSA form) and is written before it is read on every path (definite
assignment), so no instruction reads a register that holds nothing or a value another
instruction replaced. What kind of value each register holds is checked next (vm_kinds.py)."""

from __future__ import annotations

from weir.errors import ModuleFormatError
from weir.format.image import FunctionDef
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
        return [ins.message, *ins.values], []
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

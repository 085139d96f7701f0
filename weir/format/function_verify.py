"""The checks of one VM function of a `ModuleImage`: every register, block, global, rodata and
callee index in range, every block well terminated, every call's and return's arity matching its
signature, every `Arith` typed as its op needs; then its dataflow (vm_dataflow.py) and the kinds
its registers hold (vm_kinds.py). The runtime translates VM code into Python only after this
passed, so the generated code can rely on it (it splices nothing but these verified integers)."""

from __future__ import annotations

from weir.errors import ModuleFormatError
from weir.format.element_types import BY_NAME
from weir.format.image import FunctionDef, ModuleImage, Signature
from weir.format.json_fields import printable
from weir.format.kernel_codec import (
    CAST_OPS,
    CMPF_PREDICATES,
    CMPI_PREDICATES,
    scalar_op_arity,
)
from weir.format.kernel_description import HOST_SCALAR_OPS
from weir.format.vm_dataflow import check_definite_assignment, check_single_definition
from weir.format.vm_isa import (
    BINARY_OPS,
    TERMINATORS,
    UNARY_OPS,
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
from weir.format.vm_kinds import check_register_kinds

# Generous bounds that keep a hostile file from making the translator emit gigabytes of code
# (or the dispatcher of one function test millions of block numbers per branch).
MAX_REGISTERS = 1 << 20
MAX_BLOCKS = 1 << 16
MAX_INSTRUCTIONS = 1 << 20  # per function

# The integer ops of `Arith`; every other non-cast op but cmpi/cmpf/select is a float op.
_INT_ARITH = frozenset({"addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "andi", "ori",
                        "xori", "shli", "shrsi", "shrui", "maxsi", "minsi", "maxui", "minui",
                        "absi", "floordivsi", "ceildivsi", "ceildivui"})
# Casts by (operand kind, result kind): "f" float, "i" integer (i1 and index included).
_CAST_KINDS = {"extf": "ff", "truncf": "ff", "sitofp": "if", "uitofp": "if", "fptosi": "fi",
               "fptoui": "fi", "extsi": "ii", "extui": "ii", "trunci": "ii", "index_cast": "ii",
               "index_castui": "ii"}


def _err(where: str, message: str) -> ModuleFormatError:
    return ModuleFormatError(f"{where}: {message}")


def is_index(value: object) -> bool:
    """A table index or count from the file: an int (not a bool), not negative."""
    return type(value) is int and value >= 0  # noqa: E721 (bool is not an index)


def parse_signature(sig: object, where: str) -> Signature:
    """The signature re-read from its text: an image built in memory is checked as strictly
    as one read from a file."""
    if not isinstance(sig, Signature):
        raise _err(where, "signature is not a Signature")
    try:
        return Signature.parse(sig.cconv)
    except (ValueError, TypeError) as e:
        raise _err(where, str(e)) from None


def verify_function(image: ModuleImage, fn: FunctionDef, callees: dict[str, Signature]) -> None:
    """Raises `ModuleFormatError` on the first problem in `fn`, naming its block and
    instruction."""
    where_fn = f"function {printable(fn.name)}"
    sig = parse_signature(fn.signature, where_fn)
    nreg = fn.num_registers
    if not is_index(nreg) or nreg > MAX_REGISTERS:
        raise _err(where_fn, f"num_registers {nreg!r} out of range (at most {MAX_REGISTERS})")
    if not fn.blocks:
        raise _err(where_fn, "has no blocks")
    nblocks = len(fn.blocks)
    if nblocks > MAX_BLOCKS:
        raise _err(where_fn, f"{nblocks} blocks (at most {MAX_BLOCKS})")
    ninstructions = sum(len(b.instructions) for b in fn.blocks)
    if ninstructions > MAX_INSTRUCTIONS:
        raise _err(where_fn, f"{ninstructions} instructions (at most {MAX_INSTRUCTIONS})")

    def reg(r: object, where: str) -> None:
        if not is_index(r) or r >= nreg:  # type: ignore[operator]
            raise _err(where, f"register {r!r} out of range (function has {nreg} register(s))")

    def target(block: object, args: tuple[int, ...], where: str) -> None:
        if not is_index(block) or block >= nblocks:  # type: ignore[operator]
            raise _err(where, f"branch to block {block!r} out of range ({nblocks} block(s))")
        for a in args:
            reg(a, where)
        nparams = len(fn.blocks[block].params)  # type: ignore[index]
        if len(args) != nparams:
            raise _err(where, f"branch passes {len(args)} argument(s) to block {block} "
                              f"which has {nparams} parameter(s)")

    for b, block in enumerate(fn.blocks):
        wb = f"{where_fn} block {b}"
        for p in block.params:
            reg(p, wb + " params")
        if len(set(block.params)) != len(block.params):
            raise _err(wb, "block parameters must be distinct registers")
        if not block.instructions:
            raise _err(wb, "is empty (every block must end with a terminator)")
        for i, ins in enumerate(block.instructions):
            w = f"{wb} instruction {i}"
            is_last = i == len(block.instructions) - 1
            if isinstance(ins, TERMINATORS) != is_last:
                raise _err(w, "terminator in the middle of a block" if not is_last
                           else "block does not end with a terminator (branch/return/fail)")
            _verify_instruction(image, ins, w, reg, target, callees, sig)
    if len(fn.blocks[0].params) != len(sig.args):
        raise _err(where_fn, f"entry block has {len(fn.blocks[0].params)} parameter(s) but the "
                             f"signature {sig.cconv} has {len(sig.args)} argument(s)")
    check_single_definition(fn, where_fn)
    check_definite_assignment(fn, where_fn)
    check_register_kinds(image, fn, callees, where_fn)


def _verify_instruction(image: ModuleImage, ins: Instruction, w: str, reg, target,  # type: ignore[no-untyped-def]
                        callees: dict[str, Signature], sig: Signature) -> None:
    if isinstance(ins, Const):
        reg(ins.dst, w)
        if ins.value is not None and type(ins.value) not in (int, float, str, bool):
            raise _err(w, f"constant {printable(ins.value)} is not a scalar")
        if type(ins.value) is str and not ins.value.isprintable():
            raise _err(w, f"constant string {printable(ins.value)} holds unprintable characters")
        if type(ins.value) is int and not -(1 << 63) <= ins.value < 1 << 64:
            raise _err(w, f"integer constant {printable(ins.value)} does not fit 64 bits")
    elif isinstance(ins, Move):
        reg(ins.dst, w)
        reg(ins.src, w)
    elif isinstance(ins, Call):
        for d in ins.dsts:
            reg(d, w)
        for a in ins.args:
            if isinstance(a, tuple):
                for x in a:
                    reg(x, w)
            else:
                reg(a, w)
        callee = callees.get(ins.callee) if isinstance(ins.callee, str) else None
        if callee is None:
            raise _err(w, f"call to {printable(ins.callee)}, which is neither a function of this module "
                          f"nor a declared import")
        if len(ins.args) != len(callee.args):
            raise _err(w, f"call to {printable(ins.callee)} passes {len(ins.args)} argument(s), its "
                          f"signature {callee.cconv} takes {len(callee.args)}")
        if len(ins.dsts) != len(callee.results):
            raise _err(w, f"call to {printable(ins.callee)} expects {len(ins.dsts)} result(s), its "
                          f"signature {callee.cconv} returns {len(callee.results)}")
    elif isinstance(ins, GlobalLoad):
        reg(ins.dst, w)
        if not is_index(ins.global_index) or ins.global_index >= len(image.globals):
            raise _err(w, f"global {ins.global_index!r} out of range ({len(image.globals)} global(s))")
    elif isinstance(ins, GlobalStore):
        reg(ins.src, w)
        if not is_index(ins.global_index) or ins.global_index >= len(image.globals):
            raise _err(w, f"global {ins.global_index!r} out of range ({len(image.globals)} global(s))")
    elif isinstance(ins, Rodata):
        reg(ins.dst, w)
        if not is_index(ins.rodata_index) or ins.rodata_index >= len(image.rodata):
            raise _err(w, f"rodata {ins.rodata_index!r} out of range ({len(image.rodata)} rodata)")
    elif isinstance(ins, Binary):
        if ins.op not in BINARY_OPS:
            raise _err(w, f"unknown binary op {ins.op!r}")
        reg(ins.dst, w)
        reg(ins.lhs, w)
        reg(ins.rhs, w)
    elif isinstance(ins, Unary):
        if ins.op not in UNARY_OPS:
            raise _err(w, f"unknown unary op {ins.op!r}")
        reg(ins.dst, w)
        reg(ins.src, w)
    elif isinstance(ins, Arith):
        reg(ins.dst, w)
        for r in ins.args:
            reg(r, w)
        _verify_arith(ins, w)
    elif isinstance(ins, Select):
        for r in (ins.dst, ins.cond, ins.true_value, ins.false_value):
            reg(r, w)
    elif isinstance(ins, Branch):
        target(ins.block, ins.args, w)
    elif isinstance(ins, CondBranch):
        reg(ins.cond, w)
        target(ins.true_block, ins.true_args, w)
        target(ins.false_block, ins.false_args, w)
    elif isinstance(ins, Return):
        for r in ins.values:
            reg(r, w)
        if len(ins.values) != len(sig.results):
            raise _err(w, f"returns {len(ins.values)} value(s), the signature {sig.cconv} "
                          f"has {len(sig.results)} result(s)")
    elif isinstance(ins, Fail):
        reg(ins.message, w)
        for r in ins.values:
            reg(r, w)
    else:
        raise _err(w, f"unknown instruction {type(ins).__name__}")


def _kind(dtype: str) -> str:
    return "f" if BY_NAME[dtype].is_float else "i"


def _verify_arith(ins: Arith, w: str) -> None:
    """The op is a host scalar op, its types exist and fit it, its operand count and predicate
    are right: the runtime then computes it without meeting a type it cannot handle."""
    op = ins.op
    if op not in HOST_SCALAR_OPS:
        raise _err(w, f"unknown arith op {op!r}")
    for what, t in (("type", ins.dtype), ("operand type", ins.arg_dtype)):
        if not isinstance(t, str) or t not in BY_NAME:
            raise _err(w, f"'{op}': unknown {what} {t!r}")
    if len(ins.args) != scalar_op_arity(op):
        raise _err(w, f"'{op}' takes {scalar_op_arity(op)} operand(s), got {len(ins.args)}")
    src, dst = _kind(ins.arg_dtype), _kind(ins.dtype)
    predicates = {"cmpi": CMPI_PREDICATES, "cmpf": CMPF_PREDICATES}.get(op)
    if predicates is not None:
        if ins.attr not in predicates:
            raise _err(w, f"'{op}': unknown predicate {ins.attr!r}")
        ok = ins.dtype == "i1" and src == ("i" if op == "cmpi" else "f")
    elif ins.attr is not None:
        raise _err(w, f"'{op}' takes no attribute, got {ins.attr!r}")
    elif op == "bitcast":
        ok = BY_NAME[ins.dtype].bits == BY_NAME[ins.arg_dtype].bits
    elif op in CAST_OPS:
        ok = _CAST_KINDS[op] == src + dst
    else:
        expected = "i" if op in _INT_ARITH else None if op == "select" else "f"
        ok = ins.dtype == ins.arg_dtype and expected in (None, src)
    if not ok:
        raise _err(w, f"'{op}' cannot take {ins.arg_dtype} to {ins.dtype}")

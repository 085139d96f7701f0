"""Cross-reference checks on a `ModuleImage`: every register, block, global, rodata, segment,
function and import index in range, every block well terminated, every call's arity matching its
callee. The runtime translates VM code into Python only after this passed, so the generated code
can rely on it (it splices nothing but these verified integers)."""

from __future__ import annotations

import weakref

from weir.errors import ModuleFormatError
from weir.format.element_types import BY_NAME
from weir.format.image import CALL_MODELS, VALUE_TYPES, FunctionDef, ModuleImage, Signature
from weir.format.reference_codec import (
    CAST_OPS,
    CMPF_PREDICATES,
    CMPI_PREDICATES,
    scalar_op_arity,
)
from weir.format.json_fields import printable
from weir.format.payload_check import check_payload
from weir.format.reference_kernel import HOST_SCALAR_OPS
from weir.format.vm_dataflow import (
    check_definite_assignment,
    check_register_kinds,
    check_single_definition,
)
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

# Generous bounds that keep a hostile file from making the translator emit gigabytes of code
# (or the dispatcher of one function test millions of block numbers per branch).
MAX_REGISTERS = 1 << 20
MAX_BLOCKS = 1 << 16
MAX_INSTRUCTIONS = 1 << 20  # per function
# The reflection key that types scalar arguments and results at the API (runtime/abi_scalars.py).
SCALAR_TYPES_KEY = "weir.abi.scalar_types"

# The integer ops of `Arith`; every other non-cast op but cmpi/cmpf/select is a float op.
_INT_ARITH = frozenset({"addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "andi", "ori",
                        "xori", "shli", "shrsi", "shrui", "maxsi", "minsi", "maxui", "minui",
                        "absi"})
# Casts by (operand kind, result kind): "f" float, "i" integer (i1 and index included).
_CAST_KINDS = {"extf": "ff", "truncf": "ff", "sitofp": "if", "uitofp": "if", "fptosi": "fi",
               "fptoui": "fi", "extsi": "ii", "extui": "ii", "trunci": "ii", "index_cast": "ii"}


def _err(where: str, message: str) -> ModuleFormatError:
    return ModuleFormatError(f"{where}: {message}")


def _is_index(value: object) -> bool:
    return type(value) is int and value >= 0  # noqa: E721 (bool is not an index)


def _check_unique(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ModuleFormatError(f"duplicate {what} name {printable(name)}")
        seen.add(name)


def _check_name(name: object, where: str) -> None:
    """Names appear in messages and lookups: a non-empty printable string (no newline)."""
    if not isinstance(name, str) or not name or not name.isprintable():
        raise _err(where, f"name {printable(name)} is not a non-empty printable string")


def _signature_ok(sig: object, where: str) -> Signature:
    if not isinstance(sig, Signature):
        raise _err(where, "signature is not a Signature")
    try:
        return Signature.parse(sig.cconv)
    except (ValueError, TypeError) as e:
        raise _err(where, str(e)) from None


def callee_signatures(image: ModuleImage) -> dict[str, Signature]:
    """Everything a `Call` may name: this module's functions, then its imports."""
    table: dict[str, Signature] = {}
    for imp in image.imports:
        table[imp.name] = imp.signature
    for fn in image.functions:
        table[fn.name] = fn.signature
    return table


# Images that passed `verify_image`, by identity. An image is frozen all the way down, so one
# that passed stays valid, and the loader (deserialize, then translate) need not verify it twice.
_VERIFIED: dict[int, weakref.ref[ModuleImage]] = {}


def verify_image(image: ModuleImage) -> None:
    """Raises `ModuleFormatError` on the first problem found."""
    _verify(image)
    key = id(image)
    _VERIFIED[key] = weakref.ref(image, lambda _: _VERIFIED.pop(key, None))


def ensure_verified(image: ModuleImage) -> None:
    """`verify_image`, unless this very image object already passed it."""
    ref = _VERIFIED.get(id(image))
    if ref is None or ref() is not image:
        verify_image(image)


def _verify(image: ModuleImage) -> None:
    if not isinstance(image, ModuleImage):
        raise ModuleFormatError("not a module image")
    _check_name(image.name, "module")
    if "." in image.name:
        raise ModuleFormatError(f"bad module name {printable(image.name)}: must not contain '.'")
    for k, dep in enumerate(image.dependencies):
        _check_name(dep, f"dependencies[{k}]")
    _check_unique(list(image.dependencies), "dependency")
    for k, d in enumerate(image.devices):
        _check_name(d.name, f"devices[{k}]")
        _check_name(d.kind, f"devices[{k}].kind")
    _check_unique([d.name for d in image.devices], "device")
    nseg = len(image.segments)

    for k, imp in enumerate(image.imports):
        where = f"imports[{k}]"
        _check_name(imp.name, where)
        if "." not in imp.name.strip("."):
            raise _err(where, f"import name {printable(imp.name)} is not 'module.function'")
        sig = _signature_ok(imp.signature, where)
        if imp.model not in CALL_MODELS:
            raise _err(where, f"unknown call model {printable(imp.model)}")
        if not isinstance(imp.optional, bool):
            raise _err(where, "optional must be a bool")
        _check_fences(imp.model, sig, where)
    _check_unique([i.name for i in image.imports], "import")

    for k, fn in enumerate(image.functions):
        _check_name(fn.name, f"functions[{k}]")
    _check_unique([f.name for f in image.functions], "function")
    import_names = {i.name for i in image.imports}
    for fn in image.functions:
        if fn.name in import_names:
            raise ModuleFormatError(f"function {printable(fn.name)} has the same name as an import")

    for k, g in enumerate(image.globals):
        _check_name(g.name, f"globals[{k}]")
        if not isinstance(g.type, str) or g.type not in VALUE_TYPES:
            raise _err(f"globals[{k}]", f"unknown type {printable(g.type)}")
    callees = callee_signatures(image)
    for fn in image.functions:
        _verify_function(image, fn, callees)

    for k, exp in enumerate(image.exports):
        _check_name(exp.name, f"exports[{k}]")
        where = f"exports[{k}] {printable(exp.name)}"
        if not _is_index(exp.function) or exp.function >= len(image.functions):
            raise _err(where, f"function index {exp.function!r} out of range "
                              f"({len(image.functions)} function(s))")
        if exp.model not in CALL_MODELS:
            raise _err(where, f"unknown call model {printable(exp.model)}")
        sig = image.functions[exp.function].signature
        _check_fences(exp.model, sig, where)
        for pair in exp.reflection:
            if len(pair) != 2 or not all(isinstance(s, str) and s.isprintable() for s in pair):
                raise _err(where, "reflection entries must be pairs of printable strings")
        keys = [key for key, _ in exp.reflection]
        if len(set(keys)) != len(keys):
            raise _err(where, "a reflection key appears twice")
        _check_scalar_types(exp.reflection, exp.model, sig, where)
    _check_unique([e.name for e in image.exports], "export")

    for k, g in enumerate(image.globals):
        where = f"globals[{k}] {printable(g.name)}"
        if not isinstance(g.type, str) or g.type not in VALUE_TYPES:
            raise _err(where, f"unknown type {g.type!r}")
        if g.initial is not None:
            if g.type == "r":
                raise _err(where, "a ref global cannot have a numeric initial value")
            ok = (type(g.initial) is int and -(1 << 63) <= g.initial < 1 << 64) \
                if g.type in "iI" else type(g.initial) is float
            if not ok:
                raise _err(where, f"initial value {g.initial!r} does not fit type '{g.type}'")

    for k, r in enumerate(image.rodata):
        _check_name(r.name, f"rodata[{k}]")
        where = f"rodata[{k}] {printable(r.name)}"
        if not _is_index(r.segment) or r.segment >= nseg:
            raise _err(where, f"segment {r.segment!r} out of range ({nseg} segment(s))")
        if not _is_index(r.alignment) or r.alignment == 0 or r.alignment & (r.alignment - 1) \
                or r.alignment > 64:
            raise _err(where, f"alignment {r.alignment!r} is not a power of two <= 64")

    for k, x in enumerate(image.executables):
        _check_name(x.name, f"executables[{k}]")
        where = f"executables[{k}] {printable(x.name)}"
        if not x.variants:
            raise _err(where, "no variants")
        for n, e in enumerate(x.entry_points):
            _check_name(e, f"{where} entry point {n}")
        _check_unique(list(x.entry_points), f"{where} entry point")
        for n, v in enumerate(x.variants):
            _check_name(v.target, f"{where} variant {n} target")
            _check_name(v.format, f"{where} variant {n} format")
            if not _is_index(v.segment) or v.segment >= nseg:
                raise _err(where, f"variant {printable(v.target)} segment {v.segment!r} out of "
                                  f"range ({nseg} segment(s))")
            check_payload(v.format, image.segments[v.segment], x.entry_points,
                          f"{where} variant {printable(v.target)}")
    _check_unique([x.name for x in image.executables], "executable")
    _check_segment_use(image)

    if image.initializer is not None:
        names = {f.name: f for f in image.functions}
        init = names.get(image.initializer)
        if init is None:
            raise ModuleFormatError(f"initializer {printable(image.initializer)} is not a "
                                    f"function of module {printable(image.name)}")
        if init.signature.args or init.signature.results:
            raise ModuleFormatError(f"initializer {printable(image.initializer)} must take and "
                                    f"return nothing, has signature {init.signature.cconv}")


def _check_fences(model: str, sig: Signature, where: str) -> None:
    """A coarse-fences function takes a wait and a signal fence as its last two arguments."""
    if model == "coarse-fences" and sig.args[-2:] != ("r", "r"):
        raise _err(where, f"a coarse-fences function must end its arguments with two fences "
                          f"(rr), its signature is {sig.cconv}")


def _check_scalar_types(reflection: tuple[tuple[str, str], ...], model: str, sig: Signature,
                        where: str) -> None:
    """The scalar-types reflection the API relies on (`i8,r;f16`: arguments;results) parses and
    fits the signature: a damaged one is an error here, not advice silently dropped later."""
    text = dict(reflection).get(SCALAR_TYPES_KEY)
    if text is None:
        return
    user_args = sig.args[:-2] if model == "coarse-fences" else sig.args
    parts = text.split(";")
    if len(parts) != 2:
        raise _err(where, f"{SCALAR_TYPES_KEY} {printable(text)} is not 'arguments;results'")
    for part, letters, what in ((parts[0], user_args, "argument"),
                                (parts[1], sig.results, "result")):
        types = [t for t in part.split(",") if t]
        if len(types) != len(letters):
            raise _err(where, f"{SCALAR_TYPES_KEY} lists {len(types)} {what}(s), the signature "
                              f"{sig.cconv} has {len(letters)}")
        for t, letter in zip(types, letters):
            if t == "r" and letter == "r":
                continue
            etype = BY_NAME.get(t)
            if etype is None or letter == "r" or (letter in "fF") != etype.is_float:
                raise _err(where, f"{SCALAR_TYPES_KEY}: {printable(t)} does not describe a "
                                  f"'{letter}' {what}")


def _check_segment_use(image: ModuleImage) -> None:
    """Every segment is used, and an executable payload by exactly one variant and nothing
    else: a segment table that lets two executables share a payload (or a constant read a
    payload) is damaged, even when each index is in range."""
    users: dict[int, list[str]] = {}
    for r in image.rodata:
        users.setdefault(r.segment, []).append("rodata")
    for x in image.executables:
        for v in x.variants:
            users.setdefault(v.segment, []).append("executable")
    for k in range(len(image.segments)):
        kinds = users.get(k, [])
        if not kinds:
            raise ModuleFormatError(f"segments[{k}]: not used by any rodata or executable")
        if "executable" in kinds and len(kinds) > 1:
            raise ModuleFormatError(f"segments[{k}]: an executable payload is also used as "
                                    f"{len(kinds) - 1} other rodata or payload(s)")


def _verify_function(image: ModuleImage, fn: FunctionDef, callees: dict[str, Signature]) -> None:
    where_fn = f"function {printable(fn.name)}"
    sig = _signature_ok(fn.signature, where_fn)
    nreg = fn.num_registers
    if not _is_index(nreg) or nreg > MAX_REGISTERS:
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
        if not _is_index(r) or r >= nreg:  # type: ignore[operator]
            raise _err(where, f"register {r!r} out of range (function has {nreg} register(s))")

    def target(block: object, args: tuple[int, ...], where: str) -> None:
        if not _is_index(block) or block >= nblocks:  # type: ignore[operator]
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
        if not _is_index(ins.global_index) or ins.global_index >= len(image.globals):
            raise _err(w, f"global {ins.global_index!r} out of range ({len(image.globals)} global(s))")
    elif isinstance(ins, GlobalStore):
        reg(ins.src, w)
        if not _is_index(ins.global_index) or ins.global_index >= len(image.globals):
            raise _err(w, f"global {ins.global_index!r} out of range ({len(image.globals)} global(s))")
    elif isinstance(ins, Rodata):
        reg(ins.dst, w)
        if not _is_index(ins.rodata_index) or ins.rodata_index >= len(image.rodata):
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

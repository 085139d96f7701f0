"""Cross-reference checks on a `ModuleImage`: names, imports, exports, globals, rodata,
executables and segments, every index in range; each function's code is checked by
function_verify.py. The runtime translates VM code into Python only after this passed, so the
generated code can rely on it (it splices nothing but verified integers)."""

from __future__ import annotations

import weakref

from weir.errors import ModuleFormatError
from weir.format.element_types import BY_NAME
from weir.format.function_verify import is_index, parse_signature, verify_function
from weir.format.image import CALL_MODELS, VALUE_TYPES, ModuleImage, Signature
from weir.format.json_fields import printable
from weir.format.payload_check import check_payload

# The reflection key that types scalar arguments and results at the API (runtime/abi_scalars.py).
SCALAR_TYPES_KEY = "weir.abi.scalar_types"


def _err(where: str, message: str) -> ModuleFormatError:
    return ModuleFormatError(f"{where}: {message}")


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
        sig = parse_signature(imp.signature, where)
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
        verify_function(image, fn, callees)

    for k, exp in enumerate(image.exports):
        _check_name(exp.name, f"exports[{k}]")
        where = f"exports[{k}] {printable(exp.name)}"
        if not is_index(exp.function) or exp.function >= len(image.functions):
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
        if not is_index(r.segment) or r.segment >= nseg:
            raise _err(where, f"segment {r.segment!r} out of range ({nseg} segment(s))")
        if not is_index(r.alignment) or r.alignment == 0 or r.alignment & (r.alignment - 1) \
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
            if not is_index(v.segment) or v.segment >= nseg:
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

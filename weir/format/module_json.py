"""The JSON form of a `ModuleImage` (everything but the segment bytes).

Decoding checks the *shape* of every field (types, list lengths, known opcode names); the
cross-references between fields are checked afterwards by `module_verify.verify_image`, which the
runtime also runs on images built in memory.
"""

from __future__ import annotations

from typing import Any

from weir.format import json_fields as jf
from weir.format.image import (
    CALL_MODELS,
    VALUE_TYPES,
    Block,
    DeviceDef,
    ExecutableDef,
    ExecutableVariant,
    ExportDef,
    FunctionDef,
    GlobalDef,
    ImportDef,
    ModuleImage,
    RodataDef,
    Signature,
)
from weir.format.vm_isa import (
    BINARY_OPS,
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
    Operand,
    Return,
    Rodata,
    Select,
    Unary,
)


# ----------------------------------------------------------------------------------- encoding


def _operand_json(op: Operand) -> Any:
    return list(op) if isinstance(op, tuple) else op


def instruction_to_json(ins: Instruction) -> list[Any]:
    """A list headed by the opcode name, the stable on-disk spelling of each instruction."""
    if isinstance(ins, Const):
        return ["const", ins.dst, ins.value]
    if isinstance(ins, Move):
        return ["move", ins.dst, ins.src]
    if isinstance(ins, Call):
        return ["call", list(ins.dsts), ins.callee, [_operand_json(a) for a in ins.args]]
    if isinstance(ins, GlobalLoad):
        return ["global_load", ins.dst, ins.global_index]
    if isinstance(ins, GlobalStore):
        return ["global_store", ins.global_index, ins.src]
    if isinstance(ins, Rodata):
        return ["rodata", ins.dst, ins.rodata_index]
    if isinstance(ins, Binary):
        return ["binary", ins.dst, ins.op, ins.lhs, ins.rhs]
    if isinstance(ins, Unary):
        return ["unary", ins.dst, ins.op, ins.src]
    if isinstance(ins, Arith):
        return ["arith", ins.dst, ins.op, ins.dtype, list(ins.args), ins.arg_dtype, ins.attr]
    if isinstance(ins, Select):
        return ["select", ins.dst, ins.cond, ins.true_value, ins.false_value]
    if isinstance(ins, Branch):
        return ["branch", ins.block, list(ins.args)]
    if isinstance(ins, CondBranch):
        return ["cond_branch", ins.cond, ins.true_block, list(ins.true_args), ins.false_block,
                list(ins.false_args)]
    if isinstance(ins, Return):
        return ["return", list(ins.values)]
    if isinstance(ins, Fail):
        return ["fail", ins.message] + ([list(ins.values)] if ins.values else [])
    raise TypeError(f"not a VM instruction: {ins!r}")


def image_to_json(image: ModuleImage, segments: list[list[int]]) -> dict[str, Any]:
    return {
        "name": image.name,
        "dependencies": list(image.dependencies),
        "imports": [
            {"name": i.name, "signature": i.signature.cconv, "model": i.model,
             "optional": i.optional}
            for i in image.imports
        ],
        "exports": [
            {"name": e.name, "function": e.function, "model": e.model,
             "reflection": [[k, v] for k, v in e.reflection]}
            for e in image.exports
        ],
        "functions": [
            {
                "name": f.name,
                "signature": f.signature.cconv,
                "num_registers": f.num_registers,
                "blocks": [
                    {"params": list(b.params),
                     "instructions": [instruction_to_json(i) for i in b.instructions]}
                    for b in f.blocks
                ],
            }
            for f in image.functions
        ],
        "globals": [{"name": g.name, "type": g.type, "initial": g.initial} for g in image.globals],
        "rodata": [{"name": r.name, "segment": r.segment, "alignment": r.alignment}
                   for r in image.rodata],
        "executables": [
            {"name": x.name, "entry_points": list(x.entry_points),
             "variants": [{"target": v.target, "format": v.format, "segment": v.segment}
                          for v in x.variants]}
            for x in image.executables
        ],
        "devices": [{"name": d.name, "kind": d.kind} for d in image.devices],
        "initializer": image.initializer,
        "segments": segments,
    }


# ----------------------------------------------------------------------------------- decoding


def _signature(value: Any, where: str) -> Signature:
    text = jf.as_str(value, where)
    try:
        return Signature.parse(text)
    except ValueError as e:
        raise jf.fail(where, str(e)) from None


def _operand(value: Any, where: str) -> Operand:
    if isinstance(value, list):
        return jf.as_int_list(value, where)
    return jf.as_int(value, where)


def _opcode_arity(items: list[Any], n: int, where: str) -> None:
    if len(items) != n:
        raise jf.fail(where, f"{jf.printable(items[0])} takes {n - 1} field(s), got "
                             f"{len(items) - 1}")


def instruction_from_json(value: Any, where: str) -> Instruction:
    items = jf.as_list(value, where)
    if not items:
        raise jf.fail(where, "empty instruction")
    if not isinstance(items[0], str):
        raise jf.fail(where, "instruction does not start with an opcode name")
    opcode = jf.as_str(items[0], where + ".opcode")
    i = jf.as_int
    if opcode == "const":
        _opcode_arity(items, 3, where)
        return Const(i(items[1], where + ".dst"), jf.as_scalar(items[2], where + ".value"))
    if opcode == "move":
        _opcode_arity(items, 3, where)
        return Move(i(items[1], where + ".dst"), i(items[2], where + ".src"))
    if opcode == "call":
        _opcode_arity(items, 4, where)
        args = jf.as_list(items[3], where + ".args")
        return Call(jf.as_int_list(items[1], where + ".dsts"), jf.as_str(items[2], where + ".callee"),
                    tuple(_operand(a, f"{where}.args[{k}]") for k, a in enumerate(args)))
    if opcode == "global_load":
        _opcode_arity(items, 3, where)
        return GlobalLoad(i(items[1], where + ".dst"), i(items[2], where + ".global"))
    if opcode == "global_store":
        _opcode_arity(items, 3, where)
        return GlobalStore(i(items[1], where + ".global"), i(items[2], where + ".src"))
    if opcode == "rodata":
        _opcode_arity(items, 3, where)
        return Rodata(i(items[1], where + ".dst"), i(items[2], where + ".rodata"))
    if opcode == "binary":
        _opcode_arity(items, 5, where)
        op = jf.as_str(items[2], where + ".op")
        if op not in BINARY_OPS:
            raise jf.fail(where, f"unknown binary op {jf.printable(op)}")
        return Binary(i(items[1], where + ".dst"), op, i(items[3], where + ".lhs"),  # type: ignore[arg-type]
                      i(items[4], where + ".rhs"))
    if opcode == "unary":
        _opcode_arity(items, 4, where)
        op = jf.as_str(items[2], where + ".op")
        if op not in UNARY_OPS:
            raise jf.fail(where, f"unknown unary op {jf.printable(op)}")
        return Unary(i(items[1], where + ".dst"), op, i(items[3], where + ".src"))  # type: ignore[arg-type]
    if opcode == "arith":
        # Op names, types and their agreement are checked by module_verify.
        _opcode_arity(items, 7, where)
        return Arith(i(items[1], where + ".dst"), jf.as_str(items[2], where + ".op"),
                     jf.as_str(items[3], where + ".dtype"),
                     jf.as_int_list(items[4], where + ".args"),
                     jf.as_str(items[5], where + ".arg_dtype"),
                     jf.as_scalar(items[6], where + ".attr"))
    if opcode == "select":
        _opcode_arity(items, 5, where)
        return Select(i(items[1], where + ".dst"), i(items[2], where + ".cond"),
                      i(items[3], where + ".true"), i(items[4], where + ".false"))
    if opcode == "branch":
        _opcode_arity(items, 3, where)
        return Branch(i(items[1], where + ".block"), jf.as_int_list(items[2], where + ".args"))
    if opcode == "cond_branch":
        _opcode_arity(items, 6, where)
        return CondBranch(i(items[1], where + ".cond"), i(items[2], where + ".true_block"),
                          jf.as_int_list(items[3], where + ".true_args"),
                          i(items[4], where + ".false_block"),
                          jf.as_int_list(items[5], where + ".false_args"))
    if opcode == "return":
        _opcode_arity(items, 2, where)
        return Return(jf.as_int_list(items[1], where + ".values"))
    if opcode == "fail":
        if len(items) != 3:  # the values are optional
            _opcode_arity(items, 2, where)
        values = jf.as_int_list(items[2], where + ".values") if len(items) == 3 else ()
        return Fail(i(items[1], where + ".message"), tuple(values))
    raise jf.fail(where, f"unknown opcode {jf.printable(opcode)}")


def _model(value: Any, where: str) -> Any:
    text = jf.as_str(value, where)
    if text not in CALL_MODELS:
        raise jf.fail(where, f"unknown call model {jf.printable(text)} (expected one of "
                             f"{', '.join(CALL_MODELS)})")
    return text


def _function(value: Any, where: str) -> FunctionDef:
    obj = jf.as_dict(value, where)
    jf.exact_keys(obj, ("name", "signature", "num_registers", "blocks"), where)
    blocks_json = jf.as_list(jf.field(obj, "blocks", where), where + ".blocks")
    blocks: list[Block] = []
    for b, block_value in enumerate(blocks_json):
        bw = f"{where}.blocks[{b}]"
        block = jf.as_dict(block_value, bw)
        jf.exact_keys(block, ("params", "instructions"), bw)
        instrs = jf.as_list(jf.field(block, "instructions", bw), bw + ".instructions")
        blocks.append(Block(
            jf.as_int_list(jf.field(block, "params", bw), bw + ".params"),
            tuple(instruction_from_json(x, f"{bw}.instructions[{k}]") for k, x in enumerate(instrs)),
        ))
    return FunctionDef(
        name=jf.as_str(jf.field(obj, "name", where), where + ".name"),
        signature=_signature(jf.field(obj, "signature", where), where + ".signature"),
        num_registers=jf.as_int(jf.field(obj, "num_registers", where), where + ".num_registers"),
        blocks=tuple(blocks),
    )


def _global(value: Any, where: str) -> GlobalDef:
    obj = jf.as_dict(value, where)
    jf.exact_keys(obj, ("name", "type", "initial"), where)
    gtype = jf.as_str(jf.field(obj, "type", where), where + ".type")
    if gtype not in VALUE_TYPES:
        raise jf.fail(where, f"unknown global type {jf.printable(gtype)}")
    initial = obj["initial"]
    if initial is not None and (isinstance(initial, bool) or not isinstance(initial, (int, float))):
        raise jf.fail(where + ".initial", "expected a number or null")
    return GlobalDef(jf.as_str(jf.field(obj, "name", where), where + ".name"), gtype, initial)  # type: ignore[arg-type]


def _executable(value: Any, where: str) -> ExecutableDef:
    obj = jf.as_dict(value, where)
    jf.exact_keys(obj, ("name", "entry_points", "variants"), where)
    variants: list[ExecutableVariant] = []
    for k, v in enumerate(jf.as_list(jf.field(obj, "variants", where), where + ".variants")):
        vw = f"{where}.variants[{k}]"
        vo = jf.as_dict(v, vw)
        jf.exact_keys(vo, ("target", "format", "segment"), vw)
        variants.append(ExecutableVariant(
            jf.as_str(jf.field(vo, "target", vw), vw + ".target"),
            jf.as_str(jf.field(vo, "format", vw), vw + ".format"),
            jf.as_int(jf.field(vo, "segment", vw), vw + ".segment"),
        ))
    return ExecutableDef(
        jf.as_str(jf.field(obj, "name", where), where + ".name"),
        jf.as_str_list(jf.field(obj, "entry_points", where), where + ".entry_points"),
        tuple(variants),
    )


def _reflection(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    pairs: list[tuple[str, str]] = []
    for k, item in enumerate(jf.as_list(value, where)):
        kv = jf.as_list(item, f"{where}[{k}]")
        if len(kv) != 2:
            raise jf.fail(f"{where}[{k}]", "expected a [key, value] pair")
        pairs.append((jf.as_str(kv[0], f"{where}[{k}][0]"), jf.as_str(kv[1], f"{where}[{k}][1]")))
    return tuple(pairs)


# Every field the encoder writes: all are required and no other is accepted.
_METADATA_KEYS = ("name", "dependencies", "imports", "exports", "functions", "globals", "rodata",
                  "executables", "devices", "initializer", "segments")


def image_from_json(value: Any, segments: tuple[memoryview, ...]) -> ModuleImage:
    """Builds the image from decoded JSON; `segments` are already sliced out of the file."""
    obj = jf.as_dict(value, "metadata")
    jf.exact_keys(obj, _METADATA_KEYS, "metadata")
    f = lambda key: jf.field(obj, key, "metadata")  # noqa: E731
    imports = []
    for k, item in enumerate(jf.as_list(f("imports"), "imports")):
        w = f"imports[{k}]"
        o = jf.as_dict(item, w)
        jf.exact_keys(o, ("name", "signature", "model", "optional"), w)
        imports.append(ImportDef(
            jf.as_str(o["name"], w + ".name"),
            _signature(o["signature"], w + ".signature"),
            _model(o["model"], w + ".model"),
            jf.as_bool(o["optional"], w + ".optional"),
        ))
    exports = []
    for k, item in enumerate(jf.as_list(f("exports"), "exports")):
        w = f"exports[{k}]"
        o = jf.as_dict(item, w)
        jf.exact_keys(o, ("name", "function", "model", "reflection"), w)
        exports.append(ExportDef(
            jf.as_str(o["name"], w + ".name"),
            jf.as_int(o["function"], w + ".function"),
            _model(o["model"], w + ".model"),
            _reflection(o["reflection"], w + ".reflection"),
        ))
    rodata = []
    for k, item in enumerate(jf.as_list(f("rodata"), "rodata")):
        w = f"rodata[{k}]"
        o = jf.as_dict(item, w)
        jf.exact_keys(o, ("name", "segment", "alignment"), w)
        rodata.append(RodataDef(
            jf.as_str(o["name"], w + ".name"),
            jf.as_int(o["segment"], w + ".segment"),
            jf.as_int(o["alignment"], w + ".alignment", minimum=1),
        ))
    devices = []
    for k, item in enumerate(jf.as_list(f("devices"), "devices")):
        w = f"devices[{k}]"
        o = jf.as_dict(item, w)
        jf.exact_keys(o, ("name", "kind"), w)
        devices.append(DeviceDef(jf.as_str(o["name"], w + ".name"),
                                 jf.as_str(o["kind"], w + ".kind")))
    initializer = f("initializer")
    if initializer is not None:
        initializer = jf.as_str(initializer, "initializer")
    return ModuleImage(
        name=jf.as_str(f("name"), "name"),
        dependencies=jf.as_str_list(f("dependencies"), "dependencies"),
        imports=tuple(imports),
        exports=tuple(exports),
        functions=tuple(_function(x, f"functions[{k}]")
                        for k, x in enumerate(jf.as_list(f("functions"), "functions"))),
        globals=tuple(_global(x, f"globals[{k}]")
                      for k, x in enumerate(jf.as_list(f("globals"), "globals"))),
        rodata=tuple(rodata),
        executables=tuple(_executable(x, f"executables[{k}]")
                          for k, x in enumerate(jf.as_list(f("executables"), "executables"))),
        devices=tuple(devices),
        initializer=initializer,
        segments=segments,
    )

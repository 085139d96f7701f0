"""Walks a `vm.module` into a `ModuleImage`: one register per SSA value, tuples folded into call
operands, blobs (constants, executable payloads) into segments. The VM dialect mirrors the
instruction set, so this is bookkeeping, not translation."""

from __future__ import annotations

from weir.compiler.state import CompilationState
from weir.compiler.vm.convert_to_vm import INITIALIZER, cconv
from weir.dialects import hal, vm
from weir.format import image as img
from weir.format import vm_isa as isa
from weir.ir.diagnostics import error_at
from weir.ir.upstream import Block, FloatAttr, IntegerAttr, IntegerType, SSAValue, StringAttr


def build_image(module: vm.ModuleOp, state: CompilationState) -> img.ModuleImage:
    segments: list[bytes] = []
    segment_of: dict[str, int] = {}

    def segment(key: str) -> int:
        if key not in segment_of:
            segment_of[key] = len(segments)
            segments.append(state.blobs.blobs[key])
        return segment_of[key]

    imports: list[img.ImportDef] = []
    functions: list[vm.FuncOp] = []
    exports: list[vm.ExportOp] = []
    globals_: list[img.GlobalDef] = []
    rodata: list[img.RodataDef] = []
    executables: list[img.ExecutableDef] = []
    for op in module.body.block.ops:
        if isinstance(op, vm.ImportOp):
            imports.append(img.ImportDef(op.sym_name.data, img.Signature.parse(op.cconv.data),
                                         op.model.data))  # type: ignore[arg-type]
        elif isinstance(op, vm.FuncOp):
            functions.append(op)
        elif isinstance(op, vm.ExportOp):
            exports.append(op)
        elif isinstance(op, vm.GlobalOp):
            globals_.append(img.GlobalDef(op.sym_name.data, "r"))
        elif isinstance(op, vm.RodataOp):
            rodata.append(img.RodataDef(op.sym_name.data, segment(op.data.data)))
        elif isinstance(op, hal.ExecutableOp):
            variants = []
            entries: tuple[str, ...] = ()
            for binary in op.body.block.ops:
                assert isinstance(binary, hal.ExecutableBinaryOp)
                entries = tuple(e.data for e in binary.entry_points.data)
                variants.append(img.ExecutableVariant(binary.target.data, binary.format.data,
                                                      segment(binary.data.data)))
            executables.append(img.ExecutableDef(op.sym_name.data, entries, tuple(variants)))
    global_index = {g.name: i for i, g in enumerate(globals_)}
    rodata_index = {r.name: i for i, r in enumerate(rodata)}
    function_index = {f.sym_name.data: i for i, f in enumerate(functions)}
    image_functions = tuple(
        _FunctionWriter(f, global_index, rodata_index).write() for f in functions)
    image_exports = tuple(
        img.ExportDef(
            e.export_name.data, function_index[e.function_ref.root_reference.data],
            e.model.data,  # type: ignore[arg-type]
            tuple((k, v.data) for k, v in e.reflection.data.items()
                  if isinstance(v, StringAttr)))
        for e in exports)
    return img.ModuleImage(
        name=module.sym_name.data,
        dependencies=tuple(d.data for d in module.dependencies.data),
        imports=tuple(imports),
        exports=image_exports,
        functions=image_functions,
        globals=tuple(globals_),
        rodata=tuple(rodata),
        executables=tuple(executables),
        devices=tuple(img.DeviceDef(d.data) for d in module.devices.data),
        initializer=INITIALIZER if INITIALIZER in function_index else None,
        segments=tuple(memoryview(s) for s in segments),
    )


class _FunctionWriter:
    def __init__(self, fn: vm.FuncOp, global_index: dict[str, int], rodata_index: dict[str, int]):
        self.fn = fn
        self.global_index = global_index
        self.rodata_index = rodata_index
        self.registers: dict[SSAValue, int] = {}
        self.tuples: dict[SSAValue, tuple[int, ...]] = {}
        self.blocks: dict[Block, int] = {b: i for i, b in enumerate(fn.body.blocks)}

    def reg(self, v: SSAValue) -> int:
        if v not in self.registers:
            self.registers[v] = len(self.registers)
        return self.registers[v]

    def operand(self, v: SSAValue) -> isa.Operand:
        return self.tuples[v] if v in self.tuples else self.reg(v)

    def write(self) -> img.FunctionDef:
        blocks = []
        for block in self.fn.body.blocks:
            params = tuple(self.reg(a) for a in block.args)
            instructions: list[isa.Instruction] = []
            for op in block.ops:
                ins = self.instruction(op)
                if ins is not None:
                    instructions.append(ins)
            blocks.append(img.Block(params, tuple(instructions)))
        ft = self.fn.function_type
        signature = img.Signature.parse(cconv(list(ft.inputs.data), list(ft.outputs.data)))
        return img.FunctionDef(self.fn.sym_name.data, signature, max(len(self.registers), 1),
                               tuple(blocks))

    def instruction(self, op: object) -> isa.Instruction | None:
        if isinstance(op, vm.TupleOp):
            self.tuples[op.result] = tuple(self.reg(v) for v in op.elements)
            return None
        if isinstance(op, vm.ConstOp):
            value = op.value
            scalar: isa.Scalar
            if value is None:
                scalar = None
            elif isinstance(value, IntegerAttr):
                # i1 constants are bools, the canonical register form of i1.
                scalar = int(value.value.data)
                if value.type == IntegerType(1):
                    scalar = bool(scalar)
            elif isinstance(value, FloatAttr):
                scalar = float(value.value.data)
            elif isinstance(value, StringAttr):
                scalar = value.data
            else:
                raise error_at(op, f"vm.const of unsupported value {value}")
            return isa.Const(self.reg(op.result), scalar)
        if isinstance(op, vm.CallOp):
            return isa.Call(tuple(self.reg(r) for r in op.results),
                            op.callee.string_value(),
                            tuple(self.operand(a) for a in op.arguments))
        if isinstance(op, vm.GlobalLoadOp):
            return isa.GlobalLoad(self.reg(op.result),
                                  self.global_index[op.global_.root_reference.data])
        if isinstance(op, vm.GlobalStoreOp):
            return isa.GlobalStore(self.global_index[op.global_.root_reference.data],
                                   self.reg(op.value))
        if isinstance(op, vm.RodataLoadOp):
            return isa.Rodata(self.reg(op.result), self.rodata_index[op.rodata.root_reference.data])
        if isinstance(op, vm.BinaryOp):
            return isa.Binary(self.reg(op.result), op.op.data,  # type: ignore[arg-type]
                              self.reg(op.lhs), self.reg(op.rhs))
        if isinstance(op, vm.UnaryOp):
            return isa.Unary(self.reg(op.result), op.op.data,  # type: ignore[arg-type]
                             self.reg(op.source))
        if isinstance(op, vm.ArithOp):
            predicate = op.predicate.data if op.predicate is not None else None
            return isa.Arith(self.reg(op.result), op.op.data, op.dtype.data,
                             tuple(self.reg(a) for a in op.arguments), op.arg_dtype.data,
                             predicate)
        if isinstance(op, vm.SelectOp):
            return isa.Select(self.reg(op.result), self.reg(op.condition),
                              self.reg(op.true_value), self.reg(op.false_value))
        if isinstance(op, vm.BranchOp):
            return isa.Branch(self.blocks[op.successor], tuple(self.reg(a) for a in op.arguments))
        if isinstance(op, vm.CondBranchOp):
            return isa.CondBranch(self.reg(op.condition),
                                  self.blocks[op.true_successor],
                                  tuple(self.reg(a) for a in op.true_arguments),
                                  self.blocks[op.false_successor],
                                  tuple(self.reg(a) for a in op.false_arguments))
        if isinstance(op, vm.ReturnOp):
            return isa.Return(tuple(self.reg(v) for v in op.values))
        if isinstance(op, vm.FailOp):
            return isa.Fail(self.reg(op.message), tuple(self.reg(v) for v in op.values))
        raise error_at(op, f"'{getattr(op, 'name', op)}' cannot be serialised")  # type: ignore[arg-type]

"""Turns `module.function` declarations into imports with the runtime's calling convention and
rewrites their call sites: tensors are exported to buffer views before the call and the results
imported back, so another module (compiled or written in Python) sees only buffer views."""

from __future__ import annotations

from weir.compiler.abi.types import dynamic_dim_indices, is_tensor
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import hal
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    Builder,
    ConstantOp,
    DimOp,
    func,
    IndexType,
    InsertPoint,
    IntegerAttr,
    ModuleOp,
    SSAValue,
    StringAttr,
    TensorType,
)


class WrapImports(Pass):
    flag = "wrap-imports"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        imports: dict[str, func.FuncOp] = {}
        for fn in module.body.block.ops:
            if isinstance(fn, func.FuncOp) and not fn.body.blocks:
                imports[fn.sym_name.data] = fn
        for name, decl in imports.items():
            model = decl.attributes.get("iree.abi.model")
            if model is not None and not (
                isinstance(model, StringAttr) and model.data in ("sync", "coarse-fences")
            ):
                raise error_at(decl, f"unknown iree.abi.model on import @{name}")
        for op in list(module.walk()):
            if isinstance(op, func.CallOp) and op.callee.root_reference.data in imports:
                self._rewrite_call(op)
        for decl in imports.values():
            inputs = [hal.BufferViewType() if is_tensor(t) else t
                      for t in decl.function_type.inputs.data]
            outputs = [hal.BufferViewType() if is_tensor(t) else t
                       for t in decl.function_type.outputs.data]
            decl.function_type = func.FunctionType.from_lists(inputs, outputs)

    def _rewrite_call(self, call: func.CallOp) -> None:
        b = Builder(InsertPoint.before(call))
        args: list[SSAValue] = []
        for i, arg in enumerate(call.arguments):
            if not isinstance(arg.type, TensorType):
                args.append(arg)
                continue
            dims = []
            for d in dynamic_dim_indices(arg.type):
                index = b.insert(ConstantOp(IntegerAttr(d, IndexType())))
                dims.append(b.insert(DimOp(arg, index.result)).result)
            exported = b.insert(hal.TensorExportOp.build(
                operands=[arg, dims, []], result_types=[hal.BufferViewType()],
                properties={"name": StringAttr(f"{call.callee.root_reference.data}:arg{i}")}))
            args.append(exported.result)
        result_types = [hal.BufferViewType() if is_tensor(r.type) else r.type
                        for r in call.results]
        new_call = b.insert(func.CallOp(call.callee, args, result_types))
        after = Builder(InsertPoint.after(new_call))
        for old, new in zip(call.results, new_call.results, strict=True):
            if not isinstance(old.type, TensorType):
                old.replace_all_uses_with(new)
                continue
            dims = [
                after.insert(hal.BufferViewDimOp.build(
                    operands=[new], result_types=[IndexType()],
                    properties={"index": IntegerAttr(d, IndexType())})).result
                for d in dynamic_dim_indices(old.type)
            ]
            imported = after.insert(hal.TensorImportOp.build(
                operands=[new, dims], result_types=[old.type],
                properties={"name": StringAttr(f"{call.callee.root_reference.data}:result")}))
            old.replace_all_uses_with(imported.result)
        call.detach()
        call.erase()

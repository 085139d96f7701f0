"""Turns `module.function` declarations into imports with the runtime's calling convention and
rewrites their call sites: tensors are exported to buffer views before the call and the results
imported back, so another module (compiled or written in Python) sees only buffer views.

A `coarse-fences` import is called without the host waiting: its arguments are handed over with
a wait fence that a barrier signals once they are ready, and its results are imported as valid
once the callee signals the signal fence. Without `nosideeffects` the caller also waits on that
fence right after the call, because the callee may touch state the compiler cannot see."""

from __future__ import annotations

from weir.compiler.abi.types import abi_type
from weir.compiler.pass_base import Pass
from weir.compiler.shapes import buffer_view_dims, tensor_dims
from weir.compiler.state import CompilationState
from weir.dialects import hal
from weir.format.image import CALL_MODELS
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    ArrayAttr,
    DictionaryAttr,
    Builder,
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
                isinstance(model, StringAttr) and model.data in CALL_MODELS
            ):
                raise error_at(decl, f"unknown iree.abi.model on import @{name}")
        for op in list(module.walk()):
            if isinstance(op, func.CallOp) and op.callee.root_reference.data in imports:
                self._rewrite_call(op, imports[op.callee.root_reference.data])
        for decl in imports.values():
            inputs = [abi_type(t) for t in decl.function_type.inputs.data]
            if _is_coarse_fences(decl):
                inputs += [hal.FenceType(), hal.FenceType()]
                if decl.arg_attrs is not None:  # one attribute dictionary per argument
                    decl.arg_attrs = ArrayAttr([*decl.arg_attrs.data, DictionaryAttr({}),
                                                DictionaryAttr({})])
            outputs = [abi_type(t) for t in decl.function_type.outputs.data]
            decl.function_type = func.FunctionType.from_lists(inputs, outputs)

    def _rewrite_call(self, call: func.CallOp, decl: func.FuncOp) -> None:
        b = Builder(InsertPoint.before(call))
        callee = call.callee.root_reference.data
        wait: SSAValue | None = None
        signal: SSAValue | None = None
        operands = list(call.arguments)
        if _is_coarse_fences(decl):
            device = b.insert(hal.DeviceGetOp.build(
                result_types=[hal.DeviceType()],
                properties={"ordinal": IntegerAttr(0, IndexType())})).result
            wait = b.insert(hal.FenceCreateOp.build(
                operands=[device], result_types=[hal.FenceType()])).result
            signal = b.insert(hal.FenceCreateOp.build(
                operands=[device], result_types=[hal.FenceType()])).result
            tensors = [i for i, a in enumerate(operands) if isinstance(a.type, TensorType)]
            barrier = b.insert(hal.TensorBarrierOp.build(
                operands=[[operands[i] for i in tensors], wait],
                result_types=[[operands[i].type for i in tensors]]))
            for i, value in zip(tensors, barrier.results, strict=True):
                operands[i] = value
        args: list[SSAValue] = []
        for i, arg in enumerate(operands):
            if not isinstance(arg.type, TensorType):
                args.append(arg)
                continue
            dims = tensor_dims(arg, b.insertion_point)
            exported = b.insert(hal.TensorExportOp.build(
                operands=[arg, dims], result_types=[hal.BufferViewType()],
                properties={"name": StringAttr(f"{callee}:arg{i}")}))
            args.append(exported.result)
        result_types = [abi_type(r.type) for r in call.results]
        if wait is not None and signal is not None:
            args += [wait, signal]
        new_call = b.insert(func.CallOp(call.callee, args, result_types))
        after = Builder(InsertPoint.after(new_call))
        if signal is not None and "nosideeffects" not in decl.attributes:
            after.insert(hal.FenceAwaitOp.build(operands=[[signal]], properties={
                "timeout_ms": IntegerAttr(hal.DEFAULT_TIMEOUT_MS, IndexType())}))
        for old, new in zip(call.results, new_call.results, strict=True):
            if not isinstance(old.type, TensorType):
                old.replace_all_uses_with(new)
                continue
            dims = buffer_view_dims(new, old.type, after.insertion_point)
            imported = after.insert(hal.TensorImportOp.build(
                operands=[new, dims, [signal] if signal is not None else []],
                result_types=[old.type], properties={"name": StringAttr(f"{callee}:result")}))
            old.replace_all_uses_with(imported.result)
        call.detach()
        call.erase()


def _is_coarse_fences(decl: func.FuncOp) -> bool:
    model = decl.attributes.get("iree.abi.model")
    return isinstance(model, StringAttr) and model.data == "coarse-fences"

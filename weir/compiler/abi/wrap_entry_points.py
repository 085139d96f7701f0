"""Gives every public function the runtime's calling convention: buffer views in and out, with
reflection saying what the tensors were. The original body moves to a private `_name` function
that later inlining folds back, as IREE's ABI wrapping does, so internal calls keep tensors."""

from __future__ import annotations

from weir.compiler.abi.materialize_target_devices import abi_affinity, AFFINITY_ATTR
from weir.compiler.abi.types import abi_output_index, abi_type
from weir.compiler.pass_base import Pass
from weir.compiler.shapes import buffer_view_dims, tensor_dims
from weir.compiler.state import CompilationState
from weir.compiler.targets.element_types import dtype_name
from weir.dialects import hal
from weir.ir.printer import attribute_text
from weir.ir.upstream import (
    AnyFloat,
    Attribute,
    Block,
    Builder,
    func,
    IndexType,
    InsertPoint,
    IntegerType,
    ModuleOp,
    Region,
    SSAValue,
    StringAttr,
    TensorType,
    UnitAttr,
)

# Every float weir accepts (the input phase rejected the others): f16..f64 and the small floats.
SCALAR_TYPES = (IntegerType, IndexType, AnyFloat)


def _declaration(kind: str, name: str, inputs: list[Attribute], outputs: list[Attribute],
                 arg_affinity: list[Attribute | None], res_affinity: list[Attribute | None]) -> str:
    def one(prefix: str, i: int, t: Attribute, affinity: Attribute | None) -> str:
        text = f"%{prefix}{i}: {attribute_text(t)}"
        if affinity is not None:
            text += f" {{{AFFINITY_ATTR} = {attribute_text(affinity)}}}"
        return text

    args = ", ".join(one("input", i, t, arg_affinity[i]) for i, t in enumerate(inputs))
    results = ", ".join(one("output", i, t, res_affinity[i]) for i, t in enumerate(outputs))
    return f"{kind} func @{name}({args}) -> ({results})"


# Reflection naming the exact type of each scalar argument and result, which the calling
# convention does not carry (`i` is any integer up to 32 bits, `f` f16/bf16/f32): the runtime
# checks and rounds scalar arguments with it and returns results of their type. Only functions
# with a scalar in their signature carry it; `r` stands for a tensor or other reference.
SCALAR_TYPES_ATTR = "weir.abi.scalar_types"


def _scalar_types(fn: func.FuncOp, inputs: list[Attribute], outputs: list[Attribute]) -> str | None:
    """`i8,r,f16;i8` (arguments;results), or None when the signature has no scalar."""
    def name(t: Attribute) -> str:
        return dtype_name(t, fn) if isinstance(t, SCALAR_TYPES) else "r"
    args, results = [name(t) for t in inputs], [name(t) for t in outputs]
    if all(n == "r" for n in args + results):
        return None
    return ",".join(args) + ";" + ",".join(results)


def _with_affinity(props: dict[str, Attribute], affinity: Attribute | None) -> dict[str, Attribute]:
    return props if affinity is None else {**props, "affinity": affinity}


class WrapEntryPoints(Pass):
    flag = "wrap-entry-points"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        async_model = state.options.execution_model == "async-external"
        for fn in list(module.body.block.ops):
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            if fn.sym_visibility is not None and fn.sym_visibility.data != "public":
                continue
            self._wrap(module, fn, async_model)

    def _wrap(self, module: ModuleOp, fn: func.FuncOp, async_model: bool) -> None:
        name = fn.sym_name.data
        inputs = list(fn.function_type.inputs.data)
        outputs = list(fn.function_type.outputs.data)
        arg_attrs = fn.arg_attrs
        arg_affinity = [abi_affinity(arg_attrs, i) for i in range(len(inputs))]
        res_affinity = [abi_affinity(fn.res_attrs, j) for j in range(len(outputs))]
        fn.sym_name = StringAttr(f"_{name}")
        fn.sym_visibility = StringAttr("private")
        fn.arg_attrs = None

        abi_inputs = [abi_type(t) for t in inputs]
        abi_outputs = [abi_type(t) for t in outputs]
        if async_model:
            abi_inputs += [hal.FenceType(), hal.FenceType()]
        block = Block(arg_types=abi_inputs)
        wait, signal = (block.args[-2], block.args[-1]) if async_model else (None, None)
        b = Builder(InsertPoint.at_end(block))
        call_args: list[SSAValue] = []
        storage: dict[int, SSAValue] = {}
        storage_affinity: dict[int, Attribute | None] = {}
        for i, t in enumerate(inputs):
            arg = block.args[i]
            if not isinstance(t, TensorType):
                call_args.append(arg)
                continue
            out = abi_output_index(arg_attrs, i)
            if out is not None:
                storage[out] = arg
                storage_affinity[out] = arg_affinity[i]
            dims = buffer_view_dims(arg, t, b.insertion_point)
            imported = b.insert(hal.TensorImportOp.build(
                operands=[arg, dims, [wait] if wait is not None else []], result_types=[t],
                properties=_with_affinity({"name": StringAttr(f"input{i}")}, arg_affinity[i])))
            call_args.append(imported.result)
        call = b.insert(func.CallOp(f"_{name}", call_args, outputs))
        results: list[SSAValue] = list(call.results)
        result_dims: dict[int, list[SSAValue]] = {}
        for j, t in enumerate(outputs):
            if not isinstance(t, TensorType):
                continue
            dims = tensor_dims(results[j], b.insertion_point)
            result_dims[j] = dims
            if j in storage:
                results[j] = b.insert(hal.TensorAliasOp.build(
                    operands=[results[j], dims, storage[j]], result_types=[t],
                    properties=_with_affinity({}, storage_affinity[j]))).result
        if signal is not None:
            # The caller learns through `signal` when the results are valid; nothing waits here.
            # The signal comes from the queue of the device the first result is promised on.
            first = next(iter(result_dims), None)
            barrier = b.insert(hal.TensorBarrierOp.build(
                operands=[[results[j] for j in result_dims], signal],
                result_types=[[outputs[j] for j in result_dims]],
                properties=_with_affinity({}, res_affinity[first] if first is not None else None)))
            for j, value in zip(result_dims, barrier.results, strict=True):
                results[j] = value
        for j, dims in result_dims.items():
            results[j] = b.insert(hal.TensorExportOp.build(
                operands=[results[j], dims], result_types=[hal.BufferViewType()],
                properties=_with_affinity({"name": StringAttr(f"output{j}")},
                                          res_affinity[j]))).result
        b.insert(func.ReturnOp(*results))

        wrapper = func.FuncOp(name, (abi_inputs, abi_outputs), Region(block))
        wrapper.attributes["iree.abi.stub"] = UnitAttr()
        kind = "async" if async_model else "sync"
        wrapper.attributes["iree.abi.declaration"] = StringAttr(
            _declaration(kind, name, inputs, outputs, arg_affinity, res_affinity))
        wrapper.attributes["iree.abi.model"] = StringAttr(
            "coarse-fences" if async_model else "sync")
        scalar_types = _scalar_types(fn, inputs, outputs)
        if scalar_types is not None:
            wrapper.attributes[SCALAR_TYPES_ATTR] = StringAttr(scalar_types)
        module.body.block.insert_op_before(wrapper, fn)

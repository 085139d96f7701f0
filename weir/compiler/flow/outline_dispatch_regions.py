"""Moves each dispatch region into its own `flow.executable` and leaves a `flow.dispatch` on the
host. The outlined function takes its tensors (the future bindings) first, then the scalars it
needs (the future push constants: host scalars of any type, and index values, among them the
dynamic dimensions); `weir.binding_dims` records which push constants give the dynamic dimensions
of each tensor argument and result."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.shapes import dims_per_result, dynamic_dims
from weir.compiler.state import CompilationState
from weir.dialects import flow
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    AnyFloat,
    ArrayAttr,
    Block,
    Builder,
    func,
    IndexType,
    InsertPoint,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Operation,
    Region,
    SSAValue,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)

# Every float weir accepts (the input phase rejected the others): f16..f64 and the small floats.
_SCALAR_TYPES = (IndexType, IntegerType, AnyFloat)


def _captured(region_op: flow.DispatchRegionOp) -> list[SSAValue]:
    inside = set(region_op.body.walk())
    seen: list[SSAValue] = []
    for op in region_op.body.walk():
        for operand in op.operands:
            owner = operand.owner
            defined_inside = (owner in inside) if isinstance(owner, Operation) else \
                (owner.parent_op() in inside or owner.parent_op() is region_op)
            if not defined_inside and operand not in seen:
                seen.append(operand)
    return seen


class OutlineDispatchRegions(Pass):
    flag = "outline-dispatch-regions"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for fn in list(module.body.block.ops):
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            regions = [op for op in fn.walk() if isinstance(op, flow.DispatchRegionOp)]
            for n, region_op in enumerate(regions):
                name = f"{fn.sym_name.data}_dispatch_{n}"
                module.body.block.insert_op_before(self._outline(region_op, name), fn)

    def _outline(self, region_op: flow.DispatchRegionOp, name: str) -> flow.ExecutableOp:
        captured = _captured(region_op)
        tensors = [v for v in captured if isinstance(v.type, TensorType)]
        # Host scalars of any type ride as push constants (encoded to 64 bits by the stream phase).
        scalars = [v for v in captured if isinstance(v.type, _SCALAR_TYPES)]
        others = [v for v in captured if v not in tensors and v not in scalars]
        if others:
            raise error_at(region_op.body.block.first_op or region_op,
                           f"a dispatch cannot capture a host value of type {others[0].type}")
        where = InsertPoint.before(region_op)
        push: list[SSAValue] = list(scalars)

        def push_index(v: SSAValue) -> int:
            if v not in push:
                push.append(v)
            return push.index(v)

        binding_dims: list[ArrayAttr[IntegerAttr]] = []
        for v in tensors:
            binding_dims.append(ArrayAttr([IntegerAttr(push_index(d), IndexType())
                                           for d in dynamic_dims(v, where)]))
        for d_value in dims_per_result(region_op):
            binding_dims.append(ArrayAttr([IntegerAttr(push_index(d), IndexType())
                                           for d in d_value]))

        arg_types = [v.type for v in tensors] + [v.type for v in push]
        block = Block(arg_types=arg_types)
        mapping: dict[SSAValue, SSAValue] = {v: block.args[i] for i, v in enumerate(tensors)}
        for i, v in enumerate(push):
            mapping[v] = block.args[len(tensors) + i]
        for op in region_op.body.block.ops:
            if isinstance(op, flow.ReturnOp):
                block.add_op(func.ReturnOp(*[mapping[v] for v in op.values]))
            else:
                block.add_op(op.clone(mapping))
        result_types = [r.type for r in region_op.results]
        dispatch_fn = func.FuncOp(name, (arg_types, result_types), Region(block))
        dispatch_fn.attributes["weir.binding_dims"] = ArrayAttr(binding_dims)
        inner = ModuleOp([dispatch_fn])
        export = flow.ExecutableExportOp.build(properties={
            "sym_name": StringAttr(name), "function_ref": SymbolRefAttr(name)})
        executable = flow.ExecutableOp.build(
            properties={"sym_name": StringAttr(name)},
            regions=[Region(Block([export, inner]))])

        dispatch = flow.DispatchOp.build(
            operands=[[*tensors, *push], list(region_op.result_dims)],
            result_types=[result_types],
            properties={"entry_point": SymbolRefAttr(name, [name])})
        Builder(where).insert(dispatch)
        for old, new in zip(region_op.results, dispatch.results, strict=True):
            old.replace_all_uses_with(new)
        region_op.detach()
        region_op.erase()
        return executable

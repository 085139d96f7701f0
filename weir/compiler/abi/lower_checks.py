"""Turns `check.*` ops into calls of the runtime's `check` module: tensors are exported to buffer
views (so the host waits for them to be computed before the call), scalars are passed as they
are, and each op calls an import `check.<op>` that this pass declares.

Runs before `wrap-imports`, so the calls it creates take the same road to the VM as any call of
another module. The `_const` forms compare against a constant tensor, exported like any other.
The check module records a failure and returns, so a test reports every check that failed."""

from __future__ import annotations

from dataclasses import dataclass

from weir.compiler.pass_base import Pass
from weir.compiler.shapes import tensor_dims
from weir.compiler.state import CompilationState
from weir.dialects import check, hal
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    arith,
    Attribute,
    Builder,
    Float32Type,
    FloatAttr,
    func,
    InsertPoint,
    IntegerType,
    ModuleOp,
    Operation,
    Region,
    SSAValue,
    StringAttr,
)

MODULE = "check"
"""The runtime module the calls go to (weir/runtime/modules/check.py)."""


@dataclass(frozen=True)
class _Import:
    name: str
    inputs: tuple[Attribute, ...]


_BV = hal.BufferViewType()
IMPORTS: dict[type[Operation], _Import] = {
    check.ExpectTrueOp: _Import("expect_true", (IntegerType(32),)),
    check.ExpectFalseOp: _Import("expect_false", (IntegerType(32),)),
    check.ExpectAllTrueOp: _Import("expect_all_true", (_BV,)),
    check.ExpectEqOp: _Import("expect_eq", (_BV, _BV)),
    check.ExpectEqConstOp: _Import("expect_eq", (_BV, _BV)),
    check.ExpectAlmostEqOp: _Import("expect_almost_eq", (_BV, _BV, Float32Type(), Float32Type())),
    check.ExpectAlmostEqConstOp: _Import("expect_almost_eq",
                                         (_BV, _BV, Float32Type(), Float32Type())),
}
"""Each check op and the check-module function it calls (IREE's names; the almost-eq functions
take their tolerances as f32 arguments)."""


class LowerChecks(Pass):
    flag = "lower-checks"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        ops = [op for op in module.walk() if type(op) in IMPORTS]
        if not ops:
            return
        declared = self._declarations(module)
        for op in ops:
            spec = IMPORTS[type(op)]
            callee = f"{MODULE}.{spec.name}"
            if callee not in declared:
                declared[callee] = self._declare(module, callee, spec)
            self._check_declaration(op, declared[callee], spec)
            b = Builder(InsertPoint.before(op))
            b.insert(func.CallOp(callee, self._arguments(op, spec, b), []))
            op.detach()
            op.erase()

    @staticmethod
    def _declarations(module: ModuleOp) -> dict[str, func.FuncOp]:
        return {fn.sym_name.data: fn for fn in module.body.block.ops
                if isinstance(fn, func.FuncOp) and fn.sym_name.data.startswith(f"{MODULE}.")}

    @staticmethod
    def _declare(module: ModuleOp, callee: str, spec: _Import) -> func.FuncOp:
        # An empty region: a declaration, which `wrap-imports` and the vm phase treat as an import.
        decl = func.FuncOp(callee, (list(spec.inputs), []), Region(), visibility="private")
        module.body.block.add_op(decl)
        return decl

    @staticmethod
    def _check_declaration(op: Operation, decl: func.FuncOp, spec: _Import) -> None:
        """A program that declares `check.*` itself must agree with the runtime module."""
        expected = func.FunctionType.from_lists(list(spec.inputs), [])
        if decl.body.blocks or decl.function_type != expected:
            raise error_at(op, f"@{decl.sym_name.data} is defined in this module as "
                               f"{decl.function_type}; '{op.name}' needs the check module's "
                               f"{expected}")

    def _arguments(self, op: Operation, spec: _Import, b: Builder) -> list[SSAValue]:
        if isinstance(op, check.ExpectTrueOp | check.ExpectFalseOp):
            t = op.operand.type
            if t != spec.inputs[0]:
                raise error_at(op, f"'{op.name}' on {t} is not supported: the check module "
                                   "takes i32")
            return [op.operand]
        if isinstance(op, check.ExpectAllTrueOp):
            return [self._export(op.operand, f"{op.name}:operand", b)]
        assert isinstance(op, check.ExpectEqOp | check.ExpectEqConstOp | check.ExpectAlmostEqOp |
                          check.ExpectAlmostEqConstOp)
        if isinstance(op, check.ExpectEqConstOp | check.ExpectAlmostEqConstOp):
            rhs: SSAValue = b.insert(arith.ConstantOp(op.value, op.lhs.type)).result  # type: ignore[arg-type]
        else:
            rhs = op.rhs
        args = [self._export(op.lhs, f"{op.name}:lhs", b), self._export(rhs, f"{op.name}:rhs", b)]
        if isinstance(op, check.ExpectAlmostEqOp | check.ExpectAlmostEqConstOp):
            atol, rtol = op.tolerance_values()
            for value in (atol, rtol):
                args.append(b.insert(arith.ConstantOp(FloatAttr(value, Float32Type()))).result)
        return args

    @staticmethod
    def _export(value: SSAValue, name: str, b: Builder) -> SSAValue:
        dims = tensor_dims(value, b.insertion_point)
        return b.insert(hal.TensorExportOp.build(
            operands=[value, dims], result_types=[hal.BufferViewType()],
            properties={"name": StringAttr(name)})).result

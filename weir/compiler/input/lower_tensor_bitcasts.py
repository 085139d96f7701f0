"""Turns `flow.tensor.bitcast` between element types of one width into an elementwise
`arith.bitcast` (each element's bits read as the other type) and, where the shape changes too,
a `tensor.reshape` to the result's static shape: both ops weir already compiles, the bitcast in
a dispatch and the reshape as metadata on the host.

A bitcast between widths (four i8 as one i32, i8 as packed sub-byte elements) would reinterpret
bytes across elements, which no weir op does yet: it is a located compile error."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.flow import TensorBitCastOp
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    arith,
    Builder,
    DenseIntOrFPElementsAttr,
    IntegerType,
    InsertPoint,
    ModuleOp,
    tensor,
    TensorType,
)


class LowerTensorBitcasts(Pass):
    flag = "lower-tensor-bitcasts"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            if isinstance(op, TensorBitCastOp):
                self._lower(op)

    @staticmethod
    def _lower(op: TensorBitCastOp) -> None:
        src, dst = op.source.type, op.result.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        widths = [getattr(t.element_type, "bitwidth", None) for t in (src, dst)]
        if widths[0] != widths[1] or widths[0] is None or widths[0] % 8:
            raise error_at(op, f"flow.tensor.bitcast from {src} to {dst} is not supported: weir "
                               "reinterprets only element types of one width of whole bytes")
        same_shape = list(src.get_shape()) == list(dst.get_shape())
        if not same_shape and not (src.has_static_shape() and dst.has_static_shape()):
            raise error_at(op, f"flow.tensor.bitcast from {src} to {dst} is not supported: a "
                               "bitcast that changes the shape needs static shapes")
        b = Builder(InsertPoint.before(op))
        value = op.source
        if src.element_type != dst.element_type:
            cast = b.insert(arith.BitcastOp(value, TensorType(dst.element_type, src.get_shape())))
            cast.location = op.location
            value = cast.result
        if not same_shape:
            shape = b.insert(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
                TensorType(IntegerType(64), [dst.get_num_dims()]), list(dst.get_shape()))))
            reshape = b.insert(tensor.ReshapeOp(value, shape.result, dst))
            shape.location = reshape.location = op.location
            value = reshape.results[0]
        op.result.replace_all_uses_with(value)
        op.detach()
        op.erase()

"""Drops `#iree_encoding.packed_storage` from every tensor type. It only says how a sub-byte
tensor's bits lie in memory, which matters to a bitcast alone, and `lower-tensor-bitcasts` has
turned those into explicit packing; weir keeps sub-byte elements a byte each
(weir/format/element_types.py), so afterwards the encoding means nothing and later phases, which
compare tensor types, must not see it."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.iree_encoding import is_packed_storage
from weir.ir.upstream import (
    Attribute,
    DenseIntOrFPElementsAttr,
    func,
    FunctionType,
    ModuleOp,
    Rewriter,
    TensorType,
)


def _plain(t: Attribute) -> Attribute:
    if is_packed_storage(t):
        assert isinstance(t, TensorType)
        return TensorType(t.element_type, t.get_shape())
    return t


class DropPackedStorage(Pass):
    flag = "drop-packed-storage"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            for result in list(op.results):
                if is_packed_storage(result.type):
                    Rewriter.replace_value_with_new_type(result, _plain(result.type))
            for region in op.regions:
                for block in region.blocks:
                    for arg in list(block.args):
                        if is_packed_storage(arg.type):
                            Rewriter.replace_value_with_new_type(arg, _plain(arg.type))
            for table in (op.properties, op.attributes):
                for name, value in list(table.items()):
                    if isinstance(value, DenseIntOrFPElementsAttr) and \
                            is_packed_storage(value.type):
                        table[name] = DenseIntOrFPElementsAttr(_plain(value.type), value.data)
            if isinstance(op, func.FuncOp):
                ft = op.function_type
                if any(is_packed_storage(t) for t in (*ft.inputs, *ft.outputs)):
                    op.function_type = FunctionType.from_lists(
                        [_plain(t) for t in ft.inputs], [_plain(t) for t in ft.outputs])

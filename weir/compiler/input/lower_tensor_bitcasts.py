"""Turns `flow.tensor.bitcast` between element types of one width into an elementwise
`arith.bitcast` (each element's bits read as the other type) and, where the shape changes too,
a `tensor.reshape` to the result's static shape: both ops weir already compiles, the bitcast in
a dispatch and the reshape as metadata on the host. `flow.tensor.reshape` is such a bitcast
that keeps the element type: a `tensor.reshape` alone.

Between an integer of whole bytes and a sub-byte element type (i1 with
`#iree_encoding.packed_storage`, i2, i4, f4E2M1FN) it packs or unpacks the elements
(subbyte_packing.py). Any other bitcast between widths (four i8 as one i32) would reinterpret
bytes across elements, which no weir op does yet: it is a located compile error."""

from __future__ import annotations

from weir.compiler.input.subbyte_packing import as_integers, pack, sub_byte_bits, unpack
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.flow import TensorBitCastOp, TensorReinterpret
from weir.dialects.iree_encoding import is_packed_storage
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
        # The types as written, before lowering one bitcast retypes the source of the next
        # (a packed i1 tensor's encoding is gone once its producer is unpacking).
        bitcasts = [(op, op.source.type, op.result.type) for op in module.walk()
                    if isinstance(op, TensorReinterpret)]
        for op, src, dst in bitcasts:
            assert isinstance(src, TensorType) and isinstance(dst, TensorType)
            self._lower(op, src, dst)

    @staticmethod
    def _lower(op: TensorReinterpret, src: TensorType, dst: TensorType) -> None:
        widths = [getattr(t.element_type, "bitwidth", None) for t in (src, dst)]
        if widths[0] != widths[1] and None not in widths and \
                (sub_byte_bits(src.element_type) or sub_byte_bits(dst.element_type)):
            LowerTensorBitcasts._lower_packed(op, src, dst)
            return
        if widths[0] != widths[1] or widths[0] is None:
            raise error_at(op, f"flow.tensor.bitcast from {src} to {dst} is not supported: weir "
                               "reinterprets only element types of one width, or integers of whole "
                               "bytes as packed sub-byte elements")
        same_shape = list(src.get_shape()) == list(dst.get_shape())
        if not same_shape and not (src.has_static_shape() and dst.has_static_shape()):
            raise error_at(op, f"{op.name} from {src} to {dst} is not supported: a change of "
                               "shape needs static shapes")
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

    @staticmethod
    def _lower_packed(op: TensorBitCastOp, src: TensorType, dst: TensorType) -> None:
        """Words of whole bytes to packed sub-byte elements, or back."""
        words, elements = (src, dst) if sub_byte_bits(dst.element_type) else (dst, src)
        word_bits = words.element_type.bitwidth  # type: ignore[attr-defined]
        problem = None
        if sub_byte_bits(words.element_type) or word_bits % 8:
            problem = "one side must have elements of whole bytes"
        elif sub_byte_bits(elements.element_type) == 1 and not is_packed_storage(elements):
            problem = ("an i1 tensor without #iree_encoding.packed_storage has one byte per "
                       "element; packed i1 needs that encoding")
        elif 8 % sub_byte_bits(elements.element_type):  # type: ignore[operator]
            problem = (f"{elements.element_type} elements straddle bytes; weir packs only "
                       "1-, 2- and 4-bit elements")
        elif not (src.has_static_shape() and dst.has_static_shape()):
            problem = "packing sub-byte elements needs static shapes"
        if problem is not None:
            raise error_at(op, f"flow.tensor.bitcast from {src} to {dst} is not supported: "
                               f"{problem}")
        b = Builder(InsertPoint.before(op))
        before = op.prev_op
        if words is src:
            value = unpack(b, as_integers(b, op.source), dst.element_type, list(dst.get_shape()))
        else:
            value = pack(b, op.source, IntegerType(word_bits), list(dst.get_shape()))
            if value.type != TensorType(dst.element_type, dst.get_shape()):
                value = b.insert(arith.BitcastOp(
                    value, TensorType(dst.element_type, dst.get_shape()))).result
        block = op.parent_block()
        assert block is not None
        new = before.next_op if before is not None else block.first_op
        while new is not None and new is not op:
            for inner in new.walk():
                inner.location = op.location
            new = new.next_op
        op.result.replace_all_uses_with(value)
        op.detach()
        op.erase()


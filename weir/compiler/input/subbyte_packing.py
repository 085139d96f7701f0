"""Packing and unpacking of sub-byte elements, as linalg on tensors: what a `flow.tensor.bitcast`
between an integer of whole bytes (i8..i64) and a sub-byte element type (i1 with
`#iree_encoding.packed_storage`, i2, i4, f4E2M1FN) means. weir keeps each sub-byte element in a
byte of its own (weir/format/element_types.py), so the bitcast is where IREE's packed layout
appears: the words' bits, lowest first, are the elements in row-major order (an i8 of 0b0011
holds the i1 elements 1, 1, 0, 0, 0, 0, 0, 0; an i8 of 0x21 the i4 elements 1, 2).

Unpacking reads each word once per element and shifts its bits down by the element's place in
the word (`linalg.index`); packing gathers the elements of a word as `per_word` slices and ORs
them together, so both are parallel generics every target compiles."""

from __future__ import annotations

import math

from weir.compiler.input.linalg_builders import generic, projection
from weir.ir.upstream import (
    arith,
    Attribute,
    BlockArgument,
    Builder,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    EmptyOp,
    IntegerAttr,
    IntegerType,
    linalg,
    SSAValue,
    tensor,
    TensorType,
)

_I64 = IntegerType(64)


def sub_byte_bits(element: Attribute) -> int | None:
    """The width of a sub-byte element type, or None for one of whole bytes."""
    width = getattr(element, "bitwidth", None)
    return width if isinstance(width, int) and width < 8 else None


def as_integers(b: Builder, value: SSAValue) -> SSAValue:
    """`value` with its elements read as signless integers of their width (a float's bits)."""
    t = value.type
    assert isinstance(t, TensorType)
    if isinstance(t.element_type, IntegerType):
        return value
    width = t.element_type.bitwidth  # type: ignore[attr-defined]
    ints = TensorType(IntegerType(width), t.get_shape())
    return b.insert(arith.BitcastOp(value, ints)).result


def reshape(b: Builder, value: SSAValue, shape: list[int]) -> SSAValue:
    t = value.type
    assert isinstance(t, TensorType)
    if list(t.get_shape()) == shape:
        return value
    dims = b.insert(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
        TensorType(_I64, [len(shape)]), shape))).result
    return b.insert(tensor.ReshapeOp(value, dims, TensorType(t.element_type, shape))).results[0]


def unpack(b: Builder, words: SSAValue, element: Attribute, shape: list[int]) -> SSAValue:
    """The static-shaped tensor of `element` (sub-byte) whose packed bits are `words`."""
    bits = sub_byte_bits(element)
    word_type = words.type.element_type  # type: ignore[attr-defined]
    assert bits is not None and isinstance(word_type, IntegerType)
    width = word_type.width.data
    per_word = width // bits
    count = math.prod(words.type.get_shape())  # type: ignore[attr-defined]
    flat = reshape(b, words, [count])
    lanes = IntegerType(bits)
    init = b.insert(EmptyOp([], TensorType(lanes, [count, per_word]))).tensor

    def body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
        place = bb.insert(linalg.IndexOp(1)).result
        place = bb.insert(arith.IndexCastOp(place, word_type)).result
        step = bb.insert(arith.ConstantOp(IntegerAttr(bits, word_type))).result
        amount = bb.insert(arith.MuliOp(place, step)).result
        shifted = bb.insert(arith.ShRUIOp(args[0], amount)).result
        bb.insert(linalg.YieldOp(bb.insert(arith.TruncIOp(shifted, lanes)).result))

    unpacked = generic(b, [flat], [init], [projection(2, [0]), projection(2, [0, 1])], (), 2,
                       body).results[0]
    result = reshape(b, unpacked, shape)
    if element != lanes:
        result = b.insert(arith.BitcastOp(result, TensorType(element, shape))).result
    return result


def pack(b: Builder, elements: SSAValue, word_type: IntegerType, shape: list[int]) -> SSAValue:
    """The static-shaped tensor of `word_type` words that packs `elements` (sub-byte)."""
    ints = as_integers(b, elements)
    bits = sub_byte_bits(ints.type.element_type)  # type: ignore[attr-defined]
    assert bits is not None
    per_word = word_type.width.data // bits
    count = math.prod(shape)
    grouped = reshape(b, ints, [count, per_word])
    lanes = ints.type.element_type  # type: ignore[attr-defined]
    parts = [b.insert(tensor.ExtractSliceOp.build(
        operands=[grouped, [], [], []], result_types=[TensorType(lanes, [count])],
        properties={"static_offsets": DenseArrayBase.from_list(_I64, [0, j]),
                    "static_sizes": DenseArrayBase.from_list(_I64, [count, 1]),
                    "static_strides": DenseArrayBase.from_list(_I64, [1, 1])})).results[0]
             for j in range(per_word)]
    init = b.insert(EmptyOp([], TensorType(word_type, [count]))).tensor

    def body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
        word = bb.insert(arith.ExtUIOp(args[0], word_type)).result
        for j in range(1, per_word):
            lane = bb.insert(arith.ExtUIOp(args[j], word_type)).result
            amount = bb.insert(arith.ConstantOp(IntegerAttr(j * bits, word_type))).result
            lane = bb.insert(arith.ShLIOp(lane, amount)).result
            word = bb.insert(arith.OrIOp(word, lane)).result
        bb.insert(linalg.YieldOp(word))

    packed = generic(b, parts, [init], [projection(1, [0])] * (per_word + 1), (), 1,
                     body).results[0]
    return reshape(b, packed, shape)


"""Lowers `linalg.pack` and `linalg.unpack` to data movement weir already compiles:

    pack   = (pad to whole tiles: a fill and an insert_slice) -> expand_shape (each tiled
             dimension d into [d / tile, tile]) -> transpose (outer dimensions in
             outer_dims_perm order, then the tiles in inner_dims_pos order) into the dest
    unpack = transpose back into [d / tile, tile] pairs -> collapse_shape -> extract_slice of
             the dest's sizes (dropping the padding)

Reshapes are metadata on the host; the fill, insert and transpose run in dispatches, so pack and
unpack work on every target, with static or dynamic sizes and tiles. A static pack whose tiles
do not divide its source needs a padding value (as in MLIR): a located compile error."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.shapes import dynamic_dims
from weir.compiler.state import CompilationState
from weir.compiler.tensor_shapes import (
    as_value,
    dynamic_of,
    product,
    reassociation,
    Size,
    sizes_of,
)
from weir.dialects.linalg_pack import PackOp, UnPackOp
from weir.ir.diagnostics import error_at, locate_created
from weir.ir.upstream import (
    arith,
    Builder,
    DenseArrayBase,
    DYNAMIC_INDEX,
    EmptyOp,
    IntegerType,
    InsertPoint,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)

i64 = IntegerType(64)


class LowerPackUnpack(Pass):
    flag = "lower-pack-unpack"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in [op for op in module.walk() if isinstance(op, PackOp | UnPackOp)]:
            b = Builder(InsertPoint.before(op))
            new = _pack(op, b) if isinstance(op, PackOp) else _unpack(op, b)
            locate_created(op)
            op.result.replace_all_uses_with(new)
            op.detach()
            op.erase()


def _ceil_div(b: Builder, x: Size, y: Size) -> Size:
    if isinstance(x, int) and isinstance(y, int):
        return -(-x // y)
    return b.insert(arith.CeilDivUIOp(as_value(b, x), as_value(b, y))).result


def _static(sizes: list[Size]) -> list[int]:
    return [s if isinstance(s, int) else DYNAMIC_INDEX for s in sizes]


def _groups(rank: int, tiled: set[int]) -> tuple[list[list[int]], list[int]]:
    """The expanded dimensions of each unpacked dimension ([outer, tile] for tiled ones) and
    where each group starts."""
    groups, starts, at = [], [], 0
    for d in range(rank):
        width = 2 if d in tiled else 1
        starts.append(at)
        groups.append(list(range(at, at + width)))
        at += width
    return groups, starts


def _tensor(element: object, sizes: list[Size]) -> TensorType:
    return TensorType(element, _static(sizes))


def _pack(op: PackOp, b: Builder) -> SSAValue:
    source_t, dest_t = op.source.type, op.dest.type
    assert isinstance(source_t, TensorType) and isinstance(dest_t, TensorType)
    rank = source_t.get_num_dims()
    perm, positions, tiles = op.perm(), op.positions(), op.tiles()
    tile_of = dict(zip(positions, tiles))
    sizes = sizes_of(source_t, dynamic_dims(op.source, InsertPoint.before(op)))
    outer = {d: _ceil_div(b, sizes[d], t) for d, t in tile_of.items()}
    padded = [product(b, [outer[d], tile_of[d]]) if d in tile_of else sizes[d]
              for d in range(rank)]
    value = op.source
    whole = all(isinstance(p, int) and p == s for p, s in zip(padded, sizes))
    if not whole:
        if op.padding_value is None:
            if all(isinstance(s, int) for s in padded + sizes):
                raise error_at(op, f"linalg.pack of {source_t} into tiles {tiles} needs a "
                                   "padding_value: the tiles do not divide the source")
        else:
            value = _pad(b, value, op.padding_value, _tensor(source_t.element_type, padded),
                         sizes, padded)
    groups, starts = _groups(rank, set(tile_of))
    expanded: list[Size] = []
    for d in range(rank):
        expanded += [outer[d], tile_of[d]] if d in tile_of else [padded[d]]
    permutation = [starts[d] for d in perm] + [starts[d] + 1 for d in positions]
    # Sizes the dest knows statically stand for computed ones (a dynamic tile of a static type).
    for j, e in enumerate(permutation):
        if dest_t.get_shape()[j] != DYNAMIC_INDEX:
            expanded[e] = dest_t.get_shape()[j]
    expanded_t = _tensor(source_t.element_type, expanded)
    reshaped = b.insert(tensor.ExpandShapeOp(
        value, [as_value(b, s) for s in expanded if not isinstance(s, int)],
        reassociation(groups), _static(expanded), expanded_t)).result
    return b.insert(linalg.TransposeOp(reshaped, op.dest, DenseArrayBase.from_list(
        i64, permutation), dest_t)).results[0]


def _pad(b: Builder, value: SSAValue, padding: SSAValue, padded_t: TensorType,
         sizes: list[Size], padded: list[Size]) -> SSAValue:
    """`value` at the start of a tensor of the padded sizes filled with `padding`."""
    empty = b.insert(EmptyOp(dynamic_of(padded_t, padded, b), padded_t)).tensor
    filled = b.insert(linalg.FillOp((padding,), (empty,), (padded_t,))).results[0]
    return b.insert(tensor.InsertSliceOp.get(
        value, filled, static_sizes=_static(sizes), static_offsets=[0] * len(sizes),
        static_strides=[1] * len(sizes), sizes=[s for s in sizes if not isinstance(s, int)],
        result_type=padded_t)).result


def _unpack(op: UnPackOp, b: Builder) -> SSAValue:
    source_t, dest_t = op.source.type, op.dest.type
    assert isinstance(source_t, TensorType) and isinstance(dest_t, TensorType)
    rank = dest_t.get_num_dims()
    perm, positions = op.perm(), op.positions()
    source = sizes_of(source_t, dynamic_dims(op.source, InsertPoint.before(op)))
    outer_at = {d: j for j, d in enumerate(perm)}   # unpacked dim -> its outer source dim
    tile_at = {d: rank + i for i, d in enumerate(positions)}
    groups, _ = _groups(rank, set(tile_at))
    order: list[int] = []                            # expanded dim -> source dim
    for d in range(rank):
        order += [outer_at[d], tile_at[d]] if d in tile_at else [outer_at[d]]
    expanded = [source[j] for j in order]
    expanded_t = _tensor(source_t.element_type, expanded)
    init = b.insert(EmptyOp(dynamic_of(expanded_t, expanded, b), expanded_t)).tensor
    moved = b.insert(linalg.TransposeOp(op.source, init, DenseArrayBase.from_list(i64, order),
                                        expanded_t)).results[0]
    padded = [product(b, [expanded[e] for e in g]) for g in groups]
    padded_t = _tensor(source_t.element_type, padded)
    collapsed = b.insert(tensor.CollapseShapeOp(
        operands=[moved], result_types=[padded_t],
        properties={"reassociation": reassociation(groups)})).results[0]
    sizes = sizes_of(dest_t, dynamic_dims(op.dest, InsertPoint.before(op)))
    if padded_t == dest_t and all(isinstance(s, int) for s in padded):
        return collapsed
    return b.insert(tensor.ExtractSliceOp(collapsed, [0] * rank, sizes, [1] * rank,
                                          dest_t)).results[0]

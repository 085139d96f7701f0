"""The Winograd transforms (weir.dialects.iree_linalg_ext_winograd) as linalg, for
lower-linalg-ext: each is L x R, two contractions with constant matrices that every target
already compiles as generics:

- input_transform: the image is zero-padded to (H' + 1) r along each image dimension and viewed
  as (H' + 1, r) blocks; tile t's T = r + k - 1 rows are block t followed by the first k - 1 rows
  of block t + 1 (two slices and a concat: tiles overlap, which no reshape expresses), then
  B^T . tile . B;
- filter_transform: G . g . G^T;
- output_transform: A^T . m . A, written into the output viewed as (N, H', r, W', r, C) and
  collapsed to (N, H, W, C) (or the NCHW layout).

The transforms need static shapes (the tile counts are part of the types).

The matrices for r = 6, k = 3 are those of Liu et al., "Optimizing Winograd-Based Convolution
with Tensor Cores" (ICPP 2021), the ones IREE uses, so results agree with IREE's to rounding."""

from __future__ import annotations

from collections.abc import Sequence

from weir.compiler.input.linalg_builders import PARALLEL, REDUCTION
from weir.compiler.tensor_shapes import reassociation
from weir.dialects.iree_linalg_ext_winograd import (
    FilterTransform,
    InputTransform,
    OutputTransform,
    WinogradOp,
)
from weir.dialects.linalg_bodies import body_region
from weir.ir.diagnostics import error_at, locate_created
from weir.ir.upstream import (
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineMapAttr,
    arith,
    Attribute,
    BlockArgument,
    Builder,
    DenseIntOrFPElementsAttr,
    EmptyOp,
    FloatAttr,
    InsertPoint,
    linalg,
    SSAValue,
    tensor,
    TensorType,
)

Matrix = tuple[tuple[float, ...], ...]

# B^T (T x T), G (T x k) and A^T (r x T) for output tile 6 and kernel 3.
_BT: Matrix = (
    (1, 0, -21 / 4, 0, 21 / 4, 0, -1, 0),
    (0, 1, 1, -17 / 4, -17 / 4, 1, 1, 0),
    (0, -1, 1, 17 / 4, -17 / 4, -1, 1, 0),
    (0, 1 / 2, 1 / 4, -5 / 2, -5 / 4, 2, 1, 0),
    (0, -1 / 2, 1 / 4, 5 / 2, -5 / 4, -2, 1, 0),
    (0, 2, 4, -5 / 2, -5, 1 / 2, 1, 0),
    (0, -2, 4, 5 / 2, -5, -1 / 2, 1, 0),
    (0, -1, 0, 21 / 4, 0, -21 / 4, 0, 1),
)
_G: Matrix = (
    (1, 0, 0),
    (-2 / 9, -2 / 9, -2 / 9),
    (-2 / 9, 2 / 9, -2 / 9),
    (1 / 90, 1 / 45, 2 / 45),
    (1 / 90, -1 / 45, 2 / 45),
    (32 / 45, 16 / 45, 8 / 45),
    (32 / 45, -16 / 45, 8 / 45),
    (0, 0, 1),
)
# Row i holds the interpolation points 0, 1, -1, 2, -2, 1/2, -1/2 to the power i (0 ** 0 is 1),
# and in the last column the point at infinity, which only the last row sees.
_AT: Matrix = tuple(
    tuple(float(p) ** i if p is not None else float(i == 5)
          for p in (0, 1, -1, 2, -2, 1 / 2, -1 / 2, None)) for i in range(6))

MATRICES: dict[tuple[int, int], tuple[Matrix, Matrix, Matrix]] = {(6, 3): (_BT, _G, _AT)}


def _transposed(m: Matrix) -> Matrix:
    return tuple(zip(*m))


def lower_winograd(op: WinogradOp) -> None:
    """Replaces `op` by its linalg."""
    for t in (op.source, op.dest):
        if not t.has_static_shape():
            raise error_at(op, f"'{op.name}' needs static shapes, got {t}")
    b = Builder(InsertPoint.before(op))
    if isinstance(op, InputTransform):
        value = _input(b, op)
    elif isinstance(op, FilterTransform):
        value = _filter(b, op)
    else:
        assert isinstance(op, OutputTransform)
        value = _output(b, op)
    locate_created(op)
    op.result.replace_all_uses_with(value)
    op.detach()
    op.erase()


# ------------------------------------------------------------------------------ the transforms


def _input(b: Builder, op: InputTransform) -> SSAValue:
    bt, _, _ = MATRICES[(op.r, op.k)]
    shape = list(op.source.get_shape())
    rank = len(shape)
    h, w = op.layout if rank == 4 else (0, 1)
    dest = list(op.dest.get_shape())
    tiles = {h: dest[3] if rank == 4 else 1, w: dest[4] if rank == 4 else 1}
    x = _pad(b, op.input, [(tiles[d] + 1) * op.r if d in tiles else s
                           for d, s in enumerate(shape)])
    labels: list[str] = []
    for d in range(rank):
        if d in tiles:
            x = _gather_tiles(b, x, len(labels), tiles[d], op.r, op.k)
            labels += ["th", "a"] if d == h else ["tw", "b"]
        else:
            labels.append("c" if d == (1 if op.channels_first else 3) else "n")
    rest = ["n", "th", "tw", "c"] if rank == 4 else []
    return _sandwich(b, op, x, labels, bt, _transposed(bt), rest, ["i", "j", *rest])


def _filter(b: Builder, op: FilterTransform) -> SSAValue:
    _, g, _ = MATRICES[(op.r, op.k)]
    rank = len(op.source.get_shape())
    if rank == 2:
        labels, rest = ["a", "b"], []
    else:
        labels = ["f", "c", "a", "b"] if op.channels_first else ["a", "b", "c", "f"]
        rest = ["c", "f"]
    return _sandwich(b, op, op.input, labels, g, _transposed(g), rest, ["i", "j", *rest])


def _output(b: Builder, op: OutputTransform) -> SSAValue:
    _, _, at = MATRICES[(op.r, op.k)]
    rank = len(op.source.get_shape())
    rest = ["n", "th", "tw", "c"] if rank == 6 else []
    if rank == 2:
        out_labels = ["i", "j"]
    elif op.channels_first:
        out_labels = ["n", "c", "th", "i", "tw", "j"]
    else:
        out_labels = ["n", "th", "i", "tw", "j", "c"]
    blocks = _sandwich(b, op, op.input, ["a", "b", *rest], at, _transposed(at), rest,
                       out_labels)
    if rank == 2:
        return blocks
    pairs = {"th", "tw"}
    groups: list[list[int]] = []
    for at_label, label in enumerate(out_labels):
        if groups and out_labels[at_label - 1] in pairs:
            groups[-1].append(at_label)  # the tile's row (column) joins its block
        else:
            groups.append([at_label])
    return b.insert(tensor.CollapseShapeOp(
        operands=[blocks], result_types=[op.dest],
        properties={"reassociation": reassociation(groups)})).results[0]


# ------------------------------------------------------------------------------------ helpers


def _sandwich(b: Builder, op: WinogradOp, x: SSAValue, x_labels: Sequence[str],
              left: Matrix, right: Matrix, rest: Sequence[str],
              out_labels: Sequence[str]) -> SSAValue:
    """out[i, j, rest] = sum over (a, b) of left[i, a] x[a, b, rest] right[b, j], as two
    contractions; `x_labels` name x's dimensions (a, b and rest, any order; a size-1 dimension
    that is none of them is read at 0) and `out_labels` the result's (i, j and rest)."""
    element = op.source.element_type
    sizes = dict(zip(x_labels, x.type.get_shape()))  # type: ignore[attr-defined]
    sizes.update(i=len(left), j=len(right[0]))
    half = _contract(b, _constant(b, left, element), ("i", "a"), x, x_labels,
                     ["i", "b", *rest], "a", sizes, element)
    return _contract(b, _constant(b, right, element), ("b", "j"), half, ["i", "b", *rest],
                     list(out_labels), "b", sizes, element)


def _contract(b: Builder, matrix: SSAValue, matrix_labels: tuple[str, str], x: SSAValue,
              x_labels: Sequence[str], out_labels: list[str], reduced: str,
              sizes: dict[str, int], element: Attribute) -> SSAValue:
    """out[out_labels] = sum over `reduced` of matrix[matrix_labels] * x[x_labels]."""
    domain = [*out_labels, reduced]

    def amap(labels: Sequence[str]) -> AffineMapAttr:
        exprs: list[AffineExpr] = [AffineDimExpr(domain.index(name)) if name in domain
                                   else AffineConstantExpr(0) for name in labels]
        return AffineMapAttr(AffineMap(len(domain), 0, tuple(exprs)))
    out_t = TensorType(element, [sizes[name] for name in out_labels])
    zero = b.insert(arith.ConstantOp(FloatAttr(0.0, element))).result  # type: ignore[arg-type]
    init = b.insert(EmptyOp([], out_t)).tensor
    init = b.insert(linalg.FillOp((zero,), (init,), (out_t,))).results[0]

    def body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
        m, v, acc = args
        product = bb.insert(arith.MulfOp(m, v)).result
        bb.insert(linalg.YieldOp(bb.insert(arith.AddfOp(acc, product)).result))
    iterators = [PARALLEL] * len(out_labels) + [REDUCTION]
    return b.insert(linalg.GenericOp(
        [matrix, x], [init], body_region([element] * 3, body),
        [amap(matrix_labels), amap(x_labels), amap(out_labels)], iterators,
        [out_t])).results[0]


def _constant(b: Builder, m: Matrix, element: Attribute) -> SSAValue:
    t = TensorType(element, [len(m), len(m[0])])
    return b.insert(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
        t, [float(v) for row in m for v in row]))).result


def _pad(b: Builder, x: SSAValue, padded: list[int]) -> SSAValue:
    """`x` at the start of a zero tensor of shape `padded`."""
    t = x.type
    assert isinstance(t, TensorType)
    shape = list(t.get_shape())
    if shape == padded:
        return x
    padded_t = TensorType(t.element_type, padded)
    zero = b.insert(arith.ConstantOp(FloatAttr(0.0, t.element_type))).result  # type: ignore[arg-type]
    empty = b.insert(EmptyOp([], padded_t)).tensor
    filled = b.insert(linalg.FillOp((zero,), (empty,), (padded_t,))).results[0]
    return b.insert(tensor.InsertSliceOp.get(
        x, filled, static_sizes=shape, static_offsets=[0] * len(shape),
        static_strides=[1] * len(shape), result_type=padded_t)).result


def _gather_tiles(b: Builder, x: SSAValue, d: int, tiles: int, r: int, k: int) -> SSAValue:
    """Dimension `d` of `x` (of size (tiles + 1) r) as two, (tiles, r + k - 1): tile t is rows
    t r .. t r + r + k - 2."""
    t = x.type
    assert isinstance(t, TensorType)
    shape = list(t.get_shape())
    element = t.element_type
    blocked = shape[:d] + [tiles + 1, r] + shape[d + 1:]
    groups = [[i] for i in range(d)] + [[d, d + 1]] + [[i + 1] for i in range(d + 1, len(shape))]
    x = b.insert(tensor.ExpandShapeOp(x, [], reassociation(groups), blocked,
                                      TensorType(element, blocked))).result
    parts = []
    for first, rows in ((0, r), (1, k - 1)):
        offsets = [0] * len(blocked)
        sizes = list(blocked)
        offsets[d], sizes[d], sizes[d + 1] = first, tiles, rows
        parts.append(b.insert(tensor.ExtractSliceOp(
            x, offsets, sizes, [1] * len(blocked), TensorType(element, sizes))).results[0])
    tiled = list(blocked)
    tiled[d], tiled[d + 1] = tiles, r + k - 1
    return b.insert(tensor.ConcatOp(parts, d + 1, TensorType(element, tiled))).result

"""weir's additions to the `linalg` dialect: the named ops MLIR has and xDSL 0.74 lacks
(DESIGN.md §3), in MLIR's textual syntax, each checking its operand shapes with a message that
names the operands and sizes that disagree.

- Contractions (`batch_matmul`, `batch_matvec`, `matvec`, `vecmat`, `dot`, `matmul_transpose_a/b`,
  `batch_matmul_transpose_a/b`) are one class, `NamedContraction`, driven by an einsum-like spec:
  the spec gives the loops, the maps, the iterator kinds and the shape check at once.
- Window ops (the convolutions and poolings xDSL lacks) are in `linalg_windows`, one class per
  op made from its layout in `weir.ir.window_ops`.
- `linalg.map` and `linalg.softmax` have syntax of their own (in `linalg_map`); elementwise
  named ops xDSL lacks (`negf`) are in `linalg_elementwise`.
- `MatmulOp` refines xDSL's `linalg.matmul`: it accepts MLIR's `indexing_maps = [...]` (xDSL
  only takes them inside an attribute dictionary, and prints none back) and casts mixed operand
  types in its body the way MLIR's matmul does; `batch_matmul` takes them too. `ReduceOp` refines
  `linalg.reduce` with MLIR's short form `linalg.reduce { arith.addf } ...`, and `GenericOp`,
  `TransposeOp` and `BroadcastOp` read every form MLIR prints of them.

The textual forms themselves (operand lists, short forms, results) are in `linalg_syntax`.

`weir.ir.context` loads this dialect on top of xDSL's `linalg`; a class here that subclasses an
upstream op of the same name replaces it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DYNAMIC_INDEX,
    DenseArrayBase,
    ShapedType,
    i64,
)
from xdsl.dialects.linalg import ops as upstream
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.irdl import irdl_op_definition, opt_prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from weir.dialects.linalg_bodies import multiply_add
from weir.dialects.linalg_elementwise import OPS as ELEMENTWISE_OPS
from weir.dialects.linalg_map import MapOp, SoftmaxOp
from weir.dialects.linalg_windows import KERNEL_WINDOW_OPS, WINDOW_OPS
from weir.dialects.linalg_pack import PackOp, UnPackOp
from weir.dialects.linalg_syntax import (
    element_type,
    parse_generic,
    parse_operands,
    parse_optional_indexing_maps,
    parse_optional_payload,
    parse_region_with_arguments,
    payload_body,
    print_operands,
    print_payload,
    print_region_with_arguments,
    short_form_payload,
)


def _shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    return tuple(t.get_shape()) if isinstance(t, ShapedType) else ()


def _sizes_agree(named: Sequence[tuple[str, SSAValue, str]]) -> None:
    """Each (role, value, letters): the value has one dimension per letter, and every letter has
    one static size across all values. Raises naming the letter, the roles and their sizes."""
    seen: dict[str, tuple[str, int, int]] = {}
    for role, value, letters in named:
        shape = _shape(value)
        if not isinstance(value.type, ShapedType) or len(shape) != len(letters):
            raise VerifyException(f"{role} must have rank {len(letters)}, got {value.type}")
        for dim, (letter, size) in enumerate(zip(letters, shape)):
            if size == DYNAMIC_INDEX:
                continue
            if letter in seen and seen[letter][1] != size:
                other, other_size, other_dim = seen[letter]
                raise VerifyException(
                    f"size of {letter} differs: {other} dimension {other_dim} is {other_size}, "
                    f"{role} dimension {dim} is {size}")
            seen.setdefault(letter, (role, size, dim))


# ----------------------------------------------------------------------------- contractions


class NamedContraction(NamedOperation):
    """A named contraction given by `SPEC`, e.g. "MK,KN->MN": one letter per operand dimension.
    The loops are the output's letters then the reduced ones, in order of appearance; a letter
    the output lacks is a reduction."""

    SPEC: ClassVar[str]
    ROLES: ClassVar[tuple[str, str, str]] = ("lhs", "rhs", "output")
    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True
    # Whether MLIR gives the op an `indexing_maps` attribute (matmul's and batch_matmul's
    # transposed and broadcast forms); the class then defines that property.
    TAKES_MAPS: ClassVar[bool] = False

    @classmethod
    def parse(cls, parser: Parser) -> NamedOperation:
        """MLIR's `indexing_maps = [...]` in front of the operands: the op's own maps are
        accepted on any contraction, other maps only where MLIR has them."""
        pos = parser.pos
        maps = parse_optional_indexing_maps(parser)
        op = super().parse(parser)
        assert isinstance(op, NamedContraction)
        if maps is not None and maps != op.default_maps():
            if not cls.TAKES_MAPS:
                parser.raise_error(f"{cls.name} takes no indexing_maps other than its own "
                                   f"{op.default_maps()}", pos)
            op.properties["indexing_maps"] = maps
        return op

    def print(self, printer: Printer) -> None:
        if self.has_explicit_maps():
            printer.print_string(" indexing_maps = ")
            printer.print_attribute(self.properties["indexing_maps"])
        super().print(printer)

    def default_maps(self) -> ArrayAttr[AffineMapAttr]:
        loops = self.loops()
        return ArrayAttr(AffineMapAttr(AffineMap(len(loops), 0, tuple(
            AffineDimExpr(loops.index(c)) for c in spec))) for spec in self.letters())

    def has_explicit_maps(self) -> bool:
        maps = self.properties.get("indexing_maps")
        return maps is not None and maps != self.default_maps()

    @classmethod
    def letters(cls) -> tuple[str, str, str]:
        ins, out = cls.SPEC.split("->")
        lhs, rhs = ins.split(",")
        return lhs, rhs, out

    @classmethod
    def loops(cls) -> str:
        lhs, rhs, out = cls.letters()
        reduced = "".join(dict.fromkeys(c for c in lhs + rhs if c not in out))
        return out + reduced

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return multiply_add(inputs, outputs)

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        maps = self.properties.get("indexing_maps", self.default_maps())
        assert isinstance(maps, ArrayAttr)
        return tuple(m.data for m in maps.data)  # type: ignore[attr-defined]

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        out = self.letters()[2]
        return ArrayAttr(IteratorTypeAttr.parallel() if c in out else IteratorTypeAttr.reduction()
                         for c in self.loops())

    def operand_letters(self) -> list[str] | None:
        """The loop letter of each dimension of each operand; None when a map result is not a
        plain loop dimension (its sizes are then not checked here)."""
        if not self.has_explicit_maps():
            return list(self.letters())
        loops = self.loops()
        maps = self.get_default_indexing_maps()
        if len(maps) != 3 or any(m.num_dims != len(loops) or m.num_symbols for m in maps):
            raise VerifyException(f"indexing_maps must be 3 maps over the {len(loops)} loops "
                                  f"({', '.join(loops.lower())})")
        if not all(isinstance(e, AffineDimExpr) for m in maps for e in m.results):
            return None
        return ["".join(loops[e.position] for e in m.results) for m in maps]  # type: ignore[attr-defined]

    def verify_(self) -> None:
        if len(self.inputs) != 2 or len(self.outputs) != 1:
            raise VerifyException(f"expects 2 inputs ({self.ROLES[0]}, {self.ROLES[1]}) and 1 "
                                  f"output, got {len(self.inputs)} and {len(self.outputs)}")
        letters = self.operand_letters()
        if letters is not None:
            _sizes_agree(list(zip(self.ROLES, [*self.inputs, *self.outputs], letters)))
        super().verify_()


@irdl_op_definition
class BatchMatmulOp(NamedContraction):
    name = "linalg.batch_matmul"
    SPEC: ClassVar[str] = "BMK,BKN->BMN"
    TAKES_MAPS: ClassVar[bool] = True
    indexing_maps = opt_prop_def(ArrayAttr[AffineMapAttr])


@irdl_op_definition
class BatchMatvecOp(NamedContraction):
    name = "linalg.batch_matvec"
    SPEC: ClassVar[str] = "BMK,BK->BM"
    ROLES: ClassVar[tuple[str, str, str]] = ("matrix", "vector", "output")


@irdl_op_definition
class BatchMatmulTransposeAOp(NamedContraction):
    name = "linalg.batch_matmul_transpose_a"
    SPEC: ClassVar[str] = "BKM,BKN->BMN"


@irdl_op_definition
class BatchMatmulTransposeBOp(NamedContraction):
    name = "linalg.batch_matmul_transpose_b"
    SPEC: ClassVar[str] = "BMK,BNK->BMN"


@irdl_op_definition
class MatmulTransposeAOp(NamedContraction):
    name = "linalg.matmul_transpose_a"
    SPEC: ClassVar[str] = "KM,KN->MN"


@irdl_op_definition
class MatmulTransposeBOp(NamedContraction):
    name = "linalg.matmul_transpose_b"
    SPEC: ClassVar[str] = "MK,NK->MN"


@irdl_op_definition
class MatvecOp(NamedContraction):
    name = "linalg.matvec"
    SPEC: ClassVar[str] = "MK,K->M"
    ROLES: ClassVar[tuple[str, str, str]] = ("matrix", "vector", "output")


@irdl_op_definition
class VecmatOp(NamedContraction):
    name = "linalg.vecmat"
    SPEC: ClassVar[str] = "K,KN->N"
    ROLES: ClassVar[tuple[str, str, str]] = ("vector", "matrix", "output")


@irdl_op_definition
class DotOp(NamedContraction):
    name = "linalg.dot"
    SPEC: ClassVar[str] = "K,K->"


class MatmulOp(upstream.MatmulOp):
    """`linalg.matmul`, optionally with MLIR's `indexing_maps = [...]` before `ins`. A plain
    subclass: it keeps xDSL's operation definition and overrides only methods."""

    @classmethod
    def parse(cls, parser: Parser) -> MatmulOp:
        maps = parse_optional_indexing_maps(parser)
        op = super().parse(parser)
        assert isinstance(op, MatmulOp)
        if maps is not None:
            op.properties["indexing_maps"] = maps
        return op

    def print(self, printer: Printer) -> None:
        if self.has_explicit_maps():
            printer.print_string(" indexing_maps = ")
            printer.print_attribute(self.indexing_maps)
        super().print(printer)

    def has_explicit_maps(self) -> bool:
        default = MatmulOp.get_irdl_definition().properties["indexing_maps"].default_value
        return self.indexing_maps != default

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return multiply_add(inputs, outputs)

    def verify_(self) -> None:
        if len(self.inputs) != 2 or len(self.outputs) != 1:
            raise VerifyException(f"expects 2 inputs (lhs, rhs) and 1 output, got "
                                  f"{len(self.inputs)} and {len(self.outputs)}")
        maps = [m.data for m in self.indexing_maps.data]
        if len(maps) != 3 or any(m.num_dims != 3 or m.num_symbols for m in maps):
            raise VerifyException("indexing_maps must be 3 maps over the loops (m, n, k)")
        if all(isinstance(e, AffineDimExpr) for m in maps for e in m.results):
            letters = ["".join("MNK"[e.position] for e in m.results) for m in maps]  # type: ignore[attr-defined]
            _sizes_agree(list(zip(("lhs", "rhs", "output"), [*self.inputs, *self.outputs],
                                  letters)))
        super().verify_()


def _check_axes(axes: Sequence[int], rank: int, what: str) -> None:
    """xDSL's verifiers index shapes with `dimensions`/`permutation` before checking them (an
    IndexError on `dimensions = [7]`); these checks come first and say what is wrong."""
    for axis in axes:
        if not 0 <= axis < rank:
            raise VerifyException(f"{what} {list(axes)}: {axis} is not a dimension of a rank-{rank} "
                                  "operand")
    if len(set(axes)) != len(axes):
        raise VerifyException(f"{what} {list(axes)} names a dimension twice")


def _rank(value: SSAValue) -> int:
    t = value.type
    return len(t.get_shape()) if isinstance(t, ShapedType) else 0


class GenericOp(upstream.GenericOp):
    """`linalg.generic`, parsed by `linalg_syntax.parse_generic`: several results written
    `-> (T, U)`, every attribute of the leading dictionary kept, its kinds checked."""

    @classmethod
    def parse(cls, parser: Parser) -> upstream.GenericOp:
        return parse_generic(parser, cls)


class FillOp(upstream.FillOp):
    """`linalg.fill` with its operands counted (xDSL accepts `linalg.fill outs(...)` with no
    value, which crashed the passes after it)."""

    def verify_(self) -> None:
        if len(self.inputs) != 1 or len(self.outputs) != 1:
            raise VerifyException(f"expects 1 input (the value) and 1 output, got "
                                  f"{len(self.inputs)} and {len(self.outputs)}")
        super().verify_()


class _TrailingAttributes:
    """MLIR prints an attribute dictionary after `permutation = [...]` / `dimensions = [...]`
    of linalg.transpose and linalg.broadcast; xDSL's forms end before it."""

    @classmethod
    def parse(cls, parser: Parser) -> Operation:
        op = super().parse(parser)  # type: ignore[misc]
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        super().print(printer)  # type: ignore[misc]
        if self.attributes:  # type: ignore[attr-defined]
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)  # type: ignore[attr-defined]


class TransposeOp(_TrailingAttributes, upstream.TransposeOp):
    """`linalg.transpose` whose permutation is checked to be one before xDSL's verifier uses it."""

    def verify_(self) -> None:
        if len(self.inputs) != 1 or len(self.outputs) != 1:
            raise VerifyException(f"expects 1 input and 1 output, got {len(self.inputs)} and "
                                  f"{len(self.outputs)}")
        _check_axes(self.permutation.get_values(), _rank(self.inputs[0]), "permutation")
        super().verify_()


class BroadcastOp(_TrailingAttributes, upstream.BroadcastOp):
    """`linalg.broadcast` whose added dimensions are checked before xDSL's verifier uses them."""

    def verify_(self) -> None:
        _check_axes(self.dimensions.get_values(), _rank(self.init), "dimensions")
        super().verify_()


class ReduceOp(upstream.ReduceOp):
    """`linalg.reduce` in both of MLIR's forms: the long one, `ins(%x : T) outs(%init : U)
    dimensions = [1] {attrs} (%in: f32, %init: f32) { ... }`, and the short one
    `linalg.reduce { arith.addf } ins(...) outs(...) dimensions = [1]`, which applies the op to
    (accumulator, input element), in that order, as MLIR builds it. A plain subclass, like
    `MatmulOp`. Its dimensions are checked before xDSL's verifier uses them."""

    def verify_(self) -> None:
        _check_axes(self.dimensions.get_values(), _rank(self.input), "dimensions")
        super().verify_()

    # The body of the short form: the op on (accumulator, input), i.e. block arguments 1, 0.
    _SHORT_FORM_ARGS = (1, 0)

    @classmethod
    def parse(cls, parser: Parser) -> upstream.ReduceOp:
        pos = parser.pos
        payload = parse_optional_payload(parser, "linalg.reduce")
        inputs = parse_operands(parser, "ins")
        inits = parse_operands(parser, "outs")
        if len(inputs) != 1 or len(inits) != 1:
            parser.raise_error(f"linalg.reduce of {len(inputs)} input(s) into {len(inits)} "
                               "output(s) is not supported: weir takes one of each", pos)
        parser.parse_keyword("dimensions")
        parser.parse_punctuation("=")
        dimensions = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                       parser.parse_integer)
        attrs = parser.parse_optional_attr_dict()
        if payload is None:
            region = parse_region_with_arguments(parser)
        else:
            region = payload_body(parser, payload, [element_type(inputs[0]),
                                                    element_type(inits[0])],
                                  cls._SHORT_FORM_ARGS, element_type(inits[0]))
        op = cls(inputs[0], inits[0], DenseArrayBase.from_list(i64, dimensions), region)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        payload = short_form_payload(self.region, self._SHORT_FORM_ARGS)
        if payload is not None:
            print_payload(printer, payload)
        print_operands(printer, "ins", [self.input])
        print_operands(printer, "outs", [self.init])
        printer.print_string(" dimensions = [")
        printer.print_list(self.dimensions.get_values(), printer.print_int)
        printer.print_string("]")
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        if payload is None:
            print_region_with_arguments(printer, self.region)


# ------------------------------------------------------------------------------ the dialect

KERNEL_OPS: tuple[type[Operation], ...] = (BatchMatmulOp, *KERNEL_WINDOW_OPS)
"""Named ops, beyond xDSL's matmul/conv_2d_nhwc_hwcf/pooling_nchw_max, that stay named until a
target lowers them onto one of its kernels (Matmul, Conv2D, Pool2D): each is a dispatch root."""

DIALECT = Dialect("linalg", [
    BatchMatmulOp, BatchMatvecOp, BatchMatmulTransposeAOp, BatchMatmulTransposeBOp, MatmulTransposeAOp,
    MatmulTransposeBOp, MatvecOp, VecmatOp, DotOp, MatmulOp, ReduceOp, TransposeOp, BroadcastOp,
    GenericOp, FillOp, *WINDOW_OPS, MapOp, SoftmaxOp, *ELEMENTWISE_OPS,
    PackOp, UnPackOp,
])

"""`linalg.pack` and `linalg.unpack` (xDSL 0.74 has neither): a tensor cut into tiles along some
of its dimensions, the tiles' dimensions moved innermost, and back. The input phase lowers them
(lower-pack-unpack) to ops weir already compiles. Loaded as part of `linalg_ext.DIALECT`.

    %p = linalg.pack %src padding_value(%zero : f32) outer_dims_perm = [1, 0]
        inner_dims_pos = [0, 1] inner_tiles = [%t, 16] into %dest
        : tensor<?x?xf32> -> tensor<?x?x?x16xf32>
    %u = linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [0, 1]
        inner_tiles = [%t, 16] into %dest2 : tensor<?x?x?x16xf32> -> tensor<?x?xf32>

Inner tiles are integers or index values; the static list holds DYNAMIC_INDEX for the values."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, IndexType, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


def _parse_int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


def _parse_tiles(parser: Parser) -> tuple[list[int], list[SSAValue]]:
    static: list[int] = []
    dynamic: list[SSAValue] = []

    def one() -> None:
        value = parser.parse_optional_integer()
        if value is not None:
            static.append(value)
            return
        static.append(DYNAMIC_INDEX)
        dynamic.append(parser.parse_operand(IndexType()))
    parser.parse_comma_separated_list(parser.Delimiter.SQUARE, one)
    return static, dynamic


class _Tiling(IRDLOperation):
    """What pack and unpack share: source, dest, the tiled dimensions and their tile sizes, and
    the order of the outer dimensions."""

    source = operand_def(TensorType)
    dest = operand_def(TensorType)
    inner_tiles = var_operand_def(IndexType)
    result = result_def(TensorType)
    outer_dims_perm = prop_def(DenseArrayBase)
    inner_dims_pos = prop_def(DenseArrayBase)
    static_inner_tiles = prop_def(DenseArrayBase)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @property
    def unpacked_rank(self) -> int:
        """Rank of the tensor without tiles (source of a pack, result of an unpack)."""
        raise NotImplementedError

    def perm(self) -> list[int]:
        values = list(self.outer_dims_perm.get_values())
        return values or list(range(self.unpacked_rank))

    def positions(self) -> list[int]:
        return list(self.inner_dims_pos.get_values())

    def tiles(self) -> list[int | SSAValue]:
        """Each tile size: an int, or the index value giving it."""
        dynamic = iter(self.inner_tiles)
        return [next(dynamic) if t == DYNAMIC_INDEX else t
                for t in self.static_inner_tiles.get_values()]

    @classmethod
    def _parse_layout(cls, parser: Parser) -> dict[str, object]:
        perm: list[int] = []
        if parser.parse_optional_keyword("outer_dims_perm") is not None:
            parser.parse_punctuation("=")
            perm = _parse_int_list(parser)
        parser.parse_keyword("inner_dims_pos")
        parser.parse_punctuation("=")
        positions = _parse_int_list(parser)
        parser.parse_keyword("inner_tiles")
        parser.parse_punctuation("=")
        static, dynamic = _parse_tiles(parser)
        parser.parse_keyword("into")
        dest = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        return {"perm": perm, "positions": positions, "static": static, "dynamic": dynamic,
                "dest": parser.resolve_operand(dest, result_type), "attrs": attrs,
                "source_type": source_type, "result_type": result_type}

    def _print_layout(self, printer: Printer) -> None:
        if self.outer_dims_perm.get_values():
            printer.print_string(f" outer_dims_perm = {list(self.outer_dims_perm.get_values())}")
        printer.print_string(f" inner_dims_pos = {self.positions()} inner_tiles = [")
        printer.print_list(self.tiles(), lambda t: printer.print_string(str(t))
                           if isinstance(t, int) else printer.print_operand(t))
        printer.print_string("] into ")
        printer.print_operand(self.dest)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        name = self.name
        rank = self.unpacked_rank
        perm, positions = self.perm(), self.positions()
        if sorted(perm) != list(range(rank)):
            raise VerifyException(f"outer_dims_perm {perm} is not a permutation of "
                                  f"{rank} dimensions")
        if len(set(positions)) != len(positions) or any(not 0 <= p < rank for p in positions):
            raise VerifyException(f"inner_dims_pos {positions} must name distinct "
                                  f"dimensions below {rank}")
        static = list(self.static_inner_tiles.get_values())
        if len(static) != len(positions):
            raise VerifyException(f"{len(static)} inner tiles for {len(positions)} "
                                  "inner_dims_pos")
        if sum(t == DYNAMIC_INDEX for t in static) != len(self.inner_tiles):
            raise VerifyException(f"the inner tiles' values do not match the list")
        if any(t != DYNAMIC_INDEX and t <= 0 for t in static):
            raise VerifyException(f"inner tiles must be positive, got {static}")
        if self.result.type != self.dest.type:
            raise VerifyException(f"the result type {self.result.type} is not the "
                                  f"dest type {self.dest.type}")
        packed = self.result.type if isinstance(self, PackOp) else self.source.type
        assert isinstance(packed, TensorType)
        if packed.get_num_dims() != rank + len(positions):
            raise VerifyException(f"the packed type {packed} must have rank "
                                  f"{rank + len(positions)}")
        for tile, size in zip(static, packed.get_shape()[rank:]):
            if tile != DYNAMIC_INDEX and size != DYNAMIC_INDEX and tile != size:
                raise VerifyException(f"the packed type {packed} has tile sizes that "
                                      f"differ from inner_tiles {static}")


def _layout_properties(perm: Sequence[int], positions: Sequence[int],
                       static: Sequence[int]) -> dict[str, Attribute]:
    return {"outer_dims_perm": DenseArrayBase.from_list(i64, list(perm)),
            "inner_dims_pos": DenseArrayBase.from_list(i64, list(positions)),
            "static_inner_tiles": DenseArrayBase.from_list(i64, list(static))}


@irdl_op_definition
class PackOp(_Tiling):
    """result[outer..., tile...] = source[outer * tile + tile...] (or padding_value past the
    end of a source dimension; without it, tiles must divide the dimensions)."""

    name = "linalg.pack"
    padding_value = opt_operand_def()

    @property
    def unpacked_rank(self) -> int:
        t = self.source.type
        assert isinstance(t, TensorType)
        return t.get_num_dims()

    @classmethod
    def parse(cls, parser: Parser) -> PackOp:
        source = parser.parse_unresolved_operand()
        padding: list[SSAValue] = []
        if parser.parse_optional_keyword("padding_value") is not None:
            parser.parse_punctuation("(")
            value = parser.parse_unresolved_operand()
            parser.parse_punctuation(":")
            padding = [parser.resolve_operand(value, parser.parse_type())]
            parser.parse_punctuation(")")
        p = cls._parse_layout(parser)
        # Operands in definition order: the subclass's own field comes before the base's.
        op = cls.build(operands=[padding, parser.resolve_operand(source, p["source_type"]),
                                 p["dest"], p["dynamic"]],
                       result_types=[p["result_type"]],
                       properties=_layout_properties(p["perm"], p["positions"], p["static"]))
        op.attributes.update(p["attrs"])
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        if self.padding_value is not None:
            printer.print_string(" padding_value(")
            printer.print_operand(self.padding_value)
            printer.print_string(" : ")
            printer.print_attribute(self.padding_value.type)
            printer.print_string(")")
        self._print_layout(printer)

    def verify_(self) -> None:
        super().verify_()
        t = self.source.type
        assert isinstance(t, TensorType)
        if self.padding_value is not None and self.padding_value.type != t.element_type:
            raise VerifyException(f"padding_value of type {self.padding_value.type}"
                                  f" for elements of type {t.element_type}")


@irdl_op_definition
class UnPackOp(_Tiling):
    """result[i...] = source[i / tile..., i % tile...]: the inverse of pack, dropping padding."""

    name = "linalg.unpack"

    @property
    def unpacked_rank(self) -> int:
        t = self.result.type
        assert isinstance(t, TensorType)
        return t.get_num_dims()

    @classmethod
    def parse(cls, parser: Parser) -> UnPackOp:
        source = parser.parse_unresolved_operand()
        p = cls._parse_layout(parser)
        op = cls.build(operands=[parser.resolve_operand(source, p["source_type"]), p["dest"],
                                 p["dynamic"]],
                       result_types=[p["result_type"]],
                       properties=_layout_properties(p["perm"], p["positions"], p["static"]))
        op.attributes.update(p["attrs"])
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        self._print_layout(printer)

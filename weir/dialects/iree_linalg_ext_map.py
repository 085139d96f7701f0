"""IREE's `iree_linalg_ext.map_load` / `map_store` (index maps as regions), loaded
into the `iree_linalg_ext` dialect; each is a kernel of its own. Their regions compute indices,
usually with the `affine` ops of weir.dialects.affine_index.

- map_load: out[o] = source[f(o)] where f(o) (the region's first yields) lies inside source,
  else the region's last yield (the padding);
- map_store: out = the output's value, then for each input index i whose region yields a true
  mask (last) and a target f(i) inside the output, out[f(i)] = input[i]."""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, region_def, result_def
from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from weir.dialects.linalg_syntax import element_type

INDEX = IndexType()


class MapOp(IRDLOperation):
    """`%value into %output { region } : T into U -> U`, shared by both map ops."""

    value = operand_def(TensorType)
    output = operand_def(TensorType)
    result = result_def(TensorType)
    region = region_def("single_block")

    @property
    def outputs(self) -> tuple[SSAValue, ...]:
        """Destination-style like the other kernel ops (dispatch formation sizes results by it)."""
        return (self.output,)

    @classmethod
    def parse(cls, parser: Parser) -> MapOp:
        value = parser.parse_unresolved_operand()
        parser.parse_characters("into")
        output = parser.parse_unresolved_operand()
        region = parser.parse_region()
        parser.parse_punctuation(":")
        pos = parser.pos
        value_type = parser.parse_type()
        parser.parse_characters("into")
        output_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        value_v, output_v = parser.resolve_operands([value, output], [value_type, output_type], pos)
        return cls.build(operands=[value_v, output_v], result_types=[result_type],
                         regions=[region])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(" into ")
        printer.print_ssa_value(self.output)
        printer.print_string(" ")
        printer.print_region(self.region)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        printer.print_string(" into ")
        printer.print_attribute(self.output.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def check(self, space: TensorType, target: TensorType, last: str) -> None:
        """The region takes one index per dimension of `space` and yields one per dimension
        of `target`, then `last` (padding or mask)."""
        if self.result.type != self.output.type:
            raise VerifyException(f"the result must have the output's type {self.output.type}")
        block = self.region.block
        if [a.type for a in block.args] != [INDEX] * len(space.get_shape()):
            raise VerifyException(f"the region takes {len(space.get_shape())} index argument(s)")
        yielded = block.last_op
        rank = len(target.get_shape())
        if not isinstance(yielded, AbstractYieldOperation) or \
                [v.type for v in yielded.operands][:rank] != [INDEX] * rank or \
                len(yielded.operands) != rank + 1:
            raise VerifyException(f"the region must yield {rank} index(es) and the {last}")


@irdl_op_definition
class MapLoadOp(MapOp):
    name = "iree_linalg_ext.map_load"

    def verify_(self) -> None:
        assert isinstance(self.output.type, TensorType) and isinstance(self.value.type, TensorType)
        self.check(self.output.type, self.value.type, "padding")
        pad = self.region.block.last_op.operands[-1]  # type: ignore[union-attr]
        if pad.type != element_type(self.output):
            raise VerifyException(f"the padding must be a {element_type(self.output)}")


@irdl_op_definition
class MapStoreOp(MapOp):
    name = "iree_linalg_ext.map_store"

    def verify_(self) -> None:
        assert isinstance(self.output.type, TensorType) and isinstance(self.value.type, TensorType)
        self.check(self.value.type, self.output.type, "mask")
        mask = self.region.block.last_op.operands[-1]  # type: ignore[union-attr]
        if str(mask.type) != "i1":
            raise VerifyException("the mask must be an i1")
        if element_type(self.value) != element_type(self.output):
            raise VerifyException("input and output must have one element type")


DIALECT = Dialect("iree_linalg_ext", [MapLoadOp, MapStoreOp], [])

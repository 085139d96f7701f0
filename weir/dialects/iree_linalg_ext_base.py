"""What IREE's linalg extension ops share (weir.dialects.iree_linalg_ext): the `ExtOp` base with
their one textual form (keyword clauses, `ins`, `outs`, `index_base`, a region, results), the
shared checks, `yield`, and `define`, which makes an op of a given name from a shared class (the
`iree_linalg_ext` and `tm_tensor` dialects each define theirs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    IntegerType,
    ShapedType,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from weir.dialects.linalg_syntax import (
    element_type,
    parse_operands,
    parse_optional_operands,
    parse_result_types,
    print_operands,
    print_result_types,
)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    return tuple(t.get_shape()) if isinstance(t, ShapedType) else ()


def _agree(a: int, b: int) -> bool:
    return a == b or DYNAMIC_INDEX in (a, b)


def same_shape(a: Sequence[int], b: Sequence[int]) -> bool:
    return len(a) == len(b) and all(_agree(x, y) for x, y in zip(a, b))


def without(shape: Sequence[int], dim: int) -> tuple[int, ...]:
    return tuple(s for i, s in enumerate(shape) if i != dim)


class ExtOp(IRDLOperation):
    """What the ops share: inputs, outputs (destination-style: the results have their types),
    a region, and the clauses of their syntax."""

    inputs = var_operand_def()
    outputs = var_operand_def(TensorType)
    index_base = var_operand_def(IndexType)
    results_ = var_result_def(TensorType)
    region = region_def()
    dimension = opt_prop_def(IntegerAttr)
    inclusive = opt_prop_def(IntegerAttr)
    unique_indices = opt_prop_def(IntegerAttr)
    dimension_map = opt_prop_def(DenseArrayBase)
    indexing_maps = opt_prop_def(ArrayAttr)
    is_sorted = opt_prop_def(UnitAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    # The keyword clauses this op's syntax has, in print order.
    CLAUSES: ClassVar[tuple[str, ...]] = ()
    # How many region arguments and yields: None where the op checks its own.
    HAS_REGION: ClassVar[bool] = True

    @classmethod
    def parse(cls, parser: Parser) -> ExtOp:
        props: dict[str, Attribute] = {}
        attrs: dict[str, Attribute] = {}
        while True:
            if parser.parse_optional_characters("dimension_map") is not None:
                parser.parse_punctuation("=")
                values = parser.parse_comma_separated_list(
                    Parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))
                props["dimension_map"] = DenseArrayBase.from_list(i64, values)
            elif parser.parse_optional_characters("dimension") is not None:
                parser.parse_punctuation("(")
                props["dimension"] = IntegerAttr(parser.parse_integer(allow_boolean=False), i64)
                parser.parse_punctuation(")")
            elif (word := parser.parse_optional_characters("inclusive") or
                  parser.parse_optional_characters("unique_indices")) is not None:
                parser.parse_punctuation("(")
                props[word] = BoolAttr.from_bool(parser.parse_boolean())
                parser.parse_punctuation(")")
            elif parser.parse_optional_keyword("is_sorted") is not None:
                props["is_sorted"] = UnitAttr()
            elif parser._current_token.text == "{":  # pyright: ignore[reportPrivateUsage]
                attrs |= parser.parse_optional_attr_dict()
            else:
                break
        inputs = parse_optional_operands(parser, "ins") or []
        outputs = parse_operands(parser, "outs")
        base = parse_optional_operands(parser, "index_base") or []
        for name in ("dimension", "inclusive", "unique_indices", "dimension_map",
                     "indexing_maps"):
            if name in attrs:
                props[name] = attrs.pop(name)
        region = parser.parse_optional_region() or Region()
        results = parse_result_types(parser)
        return cls.build(operands=[inputs, outputs, base], result_types=[results],
                         regions=[region], properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        if self.dimension_map is not None:
            printer.print_string(" dimension_map = [")
            printer.print_list(self.dimension_map.get_values(),
                               lambda v: printer.print_string(str(v)))
            printer.print_string("]")
        if self.dimension is not None:
            printer.print_string(f" dimension({self.dimension.value.data})")
        for name in ("inclusive", "unique_indices"):
            flag = getattr(self, name)
            if flag is not None:
                printer.print_string(f" {name}({'true' if flag.value.data else 'false'})")
        if self.is_sorted is not None:
            printer.print_string(" is_sorted")
        if self.indexing_maps is not None:
            printer.print_string(" {indexing_maps = ")
            printer.print_attribute(self.indexing_maps)
            printer.print_string("}")
        if self.attributes:  # where `parse` reads them back: before the operands
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        print_operands(printer, "ins", self.inputs)
        print_operands(printer, "outs", self.outputs)
        print_operands(printer, "index_base", self.index_base)
        if self.region.blocks:
            printer.print_string(" ")
            printer.print_region(self.region)
        print_result_types(printer, [r.type for r in self.results_])

    # ------------------------------------------------------------------ shared checks

    def dim(self) -> int:
        if self.dimension is None:
            raise VerifyException("the op needs dimension(N)")
        return self.dimension.value.data

    def check_results(self) -> None:
        types = [v.type for v in self.outputs]
        if [r.type for r in self.results_] != types:
            raise VerifyException(f"the results must have the outputs' types {types}")

    def check_counts(self, ins: Sequence[int], outs: Sequence[int]) -> None:
        for what, counts, values in (("input", ins, self.inputs), ("output", outs, self.outputs)):
            if len(values) not in counts:
                want = " or ".join(str(n) for n in counts)
                raise VerifyException(f"takes {want} {what}(s), got {len(values)}")

    def check_dim(self, rank: int) -> int:
        d = self.dim()
        if not 0 <= d < rank:
            raise VerifyException(f"dimension {d} is out of range for rank {rank}")
        return d

    def check_region(self, arg_types: Sequence[Attribute], yield_type: Attribute | None) -> None:
        """The region's arguments have `arg_types`; it yields one `yield_type` (any type when
        None)."""
        if not self.region.blocks:
            raise VerifyException("the op needs a region")
        block = self.region.block
        types = [a.type for a in block.args]
        if types != list(arg_types):
            raise VerifyException(f"the region takes ({', '.join(map(str, types))}), expected "
                                  f"({', '.join(map(str, arg_types))})")
        last = block.last_op
        if not isinstance(last, AbstractYieldOperation) or len(last.operands) != 1 or \
                yield_type is not None and last.operands[0].type != yield_type:
            raise VerifyException(f"the region must yield one {yield_type or 'value'}")

    def verify_(self) -> None:
        if self.index_base and self.name.rsplit(".", 1)[1] != "arg_compare":
            raise VerifyException("only arg_compare takes index_base")
        self.check_results()
        self.check_op()

    def check_op(self) -> None:
        raise NotImplementedError

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        """The sizes the op needs equal, for the host checks of dynamic ones
        (insert-dynamic-size-checks): (operand a, operand b, [(dimension of a, of b), ...]),
        operands numbered as in `operands`."""
        return []

    def _same(self, a: int, b: int, skip: int | None = None) -> tuple[int, int, list[tuple[int, int]]]:
        """Operands a and b agree in every dimension (but `skip` of a, which b lacks when b has
        one dimension less)."""
        rank_a, rank_b = len(shape_of(self.operands[a])), len(shape_of(self.operands[b]))
        if skip is None or rank_a == rank_b:
            return a, b, [(i, i) for i in range(rank_a) if i != skip]
        return a, b, [(i, j) for j, i in enumerate(x for x in range(rank_a) if x != skip)]


I1 = IntegerType(1)
I32 = IntegerType(32)


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    name = "iree_linalg_ext.yield"
    traits = traits_def(IsTerminator())


def define(base: type[ExtOp], name: str) -> type[ExtOp]:
    """The op `name` with `base`'s meaning: xDSL cannot subclass a defined op, so each dialect
    (this one, `tm_tensor`) defines its own from the shared, undefined classes."""
    return irdl_op_definition(type(base.__name__ + "Op", (base,), {"name": name, "__doc__": base.__doc__}))

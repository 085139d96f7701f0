"""`linalg.map` and `linalg.softmax`, the two linalg ops xDSL 0.74 lacks that have a syntax of
their own (the textual forms are in `linalg_syntax`). Loaded as part of `linalg_ext.DIALECT`."""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, DYNAMIC_INDEX, IntegerAttr, ShapedType, TensorType, i64
from xdsl.dialects.linalg import ops as upstream
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from weir.dialects.linalg_syntax import (
    element_type,
    parse_operands,
    parse_optional_operands,
    parse_optional_payload,
    parse_region_with_arguments,
    parse_result_types,
    payload_body,
    print_operands,
    print_payload,
    print_region_with_arguments,
    print_result_types,
    short_form_payload,
)


def _shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    return tuple(t.get_shape()) if isinstance(t, ShapedType) else ()


@irdl_op_definition
class MapOp(IRDLOperation):
    """Elementwise: out[i...] = mapper(in0[i...], in1[i...], ...) over equal shapes, in each
    form MLIR prints: the long one, `ins(...) outs(...) (%in: f32, %in_0: f32, %init: f32) {
    ... linalg.yield %y : f32 }`, and the short one, `linalg.map { arith.addf } ins(...)
    outs(...)` (the op applied to the inputs in order). The mapper's last argument, the output's
    element, is what MLIR's mapper takes since it was made like linalg.generic's body (LLVM of
    late 2025, so IREE 3.x's); mappers printed before that take the inputs only, and are read
    too. The value of the output's element is never used."""

    name = "linalg.map"
    inputs = var_operand_def(TensorType)
    init = operand_def(TensorType)
    result = var_result_def(TensorType)
    mapper = region_def("single_block")

    @classmethod
    def parse(cls, parser: Parser) -> MapOp:
        payload = parse_optional_payload(parser, "linalg.map")
        attrs = parser.parse_optional_attr_dict()
        inputs = parse_optional_operands(parser, "ins") or []
        pos = parser.pos
        outs = parse_operands(parser, "outs")
        if len(outs) != 1:
            parser.raise_error("linalg.map takes exactly one output", pos)
        attrs |= parser.parse_optional_attr_dict()
        if payload is None:
            region = parse_region_with_arguments(parser)
        else:
            region = payload_body(parser, payload, [element_type(v) for v in [*inputs, outs[0]]],
                                  range(len(inputs)), element_type(outs[0]))
        return cls.build(operands=[inputs, outs[0]], result_types=[[outs[0].type]],
                         regions=[region], attributes=attrs)

    def print(self, printer: Printer) -> None:
        payload = short_form_payload(self.mapper, range(len(self.inputs))) \
            if self.inputs else None
        if payload is not None:
            print_payload(printer, payload)
        print_operands(printer, "ins", self.inputs)
        print_operands(printer, "outs", [self.init])
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        if payload is None:
            print_region_with_arguments(printer, self.mapper)

    def has_init_argument(self) -> bool:
        """Whether the mapper takes the output's element after the inputs' (MLIR's form)."""
        return len(self.mapper.block.args) == len(self.inputs) + 1

    def verify_(self) -> None:
        out_shape = _shape(self.init)
        for i, x in enumerate(self.inputs):
            shape = _shape(x)
            if len(shape) != len(out_shape) or any(
                    a != b and DYNAMIC_INDEX not in (a, b) for a, b in zip(shape, out_shape)):
                raise VerifyException(f"input #{i} of type {x.type} does not have the shape of "
                                      f"the output {self.init.type}")
        args = self.mapper.block.args
        types = [element_type(v) for v in self.inputs]
        out_type = element_type(self.init)
        if len(args) not in (len(types), len(types) + 1):
            raise VerifyException(f"the mapper takes {len(args)} argument(s) for "
                                  f"{len(types)} input(s): it takes one per input, then one "
                                  "for the output's element")
        for i, (arg, t) in enumerate(zip(args, types)):
            if arg.type != t:
                raise VerifyException(f"mapper argument #{i} has type {arg.type}, the element "
                                      f"type of input #{i} is {t}")
        if self.has_init_argument() and args[-1].type != out_type:
            raise VerifyException(f"mapper argument #{len(types)} has type {args[-1].type}, the "
                                  f"element type of the output is {out_type}")
        last = self.mapper.block.last_op
        if not isinstance(last, upstream.YieldOp) or len(last.operands) != 1 or \
                last.operands[0].type != out_type:
            raise VerifyException(f"the mapper must yield one {out_type}")
        if len(self.result) != 1 or self.result[0].type != self.init.type:
            raise VerifyException("the result must have the type of the output")


@irdl_op_definition
class SoftmaxOp(IRDLOperation):
    """out = exp(x - max(x)) / sum(exp(x - max(x))) along `dimension`. Syntax:
    `linalg.softmax dimension(1) ins(%x : T) outs(%init : T) -> T`."""

    name = "linalg.softmax"
    input = operand_def(TensorType)
    output = operand_def(TensorType)
    result = var_result_def(TensorType)
    dimension = prop_def(IntegerAttr)

    @classmethod
    def parse(cls, parser: Parser) -> SoftmaxOp:
        parser.parse_characters("dimension")
        parser.parse_punctuation("(")
        dimension = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(")")
        pos = parser.pos
        inputs = parse_operands(parser, "ins")
        outputs = parse_operands(parser, "outs")
        if len(inputs) != 1 or len(outputs) != 1:
            parser.raise_error("linalg.softmax takes one input and one output", pos)
        attrs = parser.parse_optional_attr_dict()
        results = parse_result_types(parser)
        return cls.build(operands=[inputs[0], outputs[0]], result_types=[results],
                         properties={"dimension": IntegerAttr(dimension, i64)}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" dimension({self.dimension.value.data})")
        print_operands(printer, "ins", [self.input])
        print_operands(printer, "outs", [self.output])
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        print_result_types(printer, [r.type for r in self.result])

    def verify_(self) -> None:
        t = self.input.type
        assert isinstance(t, TensorType)
        shape, out_shape = _shape(self.input), _shape(self.output)
        if len(shape) != len(out_shape) or any(
                a != b and DYNAMIC_INDEX not in (a, b) for a, b in zip(shape, out_shape)):
            raise VerifyException(f"output {self.output.type} does not have the shape of the "
                                  f"input {self.input.type}")
        element = t.get_element_type()
        if not isinstance(element, AnyFloat) or element != self.output.type.get_element_type():  # type: ignore[attr-defined]
            raise VerifyException(f"input and output must have the same float element type, got "
                                  f"{self.input.type} and {self.output.type}")
        dim = self.dimension.value.data
        if not 0 <= dim < len(shape):
            raise VerifyException(f"dimension {dim} is out of range for rank {len(shape)}")
        if len(self.result) != 1 or self.result[0].type != self.output.type:
            raise VerifyException("the result must have the type of the output")

"""What MLIR checks of an op written in the generic form when it builds it, and xDSL 0.74 does
not: that the op has as many operands, results, regions and successors as its definition
allows, the sizes of its variadic groups when it needs them (`operandSegmentSizes`), and its
required properties. Without these checks a mistyped generic op (`"linalg.transpose"` without
`permutation`, `"linalg.reduce"(%x) : (f32) -> ()`) reached the code that reads it, which failed
with a KeyError or an IndexError instead of an error naming the op."""

from __future__ import annotations

from xdsl.irdl import IRDLOperation
from xdsl.irdl.operations import (
    AttrSizedSegments,
    OptPropertyDef,
    VarIRConstruct,
    verify_variadic_size,
)
from xdsl.utils.exceptions import VerifyException

_CONSTRUCTS = (VarIRConstruct.OPERAND, VarIRConstruct.RESULT, VarIRConstruct.REGION,
               VarIRConstruct.SUCCESSOR)


def check_generic_shape(op: IRDLOperation) -> None:
    """Raise VerifyException (reported at the op, naming it) when `op` is not of its shape."""
    definition = op.get_irdl_definition()
    for option in definition.options:
        if isinstance(option, AttrSizedSegments) and option.attribute_name not in option.container(op):
            where = "properties" if option.as_property else "attributes"
            raise VerifyException(f"requires '{option.attribute_name}' in its {where} (the size "
                                  "of each group of operands or results)")
    for construct in _CONSTRUCTS:
        verify_variadic_size(op, definition, construct)
    for name, prop in definition.properties.items():
        if name not in op.properties and not isinstance(prop, OptPropertyDef) and \
                getattr(prop, "default_value", None) is None:
            raise VerifyException(f"requires the property '{name}'")

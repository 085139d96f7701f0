"""Type questions the ABI passes share."""

from __future__ import annotations

from weir.dialects import hal
from weir.ir.upstream import (
    ArrayAttr,
    Attribute,
    DictionaryAttr,
    DYNAMIC_INDEX,
    IntegerAttr,
    TensorType,
)


def abi_type(t: Attribute) -> Attribute:
    """How a value of type `t` crosses a module boundary: tensors as buffer views, the rest as is."""
    return hal.BufferViewType() if isinstance(t, TensorType) else t


def dynamic_dim_indices(t: TensorType) -> list[int]:
    return [i for i, d in enumerate(t.get_shape()) if d == DYNAMIC_INDEX]


def abi_output_index(arg_attrs: ArrayAttr[DictionaryAttr] | None, arg: int) -> int | None:
    """The result number an argument is the storage of (`{iree.abi.output = N : index}`)."""
    if arg_attrs is None or arg >= len(arg_attrs.data):
        return None
    value = arg_attrs.data[arg].data.get("iree.abi.output")
    if isinstance(value, IntegerAttr):
        return value.value.data
    return None

"""Type questions the ABI passes share."""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, DictionaryAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute


def is_tensor(t: Attribute) -> bool:
    return isinstance(t, TensorType)


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


def type_text(t: Attribute) -> str:
    """MLIR spelling of a type for reflection strings."""
    from xdsl.printer import Printer
    import io

    stream = io.StringIO()
    Printer(stream=stream).print_attribute(t)
    return stream.getvalue()

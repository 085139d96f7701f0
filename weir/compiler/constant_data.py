"""The bytes and the array behind a tensor constant, read the one way every phase reads them:
the compiler's constant folding (global optimization) and the hal phase's rodata both start here,
so a constant folded at compile time and one uploaded as it was agree bit for bit."""

from __future__ import annotations

import numpy as np

from weir.compiler.targets.element_types import dtype_name
from weir.format.element_types import BY_NAME
from weir.ir import ConstantStore
from weir.ir.diagnostics import error_at
from weir.ir.upstream import DenseIntOrFPElementsAttr, DenseResourceAttr, Operation, TensorType


def constant_bytes(value: DenseIntOrFPElementsAttr | DenseResourceAttr, where: Operation,
                   constants: ConstantStore) -> bytes:
    """The row-major bytes of `value`; a located error when a resource's data is missing or
    does not fit its type."""
    t = value.type if isinstance(value, DenseResourceAttr) else value.get_type()
    assert isinstance(t, TensorType)
    element = BY_NAME[dtype_name(t.element_type, where)]
    count = t.element_count()
    size = element.byte_size * count
    if isinstance(value, DenseResourceAttr):
        data = constants.data(value.resource_handle.data)
        if data is None:
            raise error_at(where, f"dense_resource '{value.resource_handle.data}' has no data "
                                  "in the file's dialect_resources section")
        if len(data) != size:
            raise error_at(where, f"dense_resource '{value.resource_handle.data}' holds "
                                  f"{len(data)} bytes, the type {t} needs {size}")
        return data
    values = value.get_values()
    if len(values) == 1 and count != 1:
        values = list(values) * count
    return np.asarray(values, dtype=element.dtype).tobytes()


def constant_array(value: DenseIntOrFPElementsAttr | DenseResourceAttr, where: Operation,
                   constants: ConstantStore) -> np.ndarray:
    """`value` as a read-only array of its static shape."""
    t = value.type if isinstance(value, DenseResourceAttr) else value.get_type()
    assert isinstance(t, TensorType)
    dtype = BY_NAME[dtype_name(t.element_type, where)].dtype
    data = np.frombuffer(constant_bytes(value, where, constants), dtype=dtype)
    return data.reshape(tuple(t.get_shape()))

"""The runtime's lookups in weir/format's element-type table, raising `InputError` for names or
dtypes a user passed that weir does not know."""

from __future__ import annotations

import numpy as np

from weir.errors import InputError
from weir.format.element_types import BY_DTYPE, BY_NAME


def numpy_dtype(element_type: str) -> np.dtype:
    try:
        return BY_NAME[element_type].dtype
    except KeyError:
        raise InputError(f"unknown element type '{element_type}' (known: "
                         f"{', '.join(sorted(BY_NAME))})") from None


def element_type_of(dtype: np.dtype) -> str:
    found = BY_DTYPE.get(dtype)  # an array's dtype, as is: np.dtype() would cost as much again
    if found is not None:
        return found.name
    try:
        return BY_DTYPE[np.dtype(dtype)].name
    except KeyError:
        raise InputError(f"numpy dtype {np.dtype(dtype)} has no MLIR element type") from None

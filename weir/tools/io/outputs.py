"""`--output` handling as IREE does it: one spec per result, in order.

    (empty)      drop the result
    -            print it (the default when no --output is given)
    @file.npy    create/overwrite a .npy file with the result; `+file.npy` appends to it
    @file.bin    any other extension: the raw bytes, no metadata (`+` appends)

Scalars are written as 0-d arrays of their type and a null result as an empty i8 array, so a
multi-result npy file keeps one array per result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

import numpy as np

from weir.errors import UsageError
from weir.tools.io.format_output import DEFAULT_MAX_ELEMENT_COUNT, format_result
from weir.tools.io.npy import write_npy, write_raw
from weir.tools.io.values import TypedScalar


def check_output_specs(specs: Sequence[str]) -> None:
    """Rejects a malformed spec before anything runs, so a typo costs no execution."""
    for spec in specs:
        if spec in ("", "-") or (spec[0] in "@+" and len(spec) > 1):
            continue
        raise UsageError(f"--output '{spec}': expected '-' (print), '@file.npy' (write), "
                         f"'+file.npy' (append) or an empty value (drop)")


def result_as_array(value: object) -> np.ndarray:
    """A result as the array written to a file (a scalar as 0-d, null as an empty i8 array)."""
    if value is None:
        return np.zeros((0,), dtype=np.int8)
    if isinstance(value, TypedScalar):
        return np.array(value.value, dtype=value.type.dtype)
    if isinstance(value, np.ndarray):
        return value
    raise TypeError(f"cannot write a result of type {type(value).__name__}")


def write_results(results: Sequence[object], specs: Sequence[str], stdout: TextIO,
                  max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT) -> None:
    """Routes result i to `specs[i]`; the counts must match (as in IREE)."""
    check_output_specs(specs)
    if len(specs) != len(results):
        raise UsageError(f"{len(specs)} --output values given but the function returned "
                         f"{len(results)} results")
    for value, spec in zip(results, specs):
        write_result(value, spec, stdout, max_element_count)


def write_result(value: object, spec: str, stdout: TextIO,
                 max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT) -> None:
    """One result to one spec. Printed results carry no `result[i]:` prefix, as in IREE."""
    if spec == "":
        return
    if spec == "-":
        stdout.write(format_result(value, max_element_count) + "\n")
        return
    append, path = spec[0] == "+", spec[1:]
    array = result_as_array(value)
    if path.endswith(".npy"):
        write_npy(path, array, append=append)
    else:
        write_raw(path, array, append=append)

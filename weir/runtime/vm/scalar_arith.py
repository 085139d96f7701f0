"""The VM's `Arith` instruction: one scalar op in one element type, computed by the very numpy
code that runs the reference target's kernel bodies (reference_scalar_ops.py), so a value computed
on the host and the same value computed in a dispatch agree bit for bit: integers wrap at their
width, f16/bf16 compute in f32 and round once, casts truncate and extend as MLIR says.

Registers hold scalars in one canonical Python form (what numpy's `.item()` gives for the type):
ints sign-extended from their width, i1 as bool, floats as the Python float the type rounds to.
Integer division by zero, undefined in MLIR, is a `RuntimeFault` on the host rather than a value.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from weir.errors import RuntimeFault
from weir.format.kernel_description import ScalarOp
from weir.runtime.executables.reference_scalar_ops import SCALAR_IMPLS
from weir.runtime.hal.element_types import numpy_dtype

_DIVISIONS = frozenset({"divsi", "divui", "remsi", "remui", "floordivsi", "ceildivsi",
                        "ceildivui"})
ArithFn = Callable[..., Any]


def arith_function(op: str, dtype: str, arg_dtype: str, attr: object) -> ArithFn:
    """The Python function computing one verified `Arith` instruction from its registers."""
    impl = SCALAR_IMPLS[op]
    described = ScalarOp(op, (), dtype, attr)  # type: ignore[arg-type]
    result_type = numpy_dtype(dtype)
    operand_type = numpy_dtype(arg_dtype)
    types = ((np.dtype(np.bool_), operand_type, operand_type) if op == "select"
             else (operand_type,) * (3 if op == "fma" else 2))
    divides = op in _DIVISIONS

    def compute(*args: Any) -> Any:
        if divides and args[1] == 0:
            raise RuntimeFault(f"arith.{op}: {arg_dtype} division by zero")
        operands = [np.asarray(a, t) for a, t in zip(args, types)]
        with np.errstate(all="ignore"):
            return impl(operands, described, result_type).item()
    compute.__name__ = f"arith_{op}_{dtype}"
    return compute


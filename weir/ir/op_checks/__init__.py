"""Checks that MLIR's verifiers make and xDSL 0.74's skip, for the ops weir accepts as input:
shapes against reassociations, sizes, indices and slices (tensor), results and bodies against
outputs (linalg), yields against results (scf), and tensor types too large to exist.
`weir.ir.verify` runs `check_op` on each op before xDSL's own verifier, which may index shapes
with unchecked values."""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from weir.ir.op_checks.linalg import check_linalg_op
from weir.ir.op_checks.scf import SCF_CHECKS
from weir.ir.op_checks.tensor import TENSOR_CHECKS
from weir.ir.op_checks.types import check_type_sizes

_CHECKS = {**TENSOR_CHECKS, **SCF_CHECKS}


def check_op(op: Operation) -> None:
    """Raise VerifyException saying what is wrong with `op`, if anything."""
    if (why := check_type_sizes(op)) is not None:
        raise VerifyException(why)
    check = _CHECKS.get(op.name)
    if check is not None:
        check(op)
    check_linalg_op(op)

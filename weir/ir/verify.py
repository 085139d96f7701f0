"""Module verification that reports *which* op failed, at its source location.

Why not just `module.verify()`: it raises a bare VerifyException (after printing the whole
module into a note) without saying which op is wrong. Verifying op by op, children first
(the order xDSL uses), lets us attach the failing op's `file:line:col`.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

from weir.errors import CompileError
from weir.ir.diagnostics import error_at, one_line
from weir.ir.window_ops import check_window_op


def _check_empty_blocks(op: Operation) -> None:
    """The one check `Block.verify` adds that `op.verify(verify_nested_ops=False)` skips."""
    for region in op.regions:
        if len(region.blocks) == 1 and region.block.first_op is None and not op.has_trait(NoTerminator):
            raise VerifyException(f"Operation {op.name} contains empty block in single-block region that expects at least a terminator")


def verify_module(module: Operation) -> None:
    """Raise CompileError at the first op (in post-order) that fails to verify."""
    for op in module.walk(region_first=True):
        try:
            _check_empty_blocks(op)
            check_window_op(op)  # before xDSL's own checks, whose messages name no sizes
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            raise error_at(op, f"'{op.name}' op {one_line(str(e))}") from e
        except CompileError:
            raise
        except Exception as e:  # a verifier crashing on user input still names the op
            raise error_at(op, f"'{op.name}' op failed to verify: {one_line(str(e)) or type(e).__name__}") from e

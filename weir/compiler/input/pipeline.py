"""Phase `input`: the user's program, legalised to the core input dialects."""

from __future__ import annotations

from weir.compiler.input.check_supported_ops import CheckSupportedOps
from weir.compiler.input.verify import verify_input
from weir.compiler.pass_base import Pass

PASSES: tuple[Pass, ...] = (
    # First, so that every later pass may assume it only sees ops it knows.
    CheckSupportedOps(),
)
VERIFY = verify_input

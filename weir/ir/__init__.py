"""weir's only door to xDSL's parser, printer and context (DESIGN.md §3).

Compiler code calls these; nothing else in weir should import `xdsl.parser`/`xdsl.printer`.
"""

from weir.ir.constants import Blob, ConstantStore, constants_of
from weir.ir.context import make_context
from weir.ir.diagnostics import error_at, location_of
from weir.ir.parse import ParsedModule, parse_attribute, parse_module, parse_source
from weir.ir.printer import print_module
from weir.ir.registry import all_weir_dialects, register_dialect

__all__ = [
    "Blob",
    "ConstantStore",
    "ParsedModule",
    "all_weir_dialects",
    "constants_of",
    "error_at",
    "location_of",
    "make_context",
    "parse_attribute",
    "parse_module",
    "parse_source",
    "print_module",
    "register_dialect",
]

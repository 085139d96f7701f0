"""MLIR text out of weir's IR (used by `--compile-to` and tests), with weir's fixes."""

from __future__ import annotations

import io

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer

from weir.ir.constants import ConstantStore, constants_of
from weir.ir.func_syntax import print_func_declaration


class WeirPrinter(Printer):
    """xDSL's printer, except for body-less `func.func` (see `func_syntax`)."""

    def print_op(self, op: Operation) -> None:
        if isinstance(op, FuncOp) and not op.body.blocks and not self.print_generic_format:
            # Defect fix (arg/res attributes of declarations dropped on print).
            self.print_string(op.name)
            print_func_declaration(self, op)
            if self.print_debuginfo:
                self.print_string(" ")
                self.print_attribute(op.location)
            return
        super().print_op(op)

    def print_operation_type(self, op: Operation) -> None:
        """Defect fix: xDSL prints the op's location after its type, which is right where the
        type ends a generic-format op but wrong inside a custom format that prints a type in
        the middle (`scf.while (...) : (i32) -> i32 loc(...) {` did not parse back)."""
        self.print_function_type(op.operand_types, op.result_types)
        generic = self.print_generic_format or Operation.print is type(op).print
        if self.print_debuginfo and generic:
            self.print_string(" ")
            self.print_attribute(op.location)


def _resource_section(printer: WeirPrinter, constants: ConstantStore) -> str:
    """The `{-# dialect_resources #-}` trailer for the blobs the printed IR referenced.

    Defect fix (process-wide dense_resource store): blobs come from weir's store, not xDSL's.
    """
    referenced = sorted(printer._dialect_resources.get("builtin", ()))  # pyright: ignore[reportPrivateUsage]
    entries = [(name, blob) for name in referenced if (blob := constants.get(name)) is not None]
    if not entries:
        return ""
    lines = ["", "{-#", "  dialect_resources: {", "    builtin: {"]
    lines += [f'      {name}: "{blob.to_hex()}"' + ("," if i + 1 < len(entries) else "") for i, (name, blob) in enumerate(entries)]
    lines += ["    }", "  }", "#-}"]
    return "\n".join(lines) + "\n"


def print_module(module: Operation, *, constants: ConstantStore | None = None, locations: bool = False, generic: bool = False) -> str:
    """The module as MLIR text. Locations are off by default: they are noise in dumps."""
    stream = io.StringIO()
    printer = WeirPrinter(stream=stream, print_debuginfo=locations, print_generic_format=generic)
    printer.print_op(module)
    stream.write("\n")
    store = constants if constants is not None else (constants_of(module) if isinstance(module, ModuleOp) else ConstantStore())
    stream.write(_resource_section(printer, store))
    return stream.getvalue()


def attribute_text(attr: Attribute) -> str:
    """MLIR spelling of one type or attribute (for reflection strings and messages)."""
    stream = io.StringIO()
    WeirPrinter(stream=stream).print_attribute(attr)
    return stream.getvalue()

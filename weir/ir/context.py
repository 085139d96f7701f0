"""Builds the one xDSL `Context` weir parses with.

Unregistered operations, types and attributes are errors (`allow_unregistered=False`): xDSL
would otherwise keep them as opaque text (DESIGN.md §3), and passes would silently skip them.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.ir import Dialect, TypeAttribute

from weir.ir import registry
from weir.ir.hal_attrs import HAL_ATTRIBUTES

_prototype: Context | None = None


def _forget_prototype() -> None:
    global _prototype
    _prototype = None


registry.on_change(_forget_prototype)


def _load(ctx: Context, dialect: Dialect) -> None:
    """Load a dialect; a second dialect of an existing name extends it op by op.

    Why: weir defines upstream ops xDSL lacks (linalg.batch_matmul, ...) in its own Dialect
    objects, which may reuse the upstream dialect's name. An op that subclasses the upstream op of
    its name refines it (weir's linalg.matmul parses MLIR's `indexing_maps = [...]`) and replaces
    it; xDSL has no public way to replace a loaded op, hence the private table.
    """
    if ctx.get_optional_dialect(dialect.name) is None:
        ctx.load_dialect(dialect)
        return
    for op in dialect.operations:
        known = ctx.get_optional_op(op.name)
        if known is op:
            continue
        if known is not None and issubclass(op, known):
            ctx._loaded_ops[op.name] = op  # pyright: ignore[reportPrivateUsage]
        else:
            ctx.load_op(op)
    for attr in dialect.attributes:
        known = ctx.get_optional_type(attr.name) if _is_type(attr) else ctx.get_optional_attr(attr.name)
        if known is not attr:
            ctx.load_attr_or_type(attr)


def _is_type(attr: type) -> bool:
    return issubclass(attr, TypeAttribute)


def _build() -> Context:
    ctx = Context(allow_unregistered=False)
    for dialect in registry.all_dialects():
        _load(ctx, dialect)
    # Defect fix (DESIGN.md §3, opaque unregistered attributes): make the HAL device
    # attributes real types even while no `hal` dialect module provides them.
    for attr in HAL_ATTRIBUTES:
        if ctx.get_optional_attr(attr.name) is None:
            ctx.load_attr_or_type(attr)
    return ctx


def make_context() -> Context:
    """A fresh context with every dialect weir accepts; callers may mutate it freely."""
    global _prototype
    if _prototype is None:
        _prototype = _build()
    return _prototype.clone()

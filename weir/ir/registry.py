"""The typed list of dialects weir accepts as input, in one place.

Why a registry: xDSL contexts are built from `Dialect` objects, and weir's own dialects are
written by other rooms (`weir/dialects/<name>.py`, each exposing `DIALECT: xdsl.ir.Dialect`).
Keeping the list here means `make_context` never has to know who defines what, and tests or
input-phase extensions can add a dialect with `register_dialect`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.cf import Cf
from xdsl.dialects.func import Func
from xdsl.dialects.linalg import Linalg
from xdsl.dialects.math import Math
from xdsl.dialects.scf import Scf
from xdsl.dialects.tensor import Tensor
from xdsl.ir import Dialect

UPSTREAM_DIALECTS: tuple[Dialect, ...] = (Builtin, Func, Arith, Math, Tensor, Linalg, Scf, Cf)
"""The xDSL dialects weir takes as input (DESIGN.md §3)."""

WEIR_DIALECT_MODULES: tuple[tuple[str, ...], ...] = (
    ("linalg_ext",),  # the linalg ops xDSL lacks, loaded into xDSL's `linalg`
    ("arith_ext",),  # arith comparisons, casts and select on tensors, as MLIR has them
    ("tensor_ext",),  # tensor.reshape verified as MLIR does for dynamic shapes
    ("scf_ext",),  # scf.for/if/while in every form upstream MLIR prints
    ("flow",),
    ("stream",),
    ("hal",),
    ("vm",),
    ("util",),
    ("check",),
    ("iree_linalg_ext",),  # IREE's linalg extension ops (sort, topk, scan, scatter, ...)
    ("tm_tensor",),  # torch-mlir's copies of them
    ("iree_linalg_ext_map",),  # map_load / map_store, loaded into iree_linalg_ext
    ("iree_linalg_ext_winograd",),  # the Winograd transforms, loaded into iree_linalg_ext
    ("stablehlo",),  # the StableHLO ops weir reads (slice, reverse)
    ("affine_index",),
    ("iree_encoding",),  # #iree_encoding.packed_storage on sub-byte tensors  # affine.linearize_index / delinearize_index (map regions use them)
    # `async` is a Python keyword, so the module may be spelled either way.
    ("async", "async_"),
)
"""Modules under `weir.dialects` that each define `DIALECT`; alternatives in one tuple."""

_extra_dialects: list[Dialect] = []
_listeners: list[Callable[[], None]] = []


def register_dialect(dialect: Dialect) -> None:
    """Add a dialect to every context made after this call (e.g. input-phase extensions)."""
    if not isinstance(dialect, Dialect):
        raise TypeError(f"expected an xdsl.ir.Dialect, got {type(dialect).__name__}")
    if any(d is dialect for d in _extra_dialects):
        return
    _extra_dialects.append(dialect)
    for notify in _listeners:
        notify()


def on_change(callback: Callable[[], None]) -> None:
    """Let `weir.ir.context` drop its cached prototype when the registry grows."""
    _listeners.append(callback)


def _import_optional(module_names: tuple[str, ...]) -> Dialect | None:
    for short in module_names:
        full = f"weir.dialects.{short}"
        try:
            module = importlib.import_module(full)
        except ModuleNotFoundError as e:
            # Only "this dialect module does not exist yet" is tolerated; a dialect module
            # that exists but fails to import is a bug and must surface.
            if e.name == full:
                continue
            raise
        dialect = getattr(module, "DIALECT", None)
        if not isinstance(dialect, Dialect):
            raise TypeError(f"{full}.DIALECT must be an xdsl.ir.Dialect, got {type(dialect).__name__}")
        return dialect
    return None


def all_weir_dialects() -> list[Dialect]:
    """weir's own dialects, imported lazily so `weir.ir` has no import cycle with them.

    BRING-UP TOLERANCE: a `weir.dialects.<name>` module that does not exist yet is skipped.
    Once every dialect in WEIR_DIALECT_MODULES exists this should become a hard error.
    """
    found = [d for names in WEIR_DIALECT_MODULES if (d := _import_optional(names)) is not None]
    return found + list(_extra_dialects)


def all_dialects() -> list[Dialect]:
    """Every dialect a weir context loads: upstream input dialects first, then weir's."""
    return list(UPSTREAM_DIALECTS) + all_weir_dialects()

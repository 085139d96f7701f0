"""Folds the scalar arithmetic that dispatch formation clones into a dispatch next to its
constants (a concat's size `3 + 10`, an index cast of a constant): form-dispatch-regions copies
such ops in so that they are literals in the kernel rather than push constants, so the kernel
description must turn them into the literal they are. Only ops whose operands are all known
constants reach here; the set covers form_dispatch_regions' cloneable scalar ops, and the
comparisons, selects and minima/maxima of an unrolled loop's index arithmetic, which the host
folds (flow/unroll_host_loops.py)."""

from __future__ import annotations

import numpy as np

from weir.ir.upstream import (
    Attribute,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    Operation,
)

Scalar = int | float | bool

_INTEGER_BINARY = {"arith.addi": lambda x, y: x + y, "arith.subi": lambda x, y: x - y,
                   "arith.muli": lambda x, y: x * y}
_FLOATS = {Float16Type: np.float16, Float32Type: np.float32, Float64Type: np.float64}


def _width(t: Attribute) -> int | None:
    """Bits of an integer or index type (index is 64 bits on every target weir has)."""
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, IntegerType):
        return t.width.data
    return None


def _wrap(value: int, bits: int, signed: bool = True) -> int:
    """`value` as a `bits`-wide two's complement integer (the value arith's ops compute)."""
    if bits == 1:
        return value & 1
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >= 1 << (bits - 1) else value


def _float(value: float, t: Attribute) -> float | None:
    """`value` rounded to the float type `t` (what truncf or sitofp produce); None for the
    float types numpy does not have (bf16, the small floats), which are left to the caller."""
    kind = _FLOATS.get(type(t))
    return float(kind(value)) if kind is not None else None


# arith.cmpi's predicates, by number, on operands as signed and as unsigned integers.
_COMPARISONS = {0: lambda x, y, ux, uy: x == y, 1: lambda x, y, ux, uy: x != y,
                2: lambda x, y, ux, uy: x < y, 3: lambda x, y, ux, uy: x <= y,
                4: lambda x, y, ux, uy: x > y, 5: lambda x, y, ux, uy: x >= y,
                6: lambda x, y, ux, uy: ux < uy, 7: lambda x, y, ux, uy: ux <= uy,
                8: lambda x, y, ux, uy: ux > uy, 9: lambda x, y, ux, uy: ux >= uy}
_MIN_MAX = {"arith.maxsi": (max, True), "arith.minsi": (min, True),
            "arith.maxui": (max, False), "arith.minui": (min, False)}


def fold(op: Operation, operands: list[Scalar]) -> Scalar | None:
    """The value of scalar `op` applied to the constants `operands`; None when it is not an op
    this folds (the caller reports it where it is)."""
    result = op.results[0].type if len(op.results) == 1 else None
    if result is None:
        return None
    bits = _width(result)
    if op.name in _INTEGER_BINARY and bits is not None:
        x, y = (int(v) for v in operands)
        return _wrap(_INTEGER_BINARY[op.name](x, y), bits)
    if op.name in _MIN_MAX and bits is not None:
        choose, signed = _MIN_MAX[op.name]
        return _wrap(choose(_wrap(int(operands[0]), bits, signed),
                            _wrap(int(operands[1]), bits, signed)), bits)
    if op.name == "arith.select" and bits is not None:
        return operands[1] if operands[0] else operands[2]
    if op.name == "arith.cmpi":
        width = _width(op.operands[0].type)
        predicate = op.properties.get("predicate")
        compare = _COMPARISONS.get(predicate.value.data) \
            if isinstance(predicate, IntegerAttr) else None
        if width is None or compare is None:
            return None
        x, y = (_wrap(int(v), width) for v in operands)
        ux, uy = (_wrap(int(v), width, signed=False) for v in operands)
        return int(compare(x, y, ux, uy))
    source = op.operands[0].type if len(op.operands) == 1 else None
    if source is None:
        return None
    (x,) = operands
    source_bits = _width(source)
    name = op.name.removeprefix("arith.")
    if name in ("index_cast", "extsi", "trunci") and bits is not None and source_bits is not None:
        return _wrap(_wrap(int(x), source_bits), bits)
    if name in ("index_castui", "extui") and bits is not None and source_bits is not None:
        return _wrap(_wrap(int(x), source_bits, signed=False), bits)
    if name in ("sitofp", "uitofp") and source_bits is not None:
        return _float(float(_wrap(int(x), source_bits, signed=name == "sitofp")), result)
    if name in ("fptosi", "fptoui") and bits is not None:
        return _wrap(int(x), bits, signed=name == "fptosi")
    if name in ("extf", "truncf"):
        return _float(float(x), result)
    return None

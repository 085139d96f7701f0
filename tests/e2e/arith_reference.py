"""Expected values for the arith e2e tests (test_arith_complete*.py), computed from MLIR's
definitions with Python integers and floats rather than with the numpy code under test, and the
builders of their programs: one function on scalars and one on tensors per op set."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np

NAN, INF = float("nan"), float("inf")
INT_BITS = {"i1": 1, "i8": 8, "i32": 32, "i64": 64, "index": 64}
NP_INT = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
          "index": np.int64}
NP_FLOAT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}


def wrap(x: int, bits: int) -> int:
    """x modulo 2^bits, read as signed (i1 true is -1)."""
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def unsigned(x: int, bits: int) -> int:
    return x & ((1 << bits) - 1)


def as_int(value: Any, t: str) -> int:
    """A result element as the signed integer of its type (i1 true is -1)."""
    return wrap(int(value), INT_BITS.get(t, 0) or int(t[1:]))


def as_ints(values: Any, t: str) -> list[int]:
    return [as_int(v, t) for v in np.asarray(values).ravel()]


def scalar(v: int, t: str) -> int | bool:
    """A host argument of type t (an i1 is a bool)."""
    return v != 0 if t == "i1" else v


def tensor_type(t: str, n: int) -> str:
    return f"tensor<{n}x{t}>"


def array(values: list[int], t: str) -> np.ndarray:
    if t == "i1":
        return np.array([v != 0 for v in values], np.bool_)
    return np.array(values, np.int64).astype(NP_INT[t])


def program(name: str, args: list[tuple[str, str]], lines: list[str],
            results: list[tuple[str, str]]) -> str:
    """One function: `args` and `results` are (name, type), `lines` its body."""
    signature = ", ".join(f"%{a}: {t}" for a, t in args)
    outs = ", ".join(t for _, t in results)
    body = "\n".join("  " + line for line in lines)
    return (f"func.func @{name}({signature}) -> ({outs}) {{\n{body}\n"
            f"  return {', '.join('%' + r for r, _ in results)} : {outs}\n}}\n")


def scalar_and_tensor(ops: list[tuple[str, str]], args: list[str], types: dict[str, str],
                      result_types: dict[str, str], n: int) -> str:
    """Two functions computing the same `ops` (result name, MLIR line with {T}-style type
    fields): @scalars on scalar arguments, @tensors on tensors of `n` elements."""
    source = ""
    for fn, shape in (("scalars", None), ("tensors", n)):
        def ty(t: str) -> str:
            return t if shape is None else tensor_type(t, shape)
        fields = {k: ty(v) for k, v in {**types, **result_types}.items()}
        lines = [line.format(**fields) for _, line in ops]
        source += program(fn, [(a, ty(types[a])) for a in args], lines,
                          [(r, ty(result_types[r])) for r, _ in ops])
    return source



def same_float(got: Any, expected: Any) -> bool:
    """Bit for bit (the sign of zero included), any NaN matching any NaN."""
    g, e = np.asarray(got), np.asarray(expected, dtype=np.asarray(got).dtype)
    if np.isnan(g.astype(np.float64)) or np.isnan(e.astype(np.float64)):
        return bool(np.isnan(g.astype(np.float64)) and np.isnan(e.astype(np.float64)))
    return g.tobytes() == e.tobytes()



def round_to(x: float, t: str) -> Any:
    """x rounded once to nearest even in type `t` (normal range, or past the largest finite
    value), independently of numpy's and ml_dtypes' conversions."""
    dtype = NP_FLOAT[t]
    if math.isnan(x) or math.isinf(x) or x == 0:
        return dtype(x)
    precision = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}[t]
    _, e = math.frexp(x)
    scaled = math.ldexp(x, precision - e)  # exact: |scaled| in [2^(p-1), 2^p)
    rounded = math.ldexp(round(scaled), e - precision)  # round() breaks ties to even
    largest = float(ml_dtypes.finfo(dtype).max)
    if abs(rounded) > largest:
        return dtype(math.copysign(INF, x))
    return dtype(rounded)


"""The closed instruction set of weir's VM. The compiler emits these, the module file stores them,
the runtime verifies them and translates each function once into Python.

Registers are untyped slots (Python objects at run time) numbered from 0. An `Operand` is either a
register number or a tuple of register numbers: a tuple is passed to the callee as one tuple
argument, which is how variadic `hal.*` calls receive shapes, bindings and constants.

Nothing here is ever spliced into generated code as text: constants are referenced by position in
a table, callees by position in the resolved call table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

Operand = Union[int, tuple[int, ...]]
Scalar = Union[int, float, str, bool, None]

# Integer/float arithmetic on scalar registers (host-side shape math, loop counters, scf on host).
BinaryOp = Literal[
    "add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr",
    "eq", "ne", "lt", "le", "gt", "ge",
]
BINARY_OPS: frozenset[str] = frozenset(BinaryOp.__args__)  # type: ignore[attr-defined]
UnaryOp = Literal["neg", "not", "to_int", "to_float"]
UNARY_OPS: frozenset[str] = frozenset(UnaryOp.__args__)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Const:
    """dst = value (int, float, str such as a dtype or a message, bool, or None for a null ref)."""

    dst: int
    value: Scalar


@dataclass(frozen=True)
class Move:
    dst: int
    src: int


@dataclass(frozen=True)
class Call:
    """dsts = callee(*args). `callee` is `module.function` for imports (including `hal.*`) or the
    name of a function in this module."""

    dsts: tuple[int, ...]
    callee: str
    args: tuple[Operand, ...]


@dataclass(frozen=True)
class GlobalLoad:
    dst: int
    global_index: int


@dataclass(frozen=True)
class GlobalStore:
    global_index: int
    src: int


@dataclass(frozen=True)
class Rodata:
    """dst = read-only memoryview of the rodata's bytes."""

    dst: int
    rodata_index: int


@dataclass(frozen=True)
class Binary:
    dst: int
    op: BinaryOp
    lhs: int
    rhs: int


@dataclass(frozen=True)
class Unary:
    dst: int
    op: UnaryOp
    src: int


@dataclass(frozen=True)
class Arith:
    """dst = op(args) with MLIR's arith/math semantics in element type `dtype` (an element type
    name: `i8`, `index`, `bf16`, ...): integers wrap at their width, f16/bf16/f32 round to their
    precision. `op` is one of the kernel description's scalar ops (weir/format/kernel_description.py,
    `HOST_SCALAR_OPS`), so host and kernels share one set of semantics. `arg_dtype` is the operands'
    type (for `select`, that of its second and third operands; its first is i1), `attr` the
    predicate of cmpi/cmpf. Registers hold each type in one canonical Python form: ints
    sign-extended from their width, i1 as bool, floats as the float the type rounds to."""

    dst: int
    op: str
    dtype: str
    args: tuple[int, ...]
    arg_dtype: str
    attr: Scalar = None


@dataclass(frozen=True)
class Select:
    dst: int
    cond: int
    true_value: int
    false_value: int


@dataclass(frozen=True)
class Branch:
    block: int
    args: tuple[int, ...] = ()


@dataclass(frozen=True)
class CondBranch:
    cond: int
    true_block: int
    true_args: tuple[int, ...]
    false_block: int
    false_args: tuple[int, ...]


@dataclass(frozen=True)
class Return:
    values: tuple[int, ...] = ()


@dataclass(frozen=True)
class Fail:
    """Raise a runtime error carrying `message` (a const register holding a str), followed, when
    `values` is not empty, by `: ` and their run-time values joined by ` vs ` (a host check
    naming the sizes it found different)."""

    message: int
    values: tuple[int, ...] = ()


Instruction = Union[
    Const, Move, Call, GlobalLoad, GlobalStore, Rodata, Binary, Unary, Arith, Select, Branch,
    CondBranch, Return, Fail,
]
TERMINATORS: tuple[type, ...] = (Branch, CondBranch, Return, Fail)

"""Checks of the linalg ops weir accepts that xDSL 0.74's verifiers leave out, so an invalid op is
an error at its location instead of a program that runs with a silent conversion or a crash in a
later phase:

- results: a linalg op on tensors returns one result per output, of that output's type;
- bodies the user writes (`linalg.generic`, `linalg.reduce`): `linalg.yield` gives one value per
  output, of its element type (xDSL checked neither, and an i32 yielded into an f32 output ran,
  converted); the reduce body takes the input's and the output's element types;
- `linalg.index` names one of the loops of its `linalg.generic`;
- named elementwise ops have their number of inputs (`linalg.add` of one input added the output
  to it), and `transpose`/`broadcast` keep the element type.

Named ops with a body weir builds (contractions, `fill`, `copy`, ...) convert their operands to
the output's element type, as MLIR's named ops do; their bodies are not checked here.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import TensorType
from xdsl.dialects.linalg import ops as upstream
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from weir.ir.op_checks.common import element


def _outputs(op: Operation) -> list[SSAValue] | None:
    """The outputs (inits) of a linalg op whose results this module checks, else None."""
    if isinstance(op, LinalgStructuredOperation):
        return list(op.outputs)
    if isinstance(op, (upstream.ReduceOp, upstream.BroadcastOp)):
        return [op.init]
    return None


def _results(op: Operation) -> None:
    """Destination style: each tensor output is returned, as a result of its very type."""
    outputs = _outputs(op)
    if outputs is None:
        return
    tensors = [o.type for o in outputs if isinstance(o.type, TensorType)]
    results = [r.type for r in op.results]
    if len(results) != len(tensors):
        raise VerifyException(f"expects {len(tensors)} result(s), one of the type of each output "
                              f"({', '.join(map(str, tensors))}), got {len(results)}")
    for i, (result, output) in enumerate(zip(results, tensors)):
        if result != output:
            raise VerifyException(f"result #{i} has type {result}, but its output has type "
                                  f"{output}")


def _yield(op: Operation) -> None:
    parent = op.parent_op()
    if isinstance(parent, upstream.GenericOp):
        outputs = list(parent.outputs)
    elif isinstance(parent, upstream.ReduceOp):
        outputs = [parent.init]
    else:
        return  # linalg.map checks its own; named ops' bodies are weir's
    want = [element(o.type) for o in outputs]
    got = [v.type for v in op.operands]
    where = f"the enclosing '{parent.name}'"
    if len(got) != len(want):
        raise VerifyException(f"yields {len(got)} value(s), but {where} has {len(want)} "
                              f"output(s)")
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            raise VerifyException(f"value #{i} has type {g}, but output #{i} of {where} has "
                                  f"element type {w}")


def _index(op: Operation) -> None:
    assert isinstance(op, upstream.IndexOp)
    parent = op.parent_op()
    if not isinstance(parent, upstream.GenericOp):
        return  # xDSL's HasParent trait reports it
    loops = len(parent.iterator_types)
    dim = op.dim.value.data
    if not 0 <= dim < loops:
        raise VerifyException(f"dimension {dim} is not a loop of the enclosing 'linalg.generic', "
                              f"whose loops are 0 to {loops - 1}")


def _reduce(op: Operation) -> None:
    assert isinstance(op, upstream.ReduceOp)
    if not op.region.blocks:
        return
    got = [a.type for a in op.region.blocks[0].args]
    want = [element(op.input.type), element(op.init.type)]
    if got != want:
        raise VerifyException(f"the body takes ({', '.join(map(str, got))}), but it must take "
                              f"the element types of the input and of the output, "
                              f"({', '.join(map(str, want))})")


# linalg named elementwise ops and their number of inputs (each has one output).
_ARITY: dict[str, int] = {
    "linalg.add": 2, "linalg.sub": 2, "linalg.mul": 2, "linalg.max": 2, "linalg.min": 2,
    "linalg.exp": 1, "linalg.log": 1, "linalg.sqrt": 1, "linalg.copy": 1, "linalg.select": 3,
    "linalg.negf": 1,
}


def _elementwise(op: Operation) -> None:
    assert isinstance(op, LinalgStructuredOperation)
    n = _ARITY[op.name]
    if len(op.inputs) != n or len(op.outputs) != 1:
        raise VerifyException(f"expects {n} input(s) and 1 output, got {len(op.inputs)} and "
                              f"{len(op.outputs)}")


def _same_element(source: SSAValue, init: SSAValue) -> None:
    if element(source.type) != element(init.type):
        raise VerifyException(f"the input element type {element(source.type)} differs from the "
                              f"output's, {element(init.type)}")


def _transpose(op: Operation) -> None:
    assert isinstance(op, upstream.TransposeOp)
    if len(op.inputs) == 1 and len(op.outputs) == 1:
        _same_element(op.inputs[0], op.outputs[0])


def _broadcast(op: Operation) -> None:
    assert isinstance(op, upstream.BroadcastOp)
    _same_element(op.input, op.init)


LINALG_CHECKS: dict[str, Callable[[Operation], None]] = {
    "linalg.yield": _yield,
    "linalg.index": _index,
    "linalg.reduce": _reduce,
    "linalg.transpose": _transpose,
    "linalg.broadcast": _broadcast,
    **{name: _elementwise for name in _ARITY},
}


def check_linalg_op(op: Operation) -> None:
    """The op's own check, then (for every linalg op on outputs) its results."""
    check = LINALG_CHECKS.get(op.name)
    if check is not None:
        check(op)
    if op.name.startswith("linalg."):
        _results(op)

"""Uses of values that do not follow their definitions.

xDSL's parser resolves a name used before its definition as a forward reference and its
verifier never checks dominance, so `%s = arith.shli %a, %s` (an op using its own result) or a
use above the definition reached the compiler's passes, which failed far from the source
(`internal: a tensor operand has no resource`). weir's input is structured (single-block regions;
`cf` branches are rejected as unsupported), so a use is valid when the value's definition comes
earlier in the use's own block or in a block enclosing it.
"""

from __future__ import annotations

from xdsl.ir import Block, BlockArgument, OpResult, Operation, SSAValue


class DefinitionOrder:
    """The position of each op in its block, computed once per block (a walk of a block of n
    ops asking `is_before_in_block` for each use would be quadratic)."""

    def __init__(self) -> None:
        self._positions: dict[Block, dict[Operation, int]] = {}

    def position(self, op: Operation) -> int:
        block = op.parent_block()
        assert block is not None
        positions = self._positions.get(block)
        if positions is None:
            positions = {o: i for i, o in enumerate(block.ops)}
            self._positions[block] = positions
        return positions[op]


def _name(value: SSAValue, index: int) -> str:
    return f"'%{value.name_hint}'" if value.name_hint else f"operand #{index} ({value.type})"


def misplaced_use(user: Operation, index: int, order: DefinitionOrder) -> str | None:
    """Why operand `index` of `user` is not available where it is used, or None when it is."""
    value = user.operands[index]
    if isinstance(value, OpResult):
        definer: Operation | None = value.op
        block = value.op.parent_block()
    elif isinstance(value, BlockArgument):
        definer, block = None, value.block
    else:
        return None
    if block is None:
        return None
    enclosing: Operation | None = user  # the user, or the op around it, that sits in `block`
    while enclosing is not None and enclosing.parent_block() is not block:
        enclosing = enclosing.parent_op()
    if enclosing is None:
        region = block.parent_region()
        if region is not None and len(region.blocks) > 1:
            return None  # a branch between blocks: not weir's to decide here (cf is rejected)
        return f"{_name(value, index)} is used outside the region that defines it"
    if definer is None:
        return None
    if definer is enclosing:
        return f"{_name(value, index)} is used by the op that defines it"
    if order.position(definer) > order.position(enclosing):
        return f"{_name(value, index)} is used before its definition"
    return None

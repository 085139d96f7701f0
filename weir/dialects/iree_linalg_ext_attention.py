"""`attention` and `online_attention` (weir.dialects.iree_linalg_ext), apart for size."""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat
from xdsl.utils.exceptions import VerifyException

from weir.dialects.iree_linalg_ext_base import ExtOp
from weir.dialects.linalg_syntax import element_type


class Attention(ExtOp):
    """softmax(scale * Q K^T [+ mask]) V along the key dimension, shapes given by
    `indexing_maps` over (batch..., m, k1, k2, n): Q (m, k1), K (k2, k1), V (k2, n), the scale
    a scalar, an optional mask (m, k2) (i1: false excludes a key; float: added), the output
    (m, n). The region maps each score and yields it back (IREE's score modification)."""

    def check_op(self) -> None:
        self.check_counts((4, 5), (1,))
        if self.indexing_maps is None or len(self.indexing_maps.data) != len(self.inputs) + 1:
            raise VerifyException("attention needs one indexing map per operand")
        if not isinstance(self.inputs[3].type, AnyFloat):
            raise VerifyException(f"the scale must be a float scalar, got {self.inputs[3].type}")
        for i, v in enumerate([*self.inputs[:3], self.outputs[0]]):
            if not isinstance(element_type(v), AnyFloat):
                raise VerifyException(f"operand #{i} {v.type} must have a float element type")
        if not self.region.blocks:
            raise VerifyException("the op needs a region")
        self.check_region([a.type for a in self.region.block.args], None)


    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        """Operand dimensions indexed by one loop of the maps agree with the first of them."""
        assert self.indexing_maps is not None
        first: dict[int, tuple[int, int]] = {}
        pairs: list[tuple[int, int, list[tuple[int, int]]]] = []
        for k, m in enumerate(self.indexing_maps.data):
            for j, e in enumerate(m.data.results):  # type: ignore[attr-defined]
                position = getattr(e, "position", None)
                if position is None:
                    continue
                if position in first:
                    a, i = first[position]
                    pairs.append((a, k, [(i, j)]))
                else:
                    first[position] = (k, j)
        return pairs


class OnlineAttention(Attention):
    """One step of a softmax computed in parts: attention's scores, combined with the running
    (acc, max, sum) its outputs hold into the next ones (acc not yet divided by sum). Maps: Q, K,
    V, scale, [mask], acc (m, n), max and sum (m)."""

    def check_op(self) -> None:
        self.check_counts((4, 5), (3,))
        if self.indexing_maps is None or len(self.indexing_maps.data) != len(self.inputs) + 3:
            raise VerifyException("online_attention needs one indexing map per operand")
        for i, v in enumerate([*self.inputs[:3], *self.outputs]):
            if not isinstance(element_type(v), AnyFloat):
                raise VerifyException(f"operand #{i} {v.type} must have a float element type")
        if not self.region.blocks:
            raise VerifyException("the op needs a region")
        self.check_region([a.type for a in self.region.block.args], None)


# The ops that stay to the end as kernels of their own (the others become these and linalg in
# the input phase): roots of dispatch regions.

"""Writes each scalar arith op that has no kernel scalar op of its own as the simpler arith ops
that compute it, so the targets and the VM meet only ops with one result and one definition
(weir/format/kernel_description.py). It runs after convert-elementwise-to-linalg, when such ops on
tensors have become scalars inside generic bodies; host scalars are rewritten in place alike.

- `addui_extended`: the sum, and its unsigned overflow `sum <u lhs`.
- `mulsi_extended`/`mului_extended`: the low half is `muli`; the high half comes from the
  product in i64 for widths up to 32, and for 64-bit types from four 32x32-bit products (the
  signed one then subtracts `b` when `a < 0` and `a` when `b < 0`, modulo 2^64).
- `scaling_extf`/`scaling_truncf`: the scale is read as an OCP MX scale: the exponent field of
  its f32 value gives the power of two 2^(e-127) (2^-127 for a zero field, NaN for all ones), by
  which `extf(in)` is multiplied or `in` divided before `truncf`.
- `math.fpowi` with a constant exponent n: products by binary exponentiation, as MLIR's own
  expansion computes it (and IREE with it): x**3 is x * (x * x), which torch's cube is too,
  and 1 / that for a negative n, 1 for n = 0. (GPT-2's tanh GELU cubes its input: as powf of
  3.0, an f64 log and exp per element, its prologue took longer than the product it feeds.)
  Any other exponent: `powf` of the exponent converted by `sitofp` (exact up to 2^24 in f32,
  and powf gives a negative base's odd integer powers their sign).
"""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import arith_ext
from weir.ir.op_checks.common import constant_int
from weir.ir.upstream import (
    arith,
    Attribute,
    Builder,
    Float32Type,
    FloatAttr,
    IndexType,
    InsertPoint,
    IntegerAttr,
    IntegerType,
    math,
    ModuleOp,
    Operation,
    SSAValue,
)

_I32, _I64, _F32 = IntegerType(32), IntegerType(64), Float32Type()
_EXPANDED = ("arith.addui_extended", "arith.mulsi_extended", "arith.mului_extended",
             "arith.scaling_extf", "arith.scaling_truncf", "math.fpowi")


class ExpandCompoundArith(Pass):
    flag = "expand-compound-arith"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in [op for op in module.walk() if op.name in _EXPANDED]:
            e = _Emitter(Builder(InsertPoint.before(op)))
            if op.name == "arith.addui_extended":
                results = e.addui_extended(op.operands[0], op.operands[1])
            elif op.name in ("arith.mulsi_extended", "arith.mului_extended"):
                signed = op.name == "arith.mulsi_extended"
                results = e.mul_extended(op.operands[0], op.operands[1], signed)
            elif op.name == "math.fpowi":
                results = [e.fpowi(op.operands[0], op.operands[1])]
            elif op.name == "arith.scaling_extf":
                results = [e.scaling_extf(op.operands[0], op.operands[1], op.results[0].type)]
            else:
                results = [e.scaling_truncf(op.operands[0], op.operands[1], op.results[0].type,
                                            op.properties.get("roundingmode"))]
            for old, new in zip(op.results, results):
                old.replace_all_uses_with(new)
            op.detach()
            op.erase()


class _Emitter:
    def __init__(self, b: Builder) -> None:
        self.b = b
        self.constants: dict[tuple[int, Attribute], SSAValue] = {}

    def _add(self, op: Operation) -> SSAValue:
        return self.b.insert(op).results[0]

    def const(self, value: int, t: Attribute) -> SSAValue:
        if (value, t) not in self.constants:
            self.constants[value, t] = self._add(arith.ConstantOp(IntegerAttr(value, t)))
        return self.constants[value, t]

    def binary(self, cls: type, x: SSAValue, y: SSAValue | int) -> SSAValue:
        rhs = self.const(y, x.type) if isinstance(y, int) else y
        return self._add(cls(x, rhs))

    def cmpi(self, predicate: str, x: SSAValue, y: SSAValue | int) -> SSAValue:
        rhs = self.const(y, x.type) if isinstance(y, int) else y
        return self._add(arith_ext.CmpiOp(x, rhs, predicate))

    def select(self, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._add(arith_ext.SelectOp(cond, x, y))

    # --- extended integer arithmetic ----------------------------------------------------------

    def addui_extended(self, a: SSAValue, b: SSAValue) -> list[SSAValue]:
        total = self.binary(arith.AddiOp, a, b)
        return [total, self.cmpi("ult", total, a)]

    def mul_extended(self, a: SSAValue, b: SSAValue, signed: bool) -> list[SSAValue]:
        low = self.binary(arith.MuliOp, a, b)
        t = a.type
        width = 64 if isinstance(t, IndexType) else t.width.data  # type: ignore[attr-defined]
        if width <= 32:
            ext = arith_ext.ExtSIOp if signed else arith_ext.ExtUIOp
            x, y = self._add(ext(a, _I64)), self._add(ext(b, _I64))
            product = self.binary(arith.MuliOp, x, y)
            high = self._add(arith_ext.TruncIOp(self.binary(arith_ext.ShRUIOp, product, width),
                                                t))
            return [low, high]
        return [low, self._high64(a, b, signed)]

    def _high64(self, a: SSAValue, b: SSAValue, signed: bool) -> SSAValue:
        """The high 64 bits of the 128-bit product, from 32-bit halves (no i128 in weir)."""
        mask = 0xFFFFFFFF

        def halves(v: SSAValue) -> tuple[SSAValue, SSAValue]:
            return self.binary(arith.AndIOp, v, mask), self.binary(arith_ext.ShRUIOp, v, 32)

        (al, ah), (bl, bh) = halves(a), halves(b)
        mul = lambda x, y: self.binary(arith.MuliOp, x, y)  # noqa: E731
        add = lambda x, y: self.binary(arith.AddiOp, x, y)  # noqa: E731
        ll, lh, hl, hh = mul(al, bl), mul(al, bh), mul(ah, bl), mul(ah, bh)
        low_of = lambda v: self.binary(arith.AndIOp, v, mask)  # noqa: E731
        high_of = lambda v: self.binary(arith_ext.ShRUIOp, v, 32)  # noqa: E731
        middle = add(add(high_of(ll), low_of(lh)), low_of(hl))  # < 3 * 2^32: no carry lost
        high = add(add(add(hh, high_of(lh)), high_of(hl)), high_of(middle))
        if not signed:
            return high
        # As signed, a = a_u - 2^64 [a < 0]: the product's high half loses b and a accordingly.
        a_sign = self.binary(arith_ext.ShRSIOp, a, 63)
        b_sign = self.binary(arith_ext.ShRSIOp, b, 63)
        high = self.binary(arith.SubiOp, high, self.binary(arith.AndIOp, a_sign, b))
        return self.binary(arith.SubiOp, high, self.binary(arith.AndIOp, b_sign, a))

    def fpowi(self, x: SSAValue, n: SSAValue) -> SSAValue:
        power = constant_int(n)
        if power is None:
            return self._add(math.PowFOp(x, self._add(arith_ext.SIToFPOp(n, x.type))))
        result: SSAValue | None = None
        base, left = x, abs(power)
        while left:
            if left & 1:
                result = base if result is None else self._add(arith.MulfOp(result, base))
            left >>= 1
            if left:
                base = self._add(arith.MulfOp(base, base))
        if result is not None and power > 0:
            return result
        one = self._add(arith.ConstantOp(FloatAttr(1.0, x.type)))
        return one if result is None else self._add(arith.DivfOp(one, result))

    # --- scaling casts ------------------------------------------------------------------------

    def _float(self, v: SSAValue, t: Attribute) -> SSAValue:
        """`v` converted to the float type `t` (extf, truncf or nothing)."""
        if v.type == t:
            return v
        if t.bitwidth > v.type.bitwidth:  # type: ignore[attr-defined]
            return self._add(arith_ext.ExtFOp(v, t))
        return self._add(arith_ext.TruncFOp(v, t))

    def _power_of_two(self, scale: SSAValue, t: Attribute) -> SSAValue:
        """2^(e-127) for the exponent field e of `scale` as f32, as a value of type `t`."""
        bits = self._add(arith.BitcastOp(self._float(scale, _F32), _I32))
        exponent = self.binary(arith.AndIOp, self.binary(arith_ext.ShRUIOp, bits, 23), 0xFF)
        normal = self.binary(arith.ShLIOp, exponent, 23)
        power = self.select(self.cmpi("eq", exponent, 0), self.const(0x00400000, _I32),
                            self.select(self.cmpi("eq", exponent, 0xFF),
                                        self.const(0x7FC00000, _I32), normal))
        return self._float(self._add(arith.BitcastOp(power, _F32)), t)

    def scaling_extf(self, x: SSAValue, scale: SSAValue, result: Attribute) -> SSAValue:
        widened = self._float(x, result)
        return self.binary(arith.MulfOp, widened, self._power_of_two(scale, result))

    def scaling_truncf(self, x: SSAValue, scale: SSAValue, result: Attribute,
                       rounding: Attribute | None) -> SSAValue:
        quotient = self.binary(arith.DivfOp, x, self._power_of_two(scale, x.type))
        truncated = arith_ext.TruncFOp(quotient, result)
        if rounding is not None:
            truncated.properties["roundingmode"] = rounding
        return self._add(truncated)

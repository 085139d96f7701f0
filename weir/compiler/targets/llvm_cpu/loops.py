"""Counted loops in LLVM IR, written in the form LLVM's loop passes expect (a header with one
induction phi, a latch, an exit), so the vectoriser and LICM see ordinary loops."""

from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

I64 = ir.IntType(64)


def for_range(b: ir.IRBuilder, lo: ir.Value, hi: ir.Value,
              body: Callable[[ir.IRBuilder, ir.Value], None], name: str = "i") -> None:
    """for (i = lo; i < hi; ++i) body(i); leaves `b` after the loop."""
    pre = b.block
    header = b.append_basic_block(f"{name}.header")
    inner = b.append_basic_block(f"{name}.body")
    done = b.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    i = b.phi(I64, name=name)
    i.add_incoming(lo, pre)
    b.cbranch(b.icmp_signed("<", i, hi), inner, done)
    b.position_at_end(inner)
    body(b, i)
    nxt = b.add(i, I64(1), name=f"{name}.next", flags=("nsw",))
    i.add_incoming(nxt, b.block)
    b.branch(header)
    b.position_at_end(done)


def for_nest(b: ir.IRBuilder, bounds: list[tuple[ir.Value, ir.Value]],
             body: Callable[[ir.IRBuilder, list[ir.Value]], None], name: str = "d") -> None:
    """Nested loops, the last bound innermost; no bounds runs `body` once."""
    def level(k: int, outer: list[ir.Value]) -> None:
        if k == len(bounds):
            body(b, outer)
            return
        lo, hi = bounds[k]
        for_range(b, lo, hi, lambda _b, i: level(k + 1, outer + [i]), f"{name}{k}")
    level(0, [])


def while_loop(b: ir.IRBuilder, condition: Callable[[ir.IRBuilder], ir.Value],
               body: Callable[[ir.IRBuilder], None], name: str) -> None:
    """while (condition()) body(); the loop's state lives in allocas (mem2reg makes them
    registers)."""
    header = b.append_basic_block(f"{name}.header")
    inner = b.append_basic_block(f"{name}.body")
    done = b.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    b.cbranch(condition(b), inner, done)
    b.position_at_end(inner)
    body(b)
    b.branch(header)
    b.position_at_end(done)


def smin(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", x, y), x, y)

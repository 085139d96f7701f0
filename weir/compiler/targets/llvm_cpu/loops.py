"""Counted loops in LLVM IR, written in the form LLVM's loop passes expect (a header with one
induction phi, a latch, an exit), so the vectoriser and LICM see ordinary loops.

A loop may be kept rolled (`unroll=False`: `llvm.loop.unroll.disable` on its latch), which
data movement wants: LLVM fully unrolls small static copy nests, and what comes out costs
compile time superlinearly for no gain at run time (16 copies of 8 x 256 floats unrolled into
one block of 3,841 vector stores took codegen 10-18 s to schedule). Rolled, the innermost loop
is still vectorised."""

from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

I64 = ir.IntType(64)


def for_range(b: ir.IRBuilder, lo: ir.Value, hi: ir.Value,
              body: Callable[[ir.IRBuilder, ir.Value], None], name: str = "i",
              unroll: bool = True) -> None:
    """for (i = lo; i < hi; ++i) body(i); leaves `b` after the loop, which LLVM may unroll
    only if `unroll`."""
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
    latch = b.branch(header)
    if not unroll:
        latch.set_metadata("llvm.loop", _rolled(b.module))
    b.position_at_end(done)


def _rolled(module: ir.Module) -> ir.MDValue:
    """A new loop ID (each loop needs its own: its first operand is itself) asking LLVM not to
    unroll the loop."""
    hint = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    # A unique operand keeps the module's metadata cache from handing back another loop's ID;
    # it is then replaced by the self-reference (which llvmlite cannot build directly).
    unique = ir.MetaDataString(module, f"weir.loop.{len(module.metadata)}")
    loop_id = module.add_metadata([hint, unique])
    loop_id.operands = (loop_id, hint)
    return loop_id


def for_nest(b: ir.IRBuilder, bounds: list[tuple[ir.Value, ir.Value]],
             body: Callable[[ir.IRBuilder, list[ir.Value]], None], name: str = "d",
             unroll: bool = True,
             per_run: Callable[[ir.IRBuilder, list[ir.Value]], None] | None = None) -> None:
    """Nested loops, the last bound innermost; no bounds runs `body` once. `unroll` applies to
    every level. `per_run(outer)` runs before each run of the innermost loop, given the
    indices around it (a prefetch of what the runs ahead will write)."""
    def level(k: int, outer: list[ir.Value]) -> None:
        if k == len(bounds):
            body(b, outer)
            return
        if k == len(bounds) - 1 and per_run is not None:
            per_run(b, outer)
        lo, hi = bounds[k]
        for_range(b, lo, hi, lambda _b, i: level(k + 1, outer + [i]), f"{name}{k}", unroll)
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


def smax(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed(">", x, y), x, y)
